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
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/simulator"
)

// measure builds the run's result from the simulator, the proxy, the watch, /proc and the last
// scrape of /metrics, while the manager still runs (its /proc entry is gone once it exits).
func (s *scaleRun) measure(extra []string, cpu0 cpu) *result {
	r := &result{
		Label: *flagLabel, Date: time.Now().UTC(), Tree: s.tree, Machine: machineInfo(),
		Params: params{N: *flagN, Namespaces: *flagNamespaces, Keys: *flagKeys, Callbacks: *flagCallbacks,
			TimeScale: *flagTimeScale, RenderMin: s.scaled(*flagRenderMin).String(), RenderMax: s.scaled(*flagRenderMax).String(),
			ManagerArgs: extra, CreateWorkers: *flagWorkers, Seed: *flagSeed, Budget: *flagBudget, Mix: *flagMix},
		Timeline: s.timeline,
	}
	if r.Label == "" {
		r.Label = fmt.Sprintf("N=%d %s", *flagN, map[bool]string{true: "callbacks", false: "polling"}[*flagCallbacks])
		if *flagBudget {
			r.Label += " with budgets"
		}
	}
	s.settleBudgets()
	jobsByID := s.measureJobs(r)
	s.measureLatencies(r, jobsByID)
	s.measureService(r)
	s.measureAPI(r)
	s.measureProcesses(r, cpu0)
	s.measureBudgets(r)
	s.measureRenderSize(r)
	return r
}

func (s *scaleRun) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * *flagTimeScale).Round(time.Millisecond)
}

// measureJobs matches the service's jobs to the objects (by videoName): duplicates, orphans,
// the outcome of every object, the submit throughput and delay.
func (s *scaleRun) measureJobs(r *result) map[string]simulator.JobInfo {
	var list videov1alpha1.VideoRenderList
	if err := s.watch.cache.List(s.b.Context(), &list, client.InNamespace("")); err != nil {
		s.b.Errorf("listing the objects from the watch's cache: %v", err)
	}
	jobs := s.sim.Jobs()
	jobsByID := make(map[string]simulator.JobInfo, len(jobs))
	perName := map[string]int{}
	var submitTimes []time.Time
	var submitDelays []time.Duration
	for _, j := range jobs {
		jobsByID[j.ID] = j
		name := videoName(j.Request)
		perName[name]++
		submitTimes = append(submitTimes, j.CreatedAt)
		if at, ok := s.created[name]; ok && perName[name] == 1 {
			submitDelays = append(submitDelays, max(j.CreatedAt.Sub(at), 0))
		}
	}
	held := map[string]bool{}
	r.Objects, r.Jobs = len(list.Items), len(jobs)
	for i := range list.Items {
		vr := &list.Items[i]
		held[vr.Status.JobID] = true
		if p := vr.Status.Previous; p != nil {
			held[p.JobID] = true
		}
		n := perName[vr.Name]
		r.MaxJobsPerObject = max(r.MaxJobsPerObject, n)
		if n > 1 {
			r.DuplicateObjects++
		}
		switch ready, stalled := terminalConditions(vr); {
		case ready:
			r.Ready++
		case stalled:
			r.Stalled++
		default:
			r.NeverTerminal++
		}
	}
	for _, j := range jobs {
		if !held[j.ID] {
			r.Orphans++
		}
	}
	if len(submitTimes) > 0 {
		last := submitTimes[0]
		for _, t := range submitTimes {
			if t.After(last) {
				last = t
			}
		}
		if span := last.Sub(s.start).Seconds(); span > 0 {
			r.SubmitThroughput = float64(len(submitTimes)) / span
		}
		r.SubmitPeak1s = peakPerSecond(submitTimes)
	}
	r.SubmitDelay = summarise(submitDelays)
	return jobsByID
}

// videoName reads the videoName of a submitted request body.
func videoName(raw []byte) string {
	const field = `"videoName":"`
	i := strings.Index(string(raw), field)
	if i < 0 {
		return ""
	}
	rest := string(raw[i+len(field):])
	if j := strings.IndexByte(rest, '"'); j >= 0 {
		return rest[:j]
	}
	return ""
}

// measureLatencies is completion-to-status: from the end of the job at the service (the
// simulator's clock, the same as the watch's) to the object seen Ready by the watch.
func (s *scaleRun) measureLatencies(r *result, jobsByID map[string]simulator.JobInfo) {
	var d []time.Duration
	for _, seen := range s.watch.snapshot() {
		if j, ok := jobsByID[seen.JobID]; ok && seen.Ready {
			d = append(d, max(seen.At.Sub(j.EndsAt), 0))
		}
	}
	r.CompletionToStatus = summarise(d)
}

// measureService reads the simulator's counters: calls by endpoint, per job created.
func (s *scaleRun) measureService(r *result) {
	c := s.sim.Counters()
	r.ServiceCalls, r.ServiceCallsPerJob = c.Calls, map[string]float64{}
	total := 0
	for endpoint, n := range c.Calls {
		total += n
		if r.Jobs > 0 {
			r.ServiceCallsPerJob[endpoint] = float64(n) / float64(r.Jobs)
		}
	}
	if r.Jobs > 0 {
		r.TotalCallsPerJob = float64(total) / float64(r.Jobs)
	}
	r.WebhooksDelivered, r.WebhooksFailed, r.ServiceRateLimited = c.WebhooksDelivered, c.WebhooksFailed, c.Faults["rate_limit"]
}

// measureAPI reads the counting proxy: the manager's requests and its status writes per object.
func (s *scaleRun) measureAPI(r *result) {
	requests, perObject, codes := s.proxy.counts()
	r.APIRequests, r.StatusWriteCodes, r.StatusWriteCodesByResource = requests, map[string]int{}, map[string]map[string]int{}
	for resource, byCode := range codes {
		r.StatusWriteCodesByResource[resource] = map[string]int{}
		for code, n := range byCode {
			r.StatusWriteCodes[strconv.Itoa(code)] += n
			r.StatusWriteCodesByResource[resource][strconv.Itoa(code)] = n
		}
	}
	renders := 0
	for key, n := range perObject {
		if strings.HasPrefix(key, "videorenders ") {
			renders += n
			r.StatusWritesMaxObj = max(r.StatusWritesMaxObj, n)
		}
		r.StatusWrites += n
	}
	if r.Objects > 0 {
		r.StatusWritesPerObj = float64(renders) / float64(r.Objects)
	}
	events, budgets, objects := writesByKind(requests)
	cmWrites, cmReads := configMapRequests(requests)
	r.PerRender.BudgetConflicts = r.StatusWriteCodesByResource["videobudgets"]["409"]
	if budgets > 0 {
		r.PerRender.BudgetConflictShare = float64(r.PerRender.BudgetConflicts) / float64(budgets)
	}
	if r.Objects > 0 {
		r.PerRender.StatusWrites = r.StatusWritesPerObj
		r.PerRender.Events = float64(events) / float64(r.Objects)
		r.PerRender.BudgetWrites = float64(budgets) / float64(r.Objects)
		r.PerRender.ObjectWrites = float64(objects) / float64(r.Objects)
		r.PerRender.ConfigMapWrites = float64(cmWrites) / float64(r.Objects)
		r.PerRender.ConfigMapReads = float64(cmReads) / float64(r.Objects)
	}
}

// configMapRequests counts, in the proxy's requests, the writes of ConfigMaps (the budgets'
// ledgers) and their uncached reads.
func configMapRequests(requests map[string]int) (writes, reads int) {
	for key, n := range requests {
		verb, resource, _ := strings.Cut(key, " ")
		if resource != "configmaps" {
			continue
		}
		switch verb {
		case "CREATE", "UPDATE", "PATCH":
			writes += n
		case "GET", "LIST":
			reads += n
		}
	}
	return writes, reads
}

// writesByKind counts, in the proxy's requests by "VERB resource[/subresource]", the writes of
// events (core/v1 and events.k8s.io/v1 share the resource name), of VideoBudgets, and of the
// videorenders themselves (their metadata: not their status).
func writesByKind(requests map[string]int) (events, budgets, objects int) {
	for key, n := range requests {
		verb, resource, _ := strings.Cut(key, " ")
		if verb != "CREATE" && verb != "UPDATE" && verb != "PATCH" {
			continue
		}
		if resource == "videorenders" {
			objects += n
		}
		switch resource, _, _ = strings.Cut(resource, "/"); resource {
		case "events":
			events += n
		case "videobudgets":
			budgets += n
		}
	}
	return events, budgets, objects
}

// measureProcesses reads /proc: the manager's peak RSS and CPU, the API server's and etcd's CPU
// since the manager started, and this process's.
func (s *scaleRun) measureProcesses(r *result, cpu0 cpu) {
	if _, peak, err := memory(s.mgr.pid()); err == nil {
		r.ManagerPeakRSSMiB = peak
	} else {
		r.Unmeasured = append(r.Unmeasured, "manager peak RSS: "+err.Error())
	}
	c := s.cpuNow()
	r.ManagerCPUSeconds = c.manager
	r.HarnessCPUSeconds = c.harness - cpu0.harness
	if c.machine > 0 {
		ours := r.ManagerCPUSeconds + r.HarnessCPUSeconds + (c.apiServer - cpu0.apiServer) + (c.etcd - cpu0.etcd)
		r.OtherCPUSeconds = max(c.machine-cpu0.machine-ours, 0)
	} else {
		r.Unmeasured = append(r.Unmeasured, "other CPU on the machine: /proc/stat unreadable")
	}
	for _, step := range s.timeline {
		r.Load1Max = max(r.Load1Max, step.Load1)
	}
	if s.apiPID != 0 {
		r.APIServerCPUSeconds = c.apiServer - cpu0.apiServer
		if r.Objects > 0 {
			r.PerRender.APIServerCPUMs = 1000 * r.APIServerCPUSeconds / float64(r.Objects)
		}
	} else {
		r.Unmeasured = append(r.Unmeasured, "API server CPU: its process was not found")
	}
	if s.etcdPID != 0 {
		r.EtcdCPUSeconds = c.etcd - cpu0.etcd
	} else {
		r.Unmeasured = append(r.Unmeasured, "etcd CPU: its process was not found")
	}
	if m, err := scrapeMetrics(s.b.Context(), s.mgr.metricsURL); err == nil {
		r.Metrics = m
		if !hasOperatorSecondsHistograms(m) {
			r.Unmeasured = append(r.Unmeasured, "no video_operator_*_seconds histogram other than the service request latency")
		}
	} else {
		r.Unmeasured = append(r.Unmeasured, "manager /metrics: "+err.Error())
	}
}

func hasOperatorSecondsHistograms(m scrape) bool {
	for k := range m.Histograms {
		if strings.HasPrefix(k, "video_operator_") && !strings.HasPrefix(k, "video_operator_service_request_duration_seconds") {
			return true
		}
	}
	return false
}

// report writes the JSON and the Markdown row, prints both summaries and the comparison with
// the baseline.
func (s *scaleRun) report(r *result) {
	dir := *flagOut
	if dir == "" {
		dir = filepath.Join(repoRoot, "bin", "bench")
	}
	must(s.b, os.MkdirAll(dir, 0o755))
	base := fmt.Sprintf("%s-n%d-%s", r.Date.Format("20060102T150405Z"), r.Params.N, map[bool]string{true: "callbacks", false: "polling"}[r.Params.Callbacks])
	if r.Params.Budget {
		base += "-budget"
	}
	jsonPath := filepath.Join(dir, base+".json")
	must(s.b, r.writeJSON(jsonPath))
	if log, err := os.ReadFile(s.mgr.log); err == nil {
		must(s.b, os.WriteFile(filepath.Join(dir, base+"-manager.log"), log, 0o644))
	}
	if r.APIServerProfile != "" {
		prof, err := os.ReadFile(r.APIServerProfile)
		must(s.b, err)
		r.APIServerProfile = filepath.Join(dir, base+"-apiserver.pprof")
		must(s.b, os.WriteFile(r.APIServerProfile, prof, 0o644))
		_, _ = fmt.Fprintf(os.Stdout, "API server CPU profile: go tool pprof -top %s\n", r.APIServerProfile)
	}
	row := r.markdownRow()
	must(s.b, os.WriteFile(filepath.Join(dir, base+".md"), []byte(markdownHeader+"\n"+row+"\n"), 0o644))

	out := os.Stdout
	_, _ = fmt.Fprintf(out, "\nbench report: %s\n\n%s\n%s\n\n", jsonPath, markdownHeader, row)
	_, _ = fmt.Fprintf(out, "objects %d: ready %d, stalled %d, never terminal %d; jobs %d, orphans %d; webhooks delivered %d, failed %d; manager log errors %d\n",
		r.Objects, r.Ready, r.Stalled, r.NeverTerminal, r.Jobs, r.Orphans, r.WebhooksDelivered, r.WebhooksFailed, r.ManagerLogErrors)
	_, _ = fmt.Fprintf(out, "service calls: %v\nstatus writes: %d (answers %v); API requests: %v\n", r.ServiceCalls, r.StatusWrites, r.StatusWriteCodes, r.APIRequests)
	_, _ = fmt.Fprintf(out, "per render: API server CPU %.1f ms; writes: status %.2f, object %.2f, events %.2f, VideoBudget %.2f, ConfigMap %.2f; ConfigMap reads %.2f; VideoBudget 409s %d (%.1f%% of its writes)\n",
		r.PerRender.APIServerCPUMs, r.PerRender.StatusWrites, r.PerRender.ObjectWrites, r.PerRender.Events, r.PerRender.BudgetWrites,
		r.PerRender.ConfigMapWrites, r.PerRender.ConfigMapReads, r.PerRender.BudgetConflicts, 100*r.PerRender.BudgetConflictShare)
	if t := bySizeText(r.BySize); t != "" {
		_, _ = fmt.Fprintf(out, "request mix %s, by size:\n%s", r.Params.Mix, t)
	}
	_, _ = fmt.Fprintf(out, "CPU seconds: manager %.1f, API server %.1f, etcd %.1f, harness %.1f, other processes %.1f (load1 max %.1f)\n",
		r.ManagerCPUSeconds, r.APIServerCPUSeconds, r.EtcdCPUSeconds, r.HarnessCPUSeconds, r.OtherCPUSeconds, r.Load1Max)
	if bu := r.Budget; bu != nil {
		_, _ = fmt.Fprintf(out, "budgets %d: renders used %d of %d expected, seconds charged %d of %d rendered (every charge in %.1f s after the run), "+
			"reserved at the end %d (%d reservations), mismatched %v; status writes %d (answers %v)\n",
			bu.Budgets, bu.UsedRenders, bu.ExpectedRenders, bu.UsedSeconds, bu.RenderedSeconds, bu.SettleSeconds,
			bu.ReservedAtEnd, bu.ReservationsAtEnd, bu.Mismatched, bu.StatusWrites, r.StatusWriteCodesByResource["videobudgets"])
	}
	_, _ = fmt.Fprintf(out, "render size: %d bytes (%d without managedFields, status %d), %.1f managedFields entries\n",
		r.RenderSize.Bytes, r.RenderSize.BytesNoManagedFields, r.RenderSize.StatusBytes, r.RenderSize.ManagedFieldsEntries)
	printBudgetWrites(out, r.Metrics, r.Objects)
	printBudgetSize(out, r.Timeline)
	printHistograms(out, r.Metrics)
	for _, u := range r.Unmeasured {
		_, _ = fmt.Fprintf(out, "not measured: %s\n", u)
	}
	if *flagBaseline != "" {
		b, err := readResult(*flagBaseline)
		if err != nil {
			s.b.Errorf("reading the baseline: %v", err)
			return
		}
		writeComparison(out, b, r)
	}
}

// printBudgetSize prints the largest VideoBudget seen over the run (its JSON size without
// managedFields, and its reservations), when the run had budgets.
func printBudgetSize(out io.Writer, timeline []timeStep) {
	var peak timeStep
	for _, st := range timeline {
		if st.BudgetMaxBytes > peak.BudgetMaxBytes {
			peak = st
		}
	}
	if peak.BudgetMaxBytes == 0 {
		return
	}
	_, _ = fmt.Fprintf(out, "largest VideoBudget: %.1f KiB with %d reservations, at t=%.0fs\n",
		float64(peak.BudgetMaxBytes)/1024, peak.BudgetMaxReservations, peak.Seconds)
}

// printBudgetWrites prints the VideoBudget writes per render by writer and cause, and the
// changes they carried per render by kind (the manager's video_operator_budget_write* counters).
func printBudgetWrites(out io.Writer, m scrape, objects int) {
	if objects == 0 {
		return
	}
	var lines []string
	for k, v := range m.Gauges {
		if budgetWriteCounters.MatchString(strings.SplitN(k, "{", 2)[0]) && v > 0 {
			lines = append(lines, fmt.Sprintf("  %s: %.0f (%.3f per render)", k, v, v/float64(objects)))
		}
	}
	if len(lines) == 0 {
		return
	}
	slices.Sort(lines)
	_, _ = fmt.Fprintf(out, "budget writes and the changes they carried:\n%s\n", strings.Join(lines, "\n"))
}

// measureRenderSize reads every render from the API server (managedFields included, as stored)
// and averages its JSON size. It runs after measureProcesses read the API server's CPU, which
// this List (megabytes of JSON) must not add to.
func (s *scaleRun) measureRenderSize(r *result) {
	var list videov1alpha1.VideoRenderList
	if err := s.k8s.List(s.b.Context(), &list, client.InNamespace("")); err != nil || len(list.Items) == 0 {
		r.Unmeasured = append(r.Unmeasured, fmt.Sprintf("render size: %d renders listed (%v)", len(list.Items), err))
		return
	}
	var whole, bare, status, entries int
	for i := range list.Items {
		vr := &list.Items[i]
		if data, err := json.Marshal(vr); err == nil {
			whole += len(data)
		}
		if data, err := json.Marshal(vr.Status); err == nil {
			status += len(data)
		}
		entries += len(vr.ManagedFields)
		vr.ManagedFields = nil
		if data, err := json.Marshal(vr); err == nil {
			bare += len(data)
		}
	}
	n := len(list.Items)
	r.RenderSize = renderSize{Bytes: whole / n, BytesNoManagedFields: bare / n, StatusBytes: status / n,
		ManagedFieldsEntries: float64(entries) / float64(n)}
}
