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

package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
)

// result is one run of the benchmark: its parameters and what was measured. Every number comes
// from this run; a figure that could not be measured is left at zero and named in Unmeasured.
type result struct {
	Label   string    `json:"label"`
	Date    time.Time `json:"date"`
	Tree    string    `json:"tree"` // git describe of the tree the manager was built from
	Machine machine   `json:"machine"`
	Params  params    `json:"params"`

	Objects       int `json:"objects"`
	Ready         int `json:"ready"`
	Stalled       int `json:"stalled"`
	NeverTerminal int `json:"neverTerminal"`
	// Jobs the service created for the run's objects; DuplicateObjects have more than one
	// (MaxJobsPerObject), each a double charge; Orphans are jobs no object names.
	Jobs             int `json:"jobs"`
	DuplicateObjects int `json:"duplicateObjects"`
	MaxJobsPerObject int `json:"maxJobsPerObject"`
	Orphans          int `json:"orphans"`

	// CreateSeconds is how long creating the objects took; WallSeconds runs from the first
	// create to the last object seen terminal.
	CreateSeconds float64 `json:"createSeconds"`
	WallSeconds   float64 `json:"wallSeconds"`

	// Service calls by endpoint (the simulator's counters), in total and per job created.
	ServiceCalls       map[string]int     `json:"serviceCalls"`
	ServiceCallsPerJob map[string]float64 `json:"serviceCallsPerJob"`
	TotalCallsPerJob   float64            `json:"totalCallsPerJob"`
	WebhooksDelivered  int                `json:"webhooksDelivered"`
	WebhooksFailed     int                `json:"webhooksFailed"`
	ServiceRateLimited int                `json:"serviceRateLimited"` // 429s the simulator injected (none unless asked)
	SubmitThroughput   float64            `json:"submitThroughputPerSecond"`
	SubmitPeak1s       int                `json:"submitPeakPerSecond"`
	SubmitDelay        latency            `json:"submitDelay"`        // object created → job created at the service
	CompletionToStatus latency            `json:"completionToStatus"` // job end at the service → object seen Ready
	StatusWrites       int                `json:"statusWrites"`
	StatusWritesPerObj float64            `json:"statusWritesPerObject"`
	StatusWritesMaxObj int                `json:"statusWritesMaxPerObject"`
	StatusWriteCodes   map[string]int     `json:"statusWriteCodes"`
	// StatusWriteCodesByResource splits StatusWriteCodes by resource (videorenders, videobudgets).
	StatusWriteCodesByResource map[string]map[string]int `json:"statusWriteCodesByResource,omitempty"`
	// Budget is the spend guard's account of the run, with -bench.budget.
	Budget              *budgetResult  `json:"budget,omitempty"`
	APIRequests         map[string]int `json:"apiRequests"` // the manager's, by verb and resource
	ManagerPeakRSSMiB   float64        `json:"managerPeakRSSMiB"`
	ManagerCPUSeconds   float64        `json:"managerCPUSeconds"`
	APIServerCPUSeconds float64        `json:"apiServerCPUSeconds"`
	// PerRender is the load on the API server per render (issue 23): its CPU and the manager's
	// writes by kind, each divided by the objects.
	PerRender      perRender `json:"perRender"`
	EtcdCPUSeconds float64   `json:"etcdCPUSeconds"`
	// HarnessCPUSeconds is this process's CPU (simulator, proxy, watch, creates): it shares the
	// machine with the manager, so it is reported rather than hidden.
	HarnessCPUSeconds float64 `json:"harnessCPUSeconds"`
	// OtherCPUSeconds is the machine's busy CPU time during the run minus the processes above:
	// other work on the machine, which the figures above then competed with.
	OtherCPUSeconds float64 `json:"otherCPUSeconds"`
	// Load1Max is the highest one-minute load average sampled during the run.
	Load1Max         float64 `json:"load1Max"`
	ManagerLogErrors int     `json:"managerLogErrors"`
	// BySize is the cost of each size of a request mix (-bench.mix).
	BySize []sizeResult `json:"bySize,omitempty"`
	// RenderSize is what a render weighs at the end of the run, as the API server stores it.
	RenderSize renderSize `json:"renderSize"`
	// APIServerProfile is the CPU profile -bench.apiserver-profile took.
	APIServerProfile string `json:"apiServerProfile,omitempty"`

	Metrics    scrape     `json:"metrics"` // the last scrape of the manager's /metrics
	Timeline   []timeStep `json:"timeline"`
	Unmeasured []string   `json:"unmeasured,omitempty"`
}

// perRender is the API server's cost of one render: what docs/architecture.md "Load on the cluster"
// bounds.
type perRender struct {
	// APIServerCPUMs is the API server's CPU from the manager's start to the end, per object.
	APIServerCPUMs float64 `json:"apiServerCPUMs"`
	// StatusWrites are PATCH and PUT of videorenders/status; Events are the creates and patches of
	// events (core and events.k8s.io); BudgetWrites every create, update and patch of videobudgets
	// and of their status.
	StatusWrites float64 `json:"statusWrites"`
	Events       float64 `json:"events"`
	BudgetWrites float64 `json:"budgetWrites"`
	// ObjectWrites are updates and patches of the videorenders themselves (not their status): the
	// record of docs/architecture.md "The record travels with the object" and the charge finalizer.
	ObjectWrites float64 `json:"objectWrites"`
	// ConfigMapWrites are creates, updates and patches of ConfigMaps (the budgets' ledgers);
	// ConfigMapReads the manager's uncached GETs of ConfigMaps (a ledger read from the API server).
	ConfigMapWrites float64 `json:"configMapWrites"`
	ConfigMapReads  float64 `json:"configMapReads"`
	// BudgetConflicts are the 409 answers to VideoBudget writes, BudgetConflictShare their share
	// of the VideoBudget writes.
	BudgetConflicts     int     `json:"budgetConflicts"`
	BudgetConflictShare float64 `json:"budgetConflictShare"`
}

// renderSize is the mean JSON size of the renders once terminal: every status write of a render
// sends and stores the whole object (the API server decodes, validates, encodes and watchers
// decode it), so a guarded render that weighs more costs more on each of its writes.
type renderSize struct {
	Bytes                int     `json:"bytes"`
	BytesNoManagedFields int     `json:"bytesWithoutManagedFields"`
	StatusBytes          int     `json:"statusBytes"`
	ManagedFieldsEntries float64 `json:"managedFieldsEntries"`
}

type machine struct {
	CPUs   int     `json:"cpus"`
	MemGiB float64 `json:"memGiB"`
	Kernel string  `json:"kernel,omitempty"`
}

type params struct {
	N             int      `json:"n"`
	Namespaces    int      `json:"namespaces"`
	Keys          int      `json:"keys"`
	Callbacks     bool     `json:"callbacks"`
	TimeScale     float64  `json:"timeScale"`
	RenderMin     string   `json:"renderMinScaled"`
	RenderMax     string   `json:"renderMaxScaled"`
	ManagerArgs   []string `json:"managerArgs"`
	CreateWorkers int      `json:"createWorkers"`
	Seed          uint64   `json:"seed"`
	Budget        bool     `json:"budget,omitempty"`
	Mix           string   `json:"mix,omitempty"`
}

// latency summarises durations in milliseconds.
type latency struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50Ms"`
	P90   float64 `json:"p90Ms"`
	P99   float64 `json:"p99Ms"`
	Max   float64 `json:"maxMs"`
}

func summarise(d []time.Duration) latency {
	if len(d) == 0 {
		return latency{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	ms := func(p int) float64 {
		i := (len(s)*p + 99) / 100
		return float64(s[min(max(i-1, 0), len(s)-1)]) / float64(time.Millisecond)
	}
	return latency{Count: len(s), P50: ms(50), P90: ms(90), P99: ms(99), Max: float64(s[len(s)-1]) / float64(time.Millisecond)}
}

// timeStep is one sample taken while the run goes on.
type timeStep struct {
	Seconds    float64            `json:"seconds"`
	Jobs       int                `json:"jobs"`
	Terminal   int                `json:"terminal"`
	RSSMiB     float64            `json:"managerRSSMiB"`
	Load1      float64            `json:"load1"`
	CPUSeconds float64            `json:"managerCPUSeconds"`
	Depth      map[string]float64 `json:"workqueueDepth,omitempty"`
	QueueP99   map[string]float64 `json:"queueDurationP99Seconds,omitempty"`
	// BudgetMaxBytes and BudgetMaxReservations are the largest VideoBudget (as JSON) and its
	// reservations at this step, with -bench.budget: what every budget write decodes, validates,
	// stores and sends to its watchers.
	BudgetMaxBytes        int `json:"budgetMaxBytes,omitempty"`
	BudgetMaxReservations int `json:"budgetMaxReservations,omitempty"`
}

func (r *result) writeJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func readResult(path string) (*result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r result
	return &r, json.Unmarshal(b, &r)
}

// markdownHeader and markdownRow are docs/benchmarks.md's table.
const markdownHeader = `| run | N | ns / keys | callbacks | manager flags | calls/job (submit + get) | completion→status p50 / p99 / max | submit/s (peak) | submit delay p99 | status writes/obj (max) | object writes/obj | events/obj | budget writes/obj | ConfigMap writes / reads per obj | budget 409s | mgr peak RSS | mgr CPU | apiserver CPU (per render) | other CPU (load1 max) | dup jobs | wall |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|`

func (r *result) markdownRow() string {
	submit := r.ServiceCallsPerJob["render_storyboard"] + r.ServiceCallsPerJob["create_storyboard"] + r.ServiceCallsPerJob["render_project"]
	return fmt.Sprintf("| %s | %d | %d / %d | %s | `%s` | %.2f (%.2f + %.2f) | %s / %s / %s | %.1f (%d) | %s | %.2f (%d) | %.2f | %.2f | %.2f | %.2f / %.2f | %d (%.1f%%) | %.0f MiB | %.1f s | %.1f s (%.1f ms) | %.0f s (%.1f) | %d | %.0f s |",
		r.Label, r.Params.N, r.Params.Namespaces, r.Params.Keys, onOff(r.Params.Callbacks), strings.Join(shownArgs(r.Params.ManagerArgs), " "),
		r.TotalCallsPerJob, submit, r.ServiceCallsPerJob["get_job"],
		msString(r.CompletionToStatus.P50), msString(r.CompletionToStatus.P99), msString(r.CompletionToStatus.Max),
		r.SubmitThroughput, r.SubmitPeak1s, msString(r.SubmitDelay.P99),
		r.StatusWritesPerObj, r.StatusWritesMaxObj, r.PerRender.ObjectWrites, r.PerRender.Events, r.PerRender.BudgetWrites,
		r.PerRender.ConfigMapWrites, r.PerRender.ConfigMapReads, r.PerRender.BudgetConflicts, 100*r.PerRender.BudgetConflictShare,
		r.ManagerPeakRSSMiB, r.ManagerCPUSeconds, r.APIServerCPUSeconds, r.PerRender.APIServerCPUMs,
		r.OtherCPUSeconds, r.Load1Max, r.DuplicateObjects, r.WallSeconds)
}

// shownArgs leaves out the --callback-* flags, which hold this run's loopback port and temporary
// key file: the callbacks column says whether they were given.
func shownArgs(args []string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "--callback-") {
			out = append(out, a)
		}
	}
	return out
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// msString prints milliseconds as a duration rounded to what matters at its size.
func msString(ms float64) string {
	d := time.Duration(ms * float64(time.Millisecond))
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// comparable figures of two runs, for the baseline comparison; lower is better for all of them
// except the throughput.
var figures = []struct {
	name string
	get  func(*result) float64
}{
	{"calls per job", func(r *result) float64 { return r.TotalCallsPerJob }},
	{"get_job calls per job", func(r *result) float64 { return r.ServiceCallsPerJob["get_job"] }},
	{"completion→status p50 (ms)", func(r *result) float64 { return r.CompletionToStatus.P50 }},
	{"completion→status p99 (ms)", func(r *result) float64 { return r.CompletionToStatus.P99 }},
	{"completion→status max (ms)", func(r *result) float64 { return r.CompletionToStatus.Max }},
	{"submit delay p99 (ms)", func(r *result) float64 { return r.SubmitDelay.P99 }},
	{"submissions/s (higher is better)", func(r *result) float64 { return r.SubmitThroughput }},
	{"status writes per object", func(r *result) float64 { return r.StatusWritesPerObj }},
	{"events per object", func(r *result) float64 { return r.PerRender.Events }},
	{"VideoBudget writes per object", func(r *result) float64 { return r.PerRender.BudgetWrites }},
	{"object writes per object", func(r *result) float64 { return r.PerRender.ObjectWrites }},
	{"ConfigMap writes per object", func(r *result) float64 { return r.PerRender.ConfigMapWrites }},
	{"ConfigMap reads per object", func(r *result) float64 { return r.PerRender.ConfigMapReads }},
	{"VideoBudget write conflicts", func(r *result) float64 { return float64(r.PerRender.BudgetConflicts) }},
	{"API server CPU per object (ms)", func(r *result) float64 { return r.PerRender.APIServerCPUMs }},
	{"status write conflicts", func(r *result) float64 { return float64(r.StatusWriteCodes["409"]) }},
	{"manager peak RSS (MiB)", func(r *result) float64 { return r.ManagerPeakRSSMiB }},
	{"manager CPU (s)", func(r *result) float64 { return r.ManagerCPUSeconds }},
	{"API server CPU (s)", func(r *result) float64 { return r.APIServerCPUSeconds }},
	{"duplicate submissions", func(r *result) float64 { return float64(r.DuplicateObjects) }},
	{"never terminal", func(r *result) float64 { return float64(r.NeverTerminal) }},
	{"wall (s)", func(r *result) float64 { return r.WallSeconds }},
}

// writeComparison prints each figure of base and cur with the difference.
func writeComparison(w io.Writer, base, cur *result) {
	_, _ = fmt.Fprintf(w, "\nCompared with %s (%s, N=%d, callbacks %s):\n\n", base.Label, base.Tree, base.Params.N, onOff(base.Params.Callbacks))
	if base.Params.N != cur.Params.N || base.Params.Callbacks != cur.Params.Callbacks {
		_, _ = fmt.Fprint(w, "The runs differ in N or callbacks: the deltas compare unlike runs.\n\n")
	}
	_, _ = fmt.Fprint(w, "| figure | baseline | this run | delta |\n|---|---|---|---|\n")
	for _, f := range figures {
		b, c := f.get(base), f.get(cur)
		delta := fmt.Sprintf("%+.2f", c-b)
		if b != 0 {
			delta += fmt.Sprintf(" (%+.0f%%)", 100*(c-b)/math.Abs(b))
		}
		_, _ = fmt.Fprintf(w, "| %s | %.2f | %.2f | %s |\n", f.name, b, c, delta)
	}
}

// peakPerSecond is the largest number of times in any window of one second.
func peakPerSecond(times []time.Time) int {
	s := slices.Clone(times)
	sort.Slice(s, func(i, j int) bool { return s[i].Before(s[j]) })
	peak, lo := 0, 0
	for hi := range s {
		for s[hi].Sub(s[lo]) >= time.Second {
			lo++
		}
		peak = max(peak, hi-lo+1)
	}
	return peak
}

// printHistograms prints the scraped histograms and workqueue gauges, sorted.
func printHistograms(w io.Writer, m scrape) {
	keys := make([]string, 0, len(m.Histograms))
	for k := range m.Histograms {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		h := m.Histograms[k]
		over := ""
		if h.Overflow {
			over = " (observations above the last bucket)"
		}
		_, _ = fmt.Fprintf(w, "%s: count %.0f, mean %.4fs, p50 %.4fs, p99 %.4fs in (%g, %g], max bucket %gs%s\n",
			k, h.Count, h.Mean, h.P50, h.P99, h.P99Bucket[0], h.P99Bucket[1], h.MaxBucket, over)
	}
	gauges := make([]string, 0, len(m.Gauges))
	for k := range m.Gauges {
		gauges = append(gauges, k)
	}
	sort.Strings(gauges)
	for _, k := range gauges {
		_, _ = fmt.Fprintf(w, "%s %g\n", k, m.Gauges[k])
	}
}
