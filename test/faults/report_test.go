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

package faults

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// report is what one case measured: what the service created and charged, against what the
// objects say.
type report struct {
	Case    string `json:"case"`
	Objects int    `json:"objects"`
	// Jobs is how many jobs the service created for the case's objects.
	Jobs int `json:"jobs"`
	// MaxJobsPerObject must be at most 1: a second job for one object is a double charge.
	MaxJobsPerObject int `json:"maxJobsPerObject"`
	// Orphans are jobs at the service that no object holds (in jobId or previous.jobId).
	Orphans int `json:"orphans"`
	// UnknownCallMade and UnknownNoCall split the objects in SubmissionUnknown by whether the
	// service created a job for them (a call cut on the wire, or answered 500, created none).
	UnknownCallMade int `json:"unknownCallMade"`
	UnknownNoCall   int `json:"unknownNoCall"`
	// Ready objects completed; NeverTerminal ones are neither Ready nor Stalled at the end.
	Ready         int `json:"ready"`
	NeverTerminal int `json:"neverTerminal"`
	// Completion-to-status latency: from the end of the job at the service to the object seen
	// Ready (seen by polling the API server every 25 ms).
	LatencyP50 time.Duration `json:"latencyP50"`
	LatencyP99 time.Duration `json:"latencyP99"`
	// Note is what else the case measured (take-over times).
	Note string `json:"note,omitempty"`
}

// measure builds the report of a case from the objects and the simulator's jobs.
func (w *world) measure(name string) report {
	w.t.Helper()
	items, err := w.renders(w.t.Context())
	must(w.t, err)
	jobs := w.sim.Jobs()

	jobsByName := map[string][]string{}
	for _, j := range jobs {
		var req struct {
			VideoName string `json:"videoName"`
		}
		if json.Unmarshal(j.Request, &req) == nil {
			jobsByName[req.VideoName] = append(jobsByName[req.VideoName], j.ID)
		}
	}
	held := map[string]bool{}
	r := report{Case: name, Objects: len(items), Jobs: len(jobs), Note: w.note}
	var latencies []time.Duration
	w.mu.Lock()
	seen := map[string]time.Time{}
	for k, v := range w.ready {
		seen[k] = v
	}
	w.mu.Unlock()
	for i := range items {
		vr := &items[i]
		ids := jobsByName[vr.Name]
		r.MaxJobsPerObject = max(r.MaxJobsPerObject, len(ids))
		held[vr.Status.JobID] = true
		if p := vr.Status.Previous; p != nil {
			held[p.JobID] = true
		}
		switch {
		case stalledWith(vr, videov1alpha1.ReasonSubmissionUnknown) && len(ids) > 0:
			r.UnknownCallMade++
		case stalledWith(vr, videov1alpha1.ReasonSubmissionUnknown):
			r.UnknownNoCall++
		case !terminal(vr):
			r.NeverTerminal++
		}
		if vr.Status.Phase == videov1alpha1.PhaseCompleted && terminal(vr) {
			r.Ready++
			if at, ok := seen[vr.Name]; ok && vr.Status.JobID != "" {
				if info, ok := w.sim.Job(vr.Status.JobID); ok {
					latencies = append(latencies, max(at.Sub(info.EndsAt), 0))
				}
			}
		}
	}
	for _, j := range jobs {
		if !held[j.ID] {
			r.Orphans++
		}
	}
	r.LatencyP50, r.LatencyP99 = percentile(latencies, 50), percentile(latencies, 99)
	w.t.Logf("%s", r)
	if path := os.Getenv("FAULTS_REPORT"); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		must(w.t, err)
		b, _ := json.Marshal(r)
		_, _ = f.Write(append(b, '\n'))
		_ = f.Close()
	}
	return r
}

// String prints the report as one row of docs/reliability.md's table.
func (r report) String() string {
	return fmt.Sprintf("| %s | %d | %d | %d | %d | %d / %d | %d | %d | %s / %s | %s |",
		r.Case, r.Objects, r.Jobs, r.MaxJobsPerObject, r.Orphans, r.UnknownCallMade, r.UnknownNoCall,
		r.Ready, r.NeverTerminal, r.LatencyP50.Round(time.Millisecond), r.LatencyP99.Round(time.Millisecond), r.Note)
}

// expectNoDoubleCharge asserts what must hold in every case, whatever was injected: at most one
// job per object, and every orphaned job surfaced as a SubmissionUnknown whose call was made.
func (r report) expectNoDoubleCharge(w *world) {
	w.t.Helper()
	if r.MaxJobsPerObject > 1 {
		w.t.Errorf("%s: an object has %d jobs at the service: paid twice", r.Case, r.MaxJobsPerObject)
	}
	if r.Orphans > r.UnknownCallMade {
		w.t.Errorf("%s: %d orphaned jobs but only %d objects say their submission is unknown: an orphan is silent",
			r.Case, r.Orphans, r.UnknownCallMade)
	}
	if r.NeverTerminal > 0 {
		w.t.Errorf("%s: %d objects never became Ready or Stalled", r.Case, r.NeverTerminal)
	}
}

func stalledWith(vr *videov1alpha1.VideoRender, reason videov1alpha1.ConditionReason) bool {
	for _, c := range vr.Status.Conditions {
		if c.Type == string(videov1alpha1.ConditionStalled) && c.Status == "True" && c.Reason == string(reason) {
			return true
		}
	}
	return false
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}
