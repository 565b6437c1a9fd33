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

package v1alpha1

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// runningJobFields is how many fields a line of status.runningJobs has; the job id, last,
// takes the rest.
const runningJobFields = 7

// RunningJobLine is r as a line of status.runningJobs; false when r is not a running render's
// reservation with the default key (those stay objects in status.reservations). The digest a
// storyboardRef render paid for is not kept: it stays in the render's own status and its
// Submitted event, and nothing decides on it once the job is recorded.
func RunningJobLine(r BudgetReservation) (string, bool) {
	if r.JobID == "" || r.Kind != "VideoRender" || r.APIKeySecretRef != nil || r.Name == "" || r.UID == "" || r.AttemptID == "" ||
		strings.ContainsAny(r.Name+r.UID+r.AttemptID+r.JobID, " \t\n") {
		return "", false
	}
	flags := ""
	if r.AICredits {
		flags += "c"
	}
	if r.Unbounded {
		flags += "u"
	}
	if r.UnreportedCredits {
		flags += "r"
	}
	if flags == "" {
		flags = "-"
	}
	return fmt.Sprintf("%s %s %s %d %d %s %s", r.Name, r.UID, r.AttemptID, r.ReservedAt.Unix(), r.EstimatedSeconds, flags, r.JobID), true
}

// ParseRunningJobLine is the reservation a line of status.runningJobs stands for.
func ParseRunningJobLine(line string) (BudgetReservation, error) {
	f := strings.SplitN(line, " ", runningJobFields)
	if len(f) != runningJobFields {
		return BudgetReservation{}, fmt.Errorf("status.runningJobs: %q has %d fields, want %d", line, len(f), runningJobFields)
	}
	at, err := strconv.ParseInt(f[3], 10, 64)
	if err != nil {
		return BudgetReservation{}, fmt.Errorf("status.runningJobs: %q: reservedAt %q is not Unix seconds", line, f[3])
	}
	secs, err := strconv.ParseInt(f[4], 10, 64)
	if err != nil || secs < 0 {
		return BudgetReservation{}, fmt.Errorf("status.runningJobs: %q: estimatedSeconds %q is not a count of seconds", line, f[4])
	}
	return BudgetReservation{Kind: "VideoRender", Name: f[0], UID: f[1], AttemptID: f[2],
		ReservedAt: metav1.NewTime(time.Unix(at, 0).UTC()), EstimatedSeconds: secs,
		AICredits: strings.Contains(f[5], "c"), Unbounded: strings.Contains(f[5], "u"), UnreportedCredits: strings.Contains(f[5], "r"), JobID: f[6]}, nil
}

// AllReservations are the budget's reservations with its running jobs' lines read as
// reservations, running jobs first (they were mostly reserved before the submissions in flight).
func (st *VideoBudgetStatus) AllReservations() []BudgetReservation {
	all := make([]BudgetReservation, 0, len(st.RunningJobs)+len(st.Reservations))
	for _, line := range st.RunningJobs {
		r, err := ParseRunningJobLine(line)
		if err != nil {
			r = unreadableRunningJob(line)
		}
		all = append(all, r)
	}
	return append(all, st.Reservations...)
}

// ExpandRunningJobs moves the running jobs' lines into Reservations (AllReservations): what the
// spend guard works on.
func (st *VideoBudgetStatus) ExpandRunningJobs() {
	if len(st.RunningJobs) > 0 {
		st.Reservations, st.RunningJobs = st.AllReservations(), nil
	}
}

// CompactRunningJobs moves the reservations RunningJobLine writes as lines into RunningJobs: a
// list of objects costs the API server several times the CPU on every write.
func (st *VideoBudgetStatus) CompactRunningJobs() {
	var kept []BudgetReservation
	var lines []string
	for _, r := range st.Reservations {
		if line, ok := RunningJobLine(r); ok {
			lines = append(lines, line)
			continue
		}
		kept = append(kept, r)
	}
	st.Reservations, st.RunningJobs = kept, lines
}

// UnreadableRunningJob is the name of the render of a running job whose line could not be read
// (written by hand): no object has it, so the job's end is read from the service, with the
// default key, and charged.
const UnreadableRunningJob = "-"

// unreadableRunningJob is what a line that cannot be read still holds: its last word as the job
// id, and its reservedAt and estimate where they can be read. It is written back as a readable
// line (RunningJobLine), never as an object the API server would refuse. A reservedAt that
// cannot be read is taken as now: the job's reservation is then held until its end is read,
// the job deadline never passed.
func unreadableRunningJob(line string) BudgetReservation {
	r := BudgetReservation{Kind: "VideoRender", Name: UnreadableRunningJob, UID: UnreadableRunningJob, AttemptID: "unreadable",
		ReservedAt: metav1.Now(), JobID: "unreadable"}
	f := strings.Fields(line)
	if len(f) > 0 {
		r.JobID = f[len(f)-1]
	}
	if len(f) == runningJobFields {
		if at, err := strconv.ParseInt(f[3], 10, 64); err == nil {
			r.ReservedAt = metav1.NewTime(time.Unix(at, 0).UTC())
		}
		if secs, err := strconv.ParseInt(f[4], 10, 64); err == nil && secs >= 0 {
			r.EstimatedSeconds = secs
		}
	}
	return r
}
