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

package monitoring

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// runbookURL is the stable form of every alert's runbook_url: the runbook file on the main
// branch, and a section named after the alert.
const runbookURL = "https://github.com/videoops/video-operator/blob/main/docs/runbooks.md#"

// TestEveryAlertHasARunbook checks that each alert's runbook_url points at a section of
// docs/runbooks.md that exists, and that the section says what to do (it has the four parts).
func TestEveryAlertHasARunbook(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "config", "monitoring", "prometheus-rule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var pr struct {
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert       string            `json:"alert"`
					Annotations map[string]string `json:"annotations"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &pr); err != nil {
		t.Fatal(err)
	}
	sections := runbookSections(t)
	n := 0
	for _, g := range pr.Spec.Groups {
		for _, rl := range g.Rules {
			if rl.Alert == "" {
				continue
			}
			n++
			url := rl.Annotations["runbook_url"]
			anchor, ok := strings.CutPrefix(url, runbookURL)
			if !ok {
				t.Errorf("alert %s: runbook_url %q does not start with %s", rl.Alert, url, runbookURL)
				continue
			}
			if anchor != strings.ToLower(rl.Alert) {
				t.Errorf("alert %s: runbook_url points at #%s, want the section named after the alert (#%s)", rl.Alert, anchor, strings.ToLower(rl.Alert))
			}
			body, ok := sections[anchor]
			if !ok {
				t.Errorf("alert %s: docs/runbooks.md has no section #%s", rl.Alert, anchor)
				continue
			}
			for _, part := range []string{"**Meaning.**", "**Impact.**", "**Diagnosis.**", "**Remedy.**"} {
				if !strings.Contains(body, part) {
					t.Errorf("alert %s: its runbook section has no %s", rl.Alert, part)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("prometheus-rule.yaml has no alerts")
	}
	// The remedy of an unknown submission is kubectl video confirm-resubmit; there is no job-id
	// annotation to set (an earlier description said so).
	for _, alert := range []string{"VideoOperatorSubmissionStuck", "VideoOperatorSubmissionUnknown"} {
		if !strings.Contains(sections[strings.ToLower(alert)], "kubectl video confirm-resubmit -n NS vr/NAME") {
			t.Errorf("the runbook of %s does not give the confirm-resubmit command", alert)
		}
	}
	if strings.Contains(string(data), "job-id annotation") {
		t.Error("prometheus-rule.yaml still tells the reader to set a job-id annotation, which does not exist")
	}
	if strings.Count(string(data), "kubectl video confirm-resubmit") < 2 {
		t.Error("the SubmissionStuck and SubmissionUnknown descriptions must name kubectl video confirm-resubmit")
	}
}

// runbookSections returns the text of each "## " section of docs/runbooks.md by its GitHub
// anchor (the heading in lower case, spaces as dashes, other punctuation dropped).
func runbookSections(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "docs", "runbooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	drop := regexp.MustCompile(`[^a-z0-9 _-]`)
	out := map[string]string{}
	cur := ""
	for _, line := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			cur = strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), ""), " ", "-")
			out[cur] = ""
			continue
		}
		if cur != "" {
			out[cur] += line + "\n"
		}
	}
	return out
}

// checkDashboardVariables checks that the dashboard offers the datasource, namespace and kind
// variables, that every panel reads the chosen datasource, and that choosing a namespace or a
// kind narrows the panels that use it.
func checkDashboardVariables(t *testing.T, s *scrapes) {
	data, err := os.ReadFile(filepath.Join(root, "config", "monitoring", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Templating struct {
			List []struct {
				Name string `json:"name"`
				Type string `json:"type"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Title      string `json:"title"`
			Datasource struct {
				UID string `json:"uid"`
			} `json:"datasource"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, v := range dash.Templating.List {
		vars[v.Name] = v.Type
	}
	for _, name := range []string{"datasource", "namespace", "kind"} {
		if _, ok := vars[name]; !ok {
			t.Errorf("the dashboard has no %q variable", name)
		}
	}
	used := map[string]int{}
	for _, p := range dash.Panels {
		if p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q does not read the chosen datasource (uid %q)", p.Title, p.Datasource.UID)
		}
		for _, tg := range p.Targets {
			for name := range vars {
				if strings.Contains(tg.Expr, "$"+name) {
					used[name]++
				}
			}
		}
	}
	for name, typ := range vars {
		if typ != "datasource" && used[name] == 0 {
			t.Errorf("no panel uses the variable $%s", name)
		}
	}

	// A namespace or kind that has nothing empties every panel that uses it; team-c (one
	// preview, completed) shows only that preview in "Objects by phase".
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, v := range []struct{ name, value string }{{"namespace", "no-such-namespace"}, {"kind", "NoSuchKind"}} {
				if !strings.Contains(tg.Expr, "$"+v.name) {
					continue
				}
				expr := grafanaVariables.Replace(strings.ReplaceAll(tg.Expr, "$"+v.name, v.value))
				if got := evaluateAt(t, s, expr, s.last); len(got) != 0 {
					t.Errorf("panel %q with %s=%s still shows %v", p.Title, v.name, v.value, got)
				}
			}
			if p.Title == "Objects by phase" {
				expr := grafanaVariables.Replace(strings.ReplaceAll(tg.Expr, "$namespace", "team-c"))
				var shown []string
				for _, smp := range evaluateAt(t, s, expr, s.last) {
					if smp.F != 0 { // a phase that had objects before shows 0
						shown = append(shown, fmt.Sprintf("%s %s %v", smp.Metric.Get("kind"), smp.Metric.Get("phase"), smp.F))
					}
				}
				if want := []string{"VideoStoryboard Completed 1"}; !slices.Equal(shown, want) {
					t.Errorf("Objects by phase for namespace team-c = %v, want %v (its one preview)", shown, want)
				}
			}
		}
	}
}

// checkNoLeader runs the manager twice more beside the scenario's leader: once without leader
// election (Helm leaderElection.enabled=false), which must never page, and once as a standby
// that cannot get its lease (held by another replica), which must. The scenario's leader does
// not fire it either (the table in TestAlertsAndDashboardAgainstTheManager).
func checkNoLeader(t *testing.T, rules []rule, r *running) {
	var expr string
	for _, rl := range rules {
		if rl.Alert == "VideoOperatorNoLeader" {
			expr = rl.Expr
		}
	}
	if expr == "" {
		t.Fatal("prometheus-rule.yaml has no VideoOperatorNoLeader alert")
	}
	const lease = "video-operator.video.videoops.io"
	for _, ns := range []string{"le-off", "le-held"} {
		create(t, r.k8s, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	}
	now := metav1.NewMicroTime(time.Now())
	create(t, r.k8s, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "le-held", Name: lease},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("another-replica"), LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime: &now, RenewTime: &now}})

	common := []string{"--kubeconfig=" + r.kubeconfig, "--service-base-url=" + r.serviceURL}
	off, _ := startManager(t, r.managerBin, "manager-without-leader-election", append(common, "--watch-namespaces=le-off")...)
	standby, _ := startManager(t, r.managerBin, "manager-standby",
		append(common, "--watch-namespaces=le-held", "--leader-elect", "--leader-election-namespace=le-held")...)

	offScrapes := scrapeUntil(t, off, "video_operator_leader_election_enabled")
	if _, ok := offScrapes.names()["leader_election_master_status"]; ok {
		t.Error("a manager without leader election exposes leader_election_master_status: the case tests nothing")
	}
	if got := evaluateAt(t, offScrapes, expr, offScrapes.last); len(got) != 0 {
		t.Errorf("VideoOperatorNoLeader fires for a manager run without leader election: %v", got)
	}

	standbyScrapes := scrapeUntil(t, standby, "video_operator_leader_election_enabled")
	got := evaluateAt(t, standbyScrapes, expr, standbyScrapes.last)
	if len(got) != 1 || got[0].Metric.Get("name") != lease {
		t.Errorf("VideoOperatorNoLeader for a standby whose lease another replica holds = %v, want one alert for %s", got, lease)
	}
}

// checkAbsent checks VideoOperatorAbsent against the scenario's manager: silent at every scrape
// while it ran; once it is gone (stopped, so its series end with its last scrape), firing with
// no labels as soon as the last sample is older than Prometheus's lookback (5 minutes), so the
// alert's `for` counts from then. A stopped target is marked stale by Prometheus at once; the
// lookback is the later, more cautious bound.
func checkAbsent(t *testing.T, rules []rule, r *running) {
	var expr string
	for _, rl := range rules {
		if rl.Alert == "VideoOperatorAbsent" {
			expr = rl.Expr
		}
	}
	if expr == "" {
		t.Fatal("prometheus-rule.yaml has no VideoOperatorAbsent alert")
	}
	for _, ts := range r.scrapes.times {
		if got := evaluateAt(t, r.scrapes, expr, ts); len(got) != 0 {
			t.Errorf("VideoOperatorAbsent fires at %s while the manager is scraped: %v", ts.Format(time.TimeOnly), got)
		}
	}
	r.stopManager()
	if err := r.scrapes.scrape(t.Context(), r.metricsURL); err == nil {
		t.Fatal("the stopped manager still serves metrics: the case tests nothing")
	}
	gone := r.scrapes.last.Add(5*time.Minute + time.Second)
	got := evaluateAt(t, r.scrapes, expr, gone)
	if len(got) != 1 || got[0].Metric.Len() != 0 || got[0].F != 1 {
		t.Errorf("VideoOperatorAbsent 5 minutes after the manager's last scrape = %v, want one alert without labels", got)
	}
	if got := evaluateAt(t, r.scrapes, expr, r.scrapes.last.Add(4*time.Minute)); len(got) != 0 {
		t.Errorf("VideoOperatorAbsent fires within the lookback of the last scrape: %v", got)
	}
}

// scrapeUntil scrapes url every 200 ms until the metric appears (30 s at most), then twice more.
func scrapeUntil(t *testing.T, url, metric string) *scrapes {
	t.Helper()
	s := newScrapes()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := s.scrape(t.Context(), url)
		if _, ok := s.names()[metric]; ok && err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never exposed %s (last error: %v)", url, metric, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for range 2 {
		time.Sleep(200 * time.Millisecond)
		if err := s.scrape(t.Context(), url); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestEveryAlertIsInTheMonitoringPage checks that docs/monitoring.md's alert table lists every
// alert of the rules file, and no alert that is not there, so the page a platform team reads
// before installing says what can page them (the two budget alerts were once missing).
func TestEveryAlertIsInTheMonitoringPage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "docs", "monitoring.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(VideoOperator[A-Za-z]+)` \\|")
	listed := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		listed[m[1]] = true
	}
	sections := runbookSections(t)
	for _, rl := range loadRules(t) {
		if rl.Alert == "" {
			continue
		}
		if !listed[rl.Alert] {
			t.Errorf("alert %s is not in docs/monitoring.md's alert table", rl.Alert)
		}
		if _, ok := sections[strings.ToLower(rl.Alert)]; !ok {
			t.Errorf("alert %s has no section in docs/runbooks.md", rl.Alert)
		}
		delete(listed, rl.Alert)
	}
	for alert := range listed {
		t.Errorf("docs/monitoring.md lists %s, which prometheus-rule.yaml does not have", alert)
	}
}
