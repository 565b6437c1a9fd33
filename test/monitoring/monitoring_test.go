/*
Copyright 2026 The video-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package monitoring checks the alerts and the dashboard in config/monitoring against the metrics
// the manager really exposes: it runs the manager binary against envtest and the service
// simulator, scrapes its /metrics while videos are made (job reads answered 429 or 500 at times,
// one tenant with a rejected key, one failed job), then parses every PromQL expression, checks that each metric and label it
// selects exists in the scrape, and evaluates it with the Prometheus engine on the scraped
// series. A renamed metric or label fails here.
//
// It is a module of its own so that the Prometheus server module, needed only for its PromQL
// engine, does not move the manager's dependencies (go.mod of the repository root).
package monitoring

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/admissionpolicy"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/simulator"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"
)

var root = filepath.Join("..", "..")

const goodKey, badKey = "monitoring-key-123", "a-key-the-service-refuses"

// expression is one PromQL expression of the monitoring files.
type expression struct {
	source string // "alert X" or "panel Y"
	expr   string
}

// rule is the part of a PrometheusRule rule the test reads.
type rule struct {
	Alert string `json:"alert"`
	Expr  string `json:"expr"`
}

func loadRules(t *testing.T) []rule {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "config", "monitoring", "prometheus-rule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var pr struct {
		Spec struct {
			Groups []struct {
				Rules []rule `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &pr); err != nil {
		t.Fatal(err)
	}
	var rules []rule
	for _, g := range pr.Spec.Groups {
		rules = append(rules, g.Rules...)
	}
	if len(rules) == 0 {
		t.Fatal("prometheus-rule.yaml has no rules")
	}
	return rules
}

// grafanaVariables replaces the dashboard's Grafana variables with what Grafana would send.
// $namespace and $kind get Grafana's "All" value.
var grafanaVariables = strings.NewReplacer("$__rate_interval", "1m", "$__interval", "15s", "$__range", "1h",
	"$namespace", ".*", "$kind", ".*")

func loadDashboard(t *testing.T) []expression {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "config", "monitoring", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatal(err)
	}
	var out []expression
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if strings.Contains(grafanaVariables.Replace(tg.Expr), "$") {
				t.Errorf("panel %q uses a variable the test does not know: %s", p.Title, tg.Expr)
			}
			out = append(out, expression{source: "panel " + p.Title, expr: grafanaVariables.Replace(tg.Expr)})
		}
	}
	return out
}

// running is the manager at work: envtest, the simulator, the manager process and its scrapes.
type running struct {
	k8s         client.Client
	scrapes     *scrapes
	callbackURL string // the manager's callback server
	managerBin  string // the manager binary, for runs with other flags
	kubeconfig  string
	serviceURL  string // the simulator's base URL
	metricsURL  string // the scenario's manager's /metrics
	stopManager func() // stops the scenario's manager and waits for it to exit
}

// streamRenders is how many healthy renders the scenario submits one after the other, and
// submitLatency how long the service takes to accept each paid submission.
const (
	streamRenders = 6
	submitLatency = 1500 * time.Millisecond
	// serverErrorsFirst is how many of the first job reads get a 500 (VideoOperatorServiceErrors).
	serverErrorsFirst = 5
	// rateLimitedNext is how many job reads after those get a 429 (VideoOperatorServiceRateLimited).
	rateLimitedNext = 5
)

// TestAlertsAndDashboardAgainstTheManager is the whole check; see the package comment.
func TestAlertsAndDashboardAgainstTheManager(t *testing.T) {
	rules := loadRules(t)
	panels := loadDashboard(t)
	r := runManager(t)

	all := slices.Clone(panels)
	for _, rl := range rules {
		all = append(all, expression{source: "alert " + rl.Alert, expr: rl.Expr})
	}
	names := r.scrapes.names()
	p := parser.NewParser(parser.Options{})
	for _, e := range all {
		expr, err := p.ParseExpr(e.expr)
		if err != nil {
			t.Errorf("%s: %v\n%s", e.source, err, e.expr)
			continue
		}
		checkSelectors(t, e, expr, names)
	}

	results := evaluate(t, r.scrapes, all)
	for _, e := range panels {
		if results[e.source+e.expr] == 0 {
			t.Errorf("%s shows nothing for a manager that made videos:\n%s", e.source, e.expr)
		}
	}
	// The scenario: one tenant's key is refused, another has no Secret, a render has awaited
	// approval for two days (another for seconds), one job fails (stalled), 429s and 5xx are
	// injected on job reads, the manager leads, polling runs, a crash left a preview's submission
	// unknown two hours ago, most callbacks are refused by the rate limit, and most callbacks
	// that arrive carry no valid signature.
	fires := map[string]bool{
		"VideoOperatorNoLeader":             false,
		"VideoOperatorAbsent":               false,
		"VideoOperatorObjectsStalled":       true,
		"VideoOperatorSubmissionStuck":      true,
		"VideoOperatorSubmissionUnknown":    true,
		"VideoOperatorCallbacksRateLimited": true,
		"VideoOperatorCallbacksUnsigned":    true,
		"VideoOperatorAPIKeyRejected":       true,
		"VideoOperatorServiceRateLimited":   true,
		"VideoOperatorServiceErrors":        true,
		"VideoOperatorPollLag":              false,
		"VideoOperatorPollingStopped":       false,
		"VideoOperatorBudgetNearLimit":      true,
		"VideoOperatorBudgetExhausted":      true,
		// Every budget's ledger is writable in this scenario: the alert's metric is exported
		// (0) for each, and the spend guard's own tests show the condition it follows.
		"VideoOperatorBudgetLedgerUnavailable": false,
		// The policies are installed (config/policies): the metric is exported (0) for each;
		// internal/admissionpolicy's tests show when it is 1.
		"VideoOperatorAdmissionPolicyMissing": false,
		"VideoOperatorAPIKeyUnusable":         true,
		"VideoOperatorRenderBlocked":          false,
		"VideoOperatorApprovalOverdue":        true,
	}
	for _, rl := range rules {
		want, ok := fires[rl.Alert]
		if !ok {
			t.Errorf("alert %s has no expectation in this test: add it to the scenario", rl.Alert)
			continue
		}
		if got := results["alert "+rl.Alert+rl.Expr] > 0; got != want {
			t.Errorf("alert %s fires = %v, want %v in this scenario:\n%s", rl.Alert, got, want, rl.Expr)
		}
		delete(fires, rl.Alert)
	}
	for alert := range fires {
		t.Errorf("alert %s is expected but not in prometheus-rule.yaml", alert)
	}
	t.Run("SubmissionStuck", func(t *testing.T) { checkSubmissionStuck(t, rules, r) })
	// Who each alert names, so that it reaches the right tenant: team-a's failed render and
	// stuck preview (phase Failed, SubmissionUnknown), team-a's renders at 10 of 12 (team-a's previews, at 2 of 100, and team-c's spent
	// previews are not "near"), team-c's previews at 1 of 1.
	t.Run("Tenants", func(t *testing.T) {
		for alert, want := range map[string][]string{
			"VideoOperatorObjectsStalled":  {"kind=VideoRender namespace=team-a", "kind=VideoStoryboard namespace=team-a"},
			"VideoOperatorBudgetNearLimit": {"limit=maxRenders namespace=team-a"},
			"VideoOperatorBudgetExhausted": {"limit=maxPreviews namespace=team-c"},
			// team-b's key is refused, team-d has no Secret; team-a's and team-c's keys work.
			"VideoOperatorAPIKeyUnusable": {"kind=VideoRender namespace=team-b reason=Unauthorized",
				"kind=VideoRender namespace=team-d reason=SecretNotFound"},
			// team-a's render has awaited approval for two days; team-e's preview just completed.
			"VideoOperatorApprovalOverdue": {"namespace=team-a"},
		} {
			if got := firedFor(t, rules, r.scrapes, alert); !slices.Equal(got, want) {
				t.Errorf("%s fires for %v, want %v", alert, got, want)
			}
		}
	})
	t.Run("DashboardVariables", func(t *testing.T) { checkDashboardVariables(t, r.scrapes) })
	t.Run("NoLeader", func(t *testing.T) { checkNoLeader(t, rules, r) })
	t.Run("Absent", func(t *testing.T) { checkAbsent(t, rules, r) })
}

// firedFor evaluates an alert at the last scrape and returns the label sets it fires for, each
// as sorted "name=value" pairs.
func firedFor(t *testing.T, rules []rule, s *scrapes, alert string) []string {
	t.Helper()
	var out []string
	for _, rl := range rules {
		if rl.Alert != alert {
			continue
		}
		for _, smp := range evaluateAt(t, s, rl.Expr, s.last) {
			var pairs []string
			smp.Metric.Range(func(l labels.Label) { pairs = append(pairs, l.Name+"="+l.Value) })
			out = append(out, strings.Join(pairs, " "))
		}
		slices.Sort(out)
		return out
	}
	t.Fatalf("prometheus-rule.yaml has no alert %s", alert)
	return nil
}

// checkSubmissionStuck checks the alert on the age of the oldest submission without a job id at
// every scrape of the scenario: the preview whose submission a crash left two hours ago fires
// it, and the steady stream of healthy renders, seen in flight by the scrapes, never does.
func checkSubmissionStuck(t *testing.T, rules []rule, r *running) {
	var stuck rule
	for _, rl := range rules {
		if rl.Alert == "VideoOperatorSubmissionStuck" {
			stuck = rl
		}
	}
	if stuck.Expr == "" {
		t.Fatal("prometheus-rule.yaml has no VideoOperatorSubmissionStuck alert")
	}
	const gauge = `video_operator_oldest_submission_start_timestamp_seconds{kind="VideoRender"}`
	renderInFlight := 0
	for _, ts := range r.scrapes.times {
		if len(evaluateAt(t, r.scrapes, gauge, ts)) > 0 {
			renderInFlight++
		}
		for _, smp := range evaluateAt(t, r.scrapes, stuck.Expr, ts) {
			if kind := smp.Metric.Get("kind"); kind != "VideoStoryboard" {
				t.Errorf("at %s the alert fires for %s, whose submissions are all healthy: %v", ts.Format(time.TimeOnly), kind, smp)
			}
		}
	}
	if renderInFlight == 0 {
		t.Errorf("no scrape saw a healthy render's submission in flight: the stream tests nothing")
	}
	fired := evaluateAt(t, r.scrapes, stuck.Expr, r.scrapes.last)
	if len(fired) != 1 || fired[0].Metric.Get("kind") != "VideoStoryboard" {
		t.Errorf("want the alert firing for the stuck VideoStoryboard at the end, got %v", fired)
	}
}

// evaluateAt runs one expression at time ts on the scrapes.
func evaluateAt(t *testing.T, s *scrapes, expr string, ts time.Time) promql.Vector {
	t.Helper()
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 1_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	q, err := engine.NewInstantQuery(t.Context(), s.queryable(), nil, expr, ts)
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	defer q.Close()
	res := q.Exec(t.Context())
	if res.Err != nil {
		t.Fatalf("evaluating %s: %v", expr, res.Err)
	}
	v, err := res.Vector()
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// checkSelectors checks that every metric an expression selects is in the scrape, with every
// label the expression matches on or groups by.
func checkSelectors(t *testing.T, e expression, expr parser.Expr, names map[string][]string) {
	t.Helper()
	parser.Inspect(expr, func(node parser.Node, path []parser.Node) error {
		vs, ok := node.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		if vs.Name == "" {
			t.Errorf("%s: selector %s has no metric name", e.source, vs)
			return nil
		}
		have, ok := names[vs.Name]
		if !ok {
			t.Errorf("%s: metric %s is not exposed by the manager", e.source, vs.Name)
			return nil
		}
		for _, m := range vs.LabelMatchers {
			if m.Name != model.MetricNameLabel && !slices.Contains(have, m.Name) {
				t.Errorf("%s: metric %s has no label %q (it has %v)", e.source, vs.Name, m.Name, have)
			}
		}
		// Labels grouped by around this selector must exist on it too (le on _bucket series).
		for _, n := range path {
			if agg, ok := n.(*parser.AggregateExpr); ok && !agg.Without {
				for _, g := range agg.Grouping {
					if !slices.Contains(have, g) && !producedByFunction(g) {
						t.Errorf("%s: %s groups by %q, which %s does not carry (it has %v)", e.source, agg.Op, g, vs.Name, have)
					}
				}
			}
		}
		return nil
	})
}

// producedByFunction is a label no selector carries but a function adds; none is used today.
func producedByFunction(string) bool { return false }

// evaluate runs every expression at the time of the last scrape and returns the number of
// series each returned, keyed by source and expression.
func evaluate(t *testing.T, s *scrapes, exprs []expression) map[string]int {
	t.Helper()
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 1_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	out := map[string]int{}
	for _, e := range exprs {
		q, err := engine.NewInstantQuery(t.Context(), s.queryable(), nil, e.expr, s.last)
		if err != nil {
			t.Errorf("%s: %v", e.source, err)
			continue
		}
		res := q.Exec(t.Context())
		if res.Err != nil {
			t.Errorf("%s: evaluating: %v\n%s", e.source, res.Err, e.expr)
			continue
		}
		switch v := res.Value.(type) {
		case promql.Vector:
			out[e.source+e.expr] = len(v)
			t.Logf("%s = %v", e.source, v)
		case promql.Scalar:
			out[e.source+e.expr] = 1
		default:
			t.Errorf("%s: a %s, want an instant vector", e.source, res.Value.Type())
		}
		q.Close()
	}
	return out
}

// runManager starts envtest, the simulator and the manager binary, makes videos in two tenants
// (one with a key the service refuses) while some job reads are answered 429 or 500, and scrapes the
// manager's /metrics every half second until the videos are done.
func runManager(t *testing.T) *running {
	t.Helper()
	// -short is the quick run that needs no API server, as in the main module (testutil.APIServer).
	if testing.Short() {
		t.Skip("starts a kube-apiserver and etcd (envtest): skipped under -short; make test runs it")
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run the tests through 'make test'")
	}
	dir := t.TempDir()
	managerBin := filepath.Join(dir, "manager")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", managerBin, "./cmd/manager")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the manager: %v\n%s", err, out)
	}

	env := &envtest.Environment{CRDDirectoryPaths: []string{filepath.Join(root, "config", "crd", "bases")}, ErrorIfCRDPathMissing: true}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	if err := admissionpolicy.Install(t.Context(), cfg, filepath.Join(root, "config", "policies")); err != nil {
		t.Fatalf("installing the admission policies: %v", err)
	}
	user, err := env.AddUser(envtest.User{Name: "video-operator", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := videov1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	k8s, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}

	// A fixed seed fixes which calls get a fault: a 429 pauses the whole key, so the scenario makes
	// few reads, and a random draw could leave it without a 5xx for the alert that expects one.
	sim := simulator.New(simulator.Options{APIKeys: []string{goodKey}, TimeScale: 0.005, Seed: 7,
		Faults: simulator.Faults{RateLimitShare: 0.25, ServerErrorShare: 0.25, RetryAfter: time.Second,
			// Faults on job reads only: a 5xx on a paid call would leave its outcome unknown.
			Endpoints: []string{apiclient.EndpointGetJob}}})
	// Each paid submission takes a while, as on the real service, so that the scrapes see healthy
	// submissions in flight (the stuck-submission alert must not fire on them). The first job
	// reads get the service's documented 500, and the next ones a 429, whatever the seed draws:
	// the order of the calls follows the manager's timing (a guarded render pays after its
	// gather window), and the seed alone once left 2 answers of 43 a 5xx (under the error
	// alert's 5%), and once 5 of 53 a 429 (under the rate-limit alert's 10%).
	var jobReads atomic.Int32
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost {
			time.Sleep(submitLatency)
		}
		if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/v1/jobs/") {
			switch n := jobReads.Add(1); {
			case n <= serverErrorsFirst:
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write([]byte(`{"error": {"code": "INTERNAL_ERROR", "message": "injected by the scenario"}}`))
				return
			case n <= serverErrorsFirst+rateLimitedNext:
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = w.Write([]byte(`{"success": false, "message": "Too many requests"}`))
				return
			}
		}
		sim.ServeHTTP(w, req)
	}))
	t.Cleanup(svc.Close)
	t.Cleanup(sim.Close)

	r := &running{k8s: k8s, scrapes: newScrapes(), managerBin: managerBin, kubeconfig: kubeconfig, serviceURL: svc.URL + "/serviceapis"}
	for ns, key := range map[string]string{"team-a": goodKey, "team-b": badKey, "team-c": goodKey, "team-d": "", "team-e": goodKey} {
		create(t, k8s, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		if key == "" {
			continue // team-d has no Secret: its render stalls with SecretNotFound
		}
		create(t, k8s, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: videov1alpha1.DefaultAPIKeySecretName},
			StringData: map[string]string{videov1alpha1.DefaultAPIKeySecretKey: key}})
	}
	// A submission a crash interrupted two hours ago, before the manager starts: the record of
	// the call is there, its job id is not. The manager stalls it with SubmissionUnknown.
	stuck := &videov1alpha1.VideoStoryboard{}
	createYAML(t, k8s, stuck, "team-a", `
metadata: {name: stuck-preview}
spec:
  videoName: Stuck preview
  scenes:
    - story: A preview whose submission a crash interrupted.
`)
	// Budgets: team-a's renders (streamRenders+4 of them, each counted when submitted) come near
	// its maxRenders, its previews do not; team-c's one preview spends its maxPreviews.
	createYAML(t, k8s, &videov1alpha1.VideoBudget{}, "team-a", fmt.Sprintf(`
metadata: {name: default}
spec: {maxRenders: %d, maxPreviews: 100}
`, streamRenders+6))
	createYAML(t, k8s, &videov1alpha1.VideoBudget{}, "team-c", `
metadata: {name: default}
spec: {maxPreviews: 1}
`)
	// A render that has waited two days for a person to approve its preview (AwaitingApproval
	// since then): a review nobody does. Its status is what the manager wrote before a restart;
	// the preview it names completes again under this manager, and nobody approves it.
	createYAML(t, k8s, &videov1alpha1.VideoStoryboard{}, "team-a", `
metadata: {name: unreviewed-preview}
spec:
  videoName: Unreviewed preview
  scenes:
    - story: A preview nobody reviews.
`)
	unreviewed := &videov1alpha1.VideoRender{}
	createYAML(t, k8s, unreviewed, "team-a", `
metadata: {name: unreviewed}
spec:
  storyboardRef: {name: unreviewed-preview}
`)
	unreviewed.Status.Phase = videov1alpha1.PhasePending
	twoDaysAgo := metav1.NewTime(time.Now().Add(-48 * time.Hour).Truncate(time.Second))
	unreviewed.Status.Conditions = []metav1.Condition{
		{Type: string(videov1alpha1.ConditionReady), Status: metav1.ConditionFalse, Reason: string(videov1alpha1.ReasonAwaitingApproval), Message: "Awaiting approval", LastTransitionTime: twoDaysAgo},
		{Type: string(videov1alpha1.ConditionReconciling), Status: metav1.ConditionTrue, Reason: string(videov1alpha1.ReasonAwaitingApproval), Message: "Awaiting approval", LastTransitionTime: twoDaysAgo},
		{Type: string(videov1alpha1.ConditionStalled), Status: metav1.ConditionFalse, Reason: string(videov1alpha1.ReasonAwaitingApproval), LastTransitionTime: twoDaysAgo},
	}
	if err := k8s.Status().Update(t.Context(), unreviewed); err != nil {
		t.Fatalf("writing the unreviewed render's status: %v", err)
	}
	stuck.Status.Phase = videov1alpha1.PhaseSubmitting
	stuck.Status.Submission = &videov1alpha1.Submission{Generation: stuck.Generation, AttemptID: "crashed-attempt",
		StartedAt: metav1.NewTime(time.Now().Add(-2 * time.Hour))}
	if err := k8s.Status().Update(t.Context(), stuck); err != nil {
		t.Fatalf("writing the crashed submission's record: %v", err)
	}

	callbackAddr := freeAddr(t)
	callbackKey := filepath.Join(dir, "callback-key")
	if err := os.WriteFile(callbackKey, []byte(strings.Repeat("monitoring-callback-key-", 2)), 0o600); err != nil {
		t.Fatal(err)
	}
	r.callbackURL = "http://" + callbackAddr

	metricsURL, stopManager := startManager(t, managerBin, "manager",
		"--kubeconfig="+kubeconfig,
		"--service-base-url="+r.serviceURL,
		"--leader-elect", "--leader-election-namespace=default",
		"--poll-min=100ms", "--poll-max=300ms",
		"--retry-backoff-base=100ms", "--retry-backoff-max=1s",
		"--service-rate-limit=500", "--service-burst=500",
		// Callbacks on, with a limit so low that most of the service's callbacks are refused
		// (rate_limited) and their jobs are read at the fallback poll.
		"--callback-bind-address="+callbackAddr, "--callback-public-url="+r.callbackURL,
		"--callback-key-file="+callbackKey, "--callback-rate-limit=0.01", "--callback-poll-interval=300ms")
	r.metricsURL, r.stopManager = metricsURL, stopManager

	// A first scrape before any object exists: every counter starts at 0, so rate() sees every
	// answer of the scenario, the first job reads (which the seed answers with faults) included.
	// Taken after the objects, it missed them whenever the manager read the jobs first.
	firstDeadline := time.Now().Add(45 * time.Second)
	for r.scrapes.scrape(t.Context(), metricsURL) != nil {
		if time.Now().After(firstDeadline) {
			t.Fatal("the manager's metrics never answered before the scenario")
		}
		time.Sleep(200 * time.Millisecond)
	}

	for i := range 3 {
		createYAML(t, k8s, &videov1alpha1.VideoRender{}, "team-a", fmt.Sprintf(`
metadata: {name: render-%d}
spec:
  storyboard:
    videoName: Render %d
    scenes:
      - story: A video made while its metrics are scraped.
        background:
          type: image
          aiVisual: {model: flux-schnell, prompt: A lighthouse at dawn}
`, i, i))
	}
	createYAML(t, k8s, &videov1alpha1.VideoStoryboard{}, "team-c", `
metadata: {name: the-only-preview}
spec:
  videoName: The only preview
  scenes:
    - story: The one preview team-c's budget allows this period.
`)
	createYAML(t, k8s, &videov1alpha1.VideoStoryboard{}, "team-a", `
metadata: {name: preview}
spec:
  videoName: Preview
  scenes:
    - story: A preview made while its metrics are scraped.
`)
	// An unknown voice makes the service fail the job: an object Failed, for the stalled alert.
	createYAML(t, k8s, &videov1alpha1.VideoRender{}, "team-a", `
metadata: {name: unknown-voice}
spec:
  storyboard:
    videoName: Unknown voice
    voiceOver:
      enabled: true
      aiVoices:
        - speaker: NoSuchVoice
    scenes:
      - story: The service does not know this voice and fails the job.
`)
	createYAML(t, k8s, &videov1alpha1.VideoRender{}, "team-b", `
metadata: {name: refused-key}
spec:
  storyboard:
    videoName: Refused key
    scenes:
      - story: The service refuses this tenant's key.
`)

	// No Secret in team-d: the render stalls before anything is paid (SecretNotFound) and stays
	// Pending, which only the stalled gauge shows.
	createYAML(t, k8s, &videov1alpha1.VideoRender{}, "team-d", `
metadata: {name: no-secret}
spec:
  storyboard:
    videoName: No secret
    scenes:
      - story: This tenant has not created its API key Secret yet.
`)
	// team-e's render awaits the approval of a preview that just completed: a review that may
	// still be done, which must not page.
	createYAML(t, k8s, &videov1alpha1.VideoStoryboard{}, "team-e", `
metadata: {name: fresh-preview}
spec:
  videoName: Fresh preview
  scenes:
    - story: A preview its reviewer has not seen yet.
`)
	createYAML(t, k8s, &videov1alpha1.VideoRender{}, "team-e", `
metadata: {name: fresh-review}
spec:
  storyboardRef: {name: fresh-preview}
`)

	deadline := time.Now().Add(45 * time.Second)
	for i := 0; ; i++ {
		if err := r.scrapes.scrape(t.Context(), metricsURL); err != nil && time.Now().After(deadline) {
			t.Fatalf("the manager's metrics never answered: %v", err)
		}
		if i < streamRenders {
			// A steady stream of healthy submissions, one per scrape.
			createYAML(t, k8s, &videov1alpha1.VideoRender{}, "team-a", fmt.Sprintf(`
metadata: {name: stream-%d}
spec:
  storyboard:
    videoName: Stream %d
    scenes:
      - story: One of a steady stream of healthy submissions.
`, i, i))
		}
		if i == 1 {
			// Callbacks that are not the service's, more than the service's own: no valid
			// signature (as when the key changed or a proxy rewrote the path). The manager binds
			// the callback port before it starts the metrics server, so no wait is needed.
			for range 40 {
				postCallback(t, r.callbackURL+"/callbacks/not-a-signed-token")
			}
		}
		if done(t, k8s) && len(r.scrapes.series) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the videos did not reach their final phase within 45 s: %s", phases(t, k8s))
		}
		time.Sleep(500 * time.Millisecond)
	}
	// Two more scrapes, so that rates over the last seconds have samples after the end.
	for range 2 {
		time.Sleep(500 * time.Millisecond)
		if err := r.scrapes.scrape(t.Context(), metricsURL); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// startManager runs the manager binary with args (and a metrics server on a free port, probes
// off) until the test ends, and returns its metrics URL. Its log is shown when the test fails.
func startManager(t *testing.T, bin, name string, args ...string) (string, func()) {
	t.Helper()
	metricsAddr := freeAddr(t)
	logPath := filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append([]string{
		"--metrics-bind-address=" + metricsAddr, "--metrics-secure=false", "--health-probe-bind-address=0"}, args...)...)
	// The manager's own namespace, as the Deployment's downward API gives it: its budget ledgers
	// and its fingerprint Secret live there.
	cmd.Env = append(os.Environ(), "POD_NAMESPACE=default")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(func() {
		stop()
		_ = logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("%s log (last 4000 bytes):\n%s", name, tail(b, 4000))
			}
		}
	})
	return "http://" + metricsAddr + "/metrics", stop
}

// done says whether team-a's videos completed (the one with an unknown voice failed) and
// team-b's render stalled on its key.
func done(t *testing.T, k8s client.Client) bool {
	t.Helper()
	var renders videov1alpha1.VideoRenderList
	var boards videov1alpha1.VideoStoryboardList
	if err := k8s.List(t.Context(), &renders); err != nil {
		t.Fatal(err)
	}
	if err := k8s.List(t.Context(), &boards); err != nil {
		t.Fatal(err)
	}
	for _, vr := range renders.Items {
		switch vr.Name {
		case "unknown-voice":
			if vr.Status.Phase != videov1alpha1.PhaseFailed {
				return false
			}
		case "refused-key", "no-secret":
			// A rejected key or a missing Secret stalls the object before any job: it stays
			// Pending, Stalled.
			if !meta.IsStatusConditionTrue(vr.Status.Conditions, string(videov1alpha1.ConditionStalled)) {
				return false
			}
		case "unreviewed", "fresh-review":
			c := meta.FindStatusCondition(vr.Status.Conditions, string(videov1alpha1.ConditionReconciling))
			if c == nil || c.Status != metav1.ConditionTrue || c.Reason != string(videov1alpha1.ReasonAwaitingApproval) {
				return false
			}
		default:
			if vr.Status.Phase != videov1alpha1.PhaseCompleted {
				return false
			}
		}
	}
	for _, sb := range boards.Items {
		if sb.Name == "stuck-preview" {
			c := meta.FindStatusCondition(sb.Status.Conditions, string(videov1alpha1.ConditionStalled))
			if c == nil || c.Status != metav1.ConditionTrue || c.Reason != string(videov1alpha1.ReasonSubmissionUnknown) {
				return false
			}
			continue
		}
		if sb.Status.Phase != videov1alpha1.PhaseCompleted {
			return false
		}
	}
	return len(renders.Items) == 8+streamRenders && len(boards.Items) == 5
}

// postCallback sends a job result to the manager's callback server and expects it refused.
func postCallback(t *testing.T, url string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`{"job_id":"j"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("posting a callback: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode < 400 {
		t.Fatalf("a callback without a valid signature was answered %s", resp.Status)
	}
}

// phases lists each object's phase and Ready reason, for a failure message.
func phases(t *testing.T, k8s client.Client) string {
	t.Helper()
	var out []string
	var renders videov1alpha1.VideoRenderList
	var boards videov1alpha1.VideoStoryboardList
	if err := k8s.List(t.Context(), &renders); err != nil {
		t.Fatal(err)
	}
	if err := k8s.List(t.Context(), &boards); err != nil {
		t.Fatal(err)
	}
	for _, vr := range renders.Items {
		out = append(out, fmt.Sprintf("%s/%s %s %v", vr.Namespace, vr.Name, vr.Status.Phase, vr.Status.Conditions))
	}
	for _, sb := range boards.Items {
		out = append(out, fmt.Sprintf("%s/%s %s %v", sb.Namespace, sb.Name, sb.Status.Phase, sb.Status.Conditions))
	}
	return strings.Join(out, "\n")
}

func create(t *testing.T, k8s client.Client, obj client.Object) {
	t.Helper()
	if err := k8s.Create(t.Context(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func createYAML(t *testing.T, k8s client.Client, obj client.Object, ns, doc string) {
	t.Helper()
	if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
		t.Fatal(err)
	}
	obj.SetNamespace(ns)
	create(t, client.WithFieldValidation(k8s, metav1.FieldValidationStrict), obj)
}

// freeAddr returns a loopback address with a port free at the time of the call.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
