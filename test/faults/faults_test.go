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
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/callgate"
	"github.com/videoops/video-operator/internal/controller"
	"github.com/videoops/video-operator/internal/simulator"
)

// size picks the short or the long variant's number.
func size(short, longer int) int {
	if *long {
		return longer
	}
	return short
}

// shutdownWithin is how long a SIGTERMed manager may take: its shutdown budget for the
// --service-timeout the suite passes, and a margin.
var shutdownWithin = controller.ShutdownBudget(5*time.Second) + 5*time.Second

// A rolling update: SIGTERM while N paid calls are in flight. Every call and its job-id write
// finish before the process exits, so nothing is unknown and nothing is orphaned.
func TestSIGTERMDuringSubmissions(t *testing.T) {
	w := newWorld(t, simulator.Options{Faults: simulator.Faults{Latency: 1500 * time.Millisecond,
		Endpoints: []string{apiclient.EndpointRenderStoryboard}}})
	n := size(6, 20)
	old := w.startManager()
	// A manager that has called the service before: its key's circuit is closed (a new process
	// lets one trial call of a key go first).
	w.createRenders("warm", 0, 1)
	w.waitTerminal(30 * time.Second)
	w.createRenders("rolling", 0, n)
	// Paid calls go side by side up to callgate.UnprovenPaidCalls while the service has not
	// answered any of them (it takes 1.5 s here): that many are in flight at the SIGTERM.
	inFlightAtOnce := min(n, callgate.UnprovenPaidCalls)
	waitFor(t, 20*time.Second, "the submissions in flight", func() bool {
		items, err := w.renders(t.Context())
		must(t, err)
		inFlight := 0
		for _, vr := range items {
			if vr.Status.Submission != nil {
				inFlight++
			}
		}
		return inFlight >= inFlightAtOnce
	})
	took := old.kill(t, syscall.SIGTERM, shutdownWithin)
	t.Logf("the manager exited %s after SIGTERM (%v)", took.Round(time.Millisecond), old.err)
	if old.err != nil {
		t.Errorf("the SIGTERMed manager exited with %v", old.err)
	}

	w.startManager()
	w.waitTerminal(60 * time.Second)
	r := w.measure("SIGTERM during submissions (rolling update)")
	r.expectNoDoubleCharge(w)
	w.expectBillMatchesAudit(r)
	if r.UnknownCallMade+r.UnknownNoCall != 0 || r.Orphans != 0 || r.Ready != n+1 {
		t.Errorf("a rolling update must leave 0 SubmissionUnknown, 0 orphans and every object Ready: %s", r)
	}
	w.expectNoKeyLeak()
}

// SIGKILL in a loop while objects are submitted: a crash between the paid call and the job-id
// write cannot be told apart from a call that never reached the service, so such objects stall
// with SubmissionUnknown (the remaining window); with callbacks, the job's callback adopts them.
// Never a second job for one object, and never a silent orphan.
func TestSIGKILLLoop(t *testing.T) {
	for _, callbacks := range []bool{false, true} {
		name := "polling"
		if callbacks {
			name = "callbacks"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, simulator.Options{Faults: simulator.Faults{Latency: 300 * time.Millisecond,
				Endpoints: []string{apiclient.EndpointRenderStoryboard}}})
			var extra []string
			if callbacks {
				extra = callbackFlags(t)
			}
			n, kills := size(12, 200), size(3, 8)
			w.startManager(extra...)
			per := n / (kills + 1)
			for k := range kills {
				w.createRenders("killed", k*per, (k+1)*per)
				time.Sleep(time.Duration(400+150*k) * time.Millisecond)
				w.procs[len(w.procs)-1].kill(t, syscall.SIGKILL, 10*time.Second)
				w.startManager(extra...)
			}
			w.createRenders("killed", kills*per, n)
			w.waitTerminal(90 * time.Second)
			if callbacks {
				// Interrupted submissions whose job a late callback named: recovered, not orphaned.
				w.note = fmt.Sprintf("adopted from a late callback: %d", w.auditCounts()["adopted"])
			}
			r := w.measure(fmt.Sprintf("SIGKILL x%d during submissions (%s)", kills, name))
			r.expectNoDoubleCharge(w)
			if r.Objects != n {
				t.Errorf("objects lost: %d of %d", r.Objects, n)
			}
			w.expectNoKeyLeak()
		})
	}
}

// A service outage longer than a poll interval, as refused connections: the requests never
// left, so no submission is unknown and every object completes once the service is back.
func TestRefusedConnectionOutage(t *testing.T) {
	w := newWorld(t, simulator.Options{})
	n := size(6, 50)
	w.startManager()
	w.svc.down()
	w.createRenders("refused", 0, n)
	time.Sleep(2 * time.Second) // several poll intervals and backoffs of the manager
	w.svc.up()
	w.waitTerminal(90 * time.Second)
	r := w.measure("service outage: connection refused")
	r.expectNoDoubleCharge(w)
	w.expectBillMatchesAudit(r)
	if r.UnknownCallMade+r.UnknownNoCall != 0 || r.Ready != n {
		t.Errorf("a refused connection sent nothing: want 0 SubmissionUnknown and every object Ready: %s", r)
	}
	w.expectNoKeyLeak()
}

// A service outage answering 500 to everything, beginning while nothing is in flight: a 500 after
// sending is an unknown outcome, so no paid call may discover the outage. The key has had no
// answer for over a second, so the service is checked with the brand list before paying; the
// check fails and every paid submission waits until it succeeds.
func TestServerErrorOutage(t *testing.T) {
	w := newWorld(t, simulator.Options{})
	n := size(6, 50)
	w.startManager()
	// The manager is up and has rendered once before the outage begins: nothing is in flight.
	w.createRenders("before", 0, 1)
	w.waitTerminal(30 * time.Second)
	idle()
	w.sim.SetFaults(simulator.Faults{ServerErrorShare: 1})
	for i := range n {
		w.createRenders("outage", i, i+1)
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second)
	w.sim.SetFaults(simulator.Faults{})
	w.waitTerminal(90 * time.Second)
	r := w.measure("service outage: every call answered 500")
	r.expectNoDoubleCharge(w)
	w.expectBillMatchesAudit(r)
	if unknown := r.UnknownCallMade + r.UnknownNoCall; unknown > 0 || r.Ready != n+1 {
		t.Errorf("the outage began with nothing in flight: want 0 SubmissionUnknown, every object Ready: %s", r)
	}
	w.expectNoKeyLeak()
}

// idle lets the key go without an answer for longer than the controller's freshness window (one
// second): the outage cases begin "while nothing is in flight", and an outage that begins within
// that second of the key's last answer can still cost the one paid call that discovers it (see
// docs/reliability.md).
func idle() { time.Sleep(1500 * time.Millisecond) }

// A 429 storm: the key keeps exceeding its quota, and the service answers 429 (Retry-After: 1)
// to every call for 1.5 s out of every 3. A 429 creates nothing, so every object completes with
// one job; each 429 pauses the whole key until its Retry-After, so a storm costs a few calls
// per window instead of one per object and retry.
func TestRateLimitStorm(t *testing.T) {
	w := newWorld(t, simulator.Options{})
	n := size(8, 100)
	w.startManager()
	stop := make(chan struct{})
	stormy := make(chan struct{})
	go func() {
		defer close(stormy)
		for {
			w.sim.SetFaults(simulator.Faults{RateLimitShare: 1, RetryAfter: time.Second})
			select {
			case <-stop:
				w.sim.SetFaults(simulator.Faults{})
				return
			case <-time.After(1500 * time.Millisecond):
			}
			w.sim.SetFaults(simulator.Faults{})
			select {
			case <-stop:
				return
			case <-time.After(1500 * time.Millisecond):
			}
		}
	}()
	w.createRenders("storm", 0, n)
	w.waitTerminal(90 * time.Second)
	close(stop)
	<-stormy
	c := w.sim.Counters()
	w.note = fmt.Sprintf("%d calls answered 429, %d calls in all", c.Faults["rate_limit"], totalCalls(c))
	r := w.measure("429 storms (every call, 1.5 s out of every 3)")
	r.expectNoDoubleCharge(w)
	w.expectBillMatchesAudit(r)
	if r.UnknownCallMade+r.UnknownNoCall != 0 || r.Ready != n || r.Orphans != 0 {
		t.Errorf("a 429 creates nothing: want every object Ready with one job: %s", r)
	}
	if c.Faults["rate_limit"] == 0 {
		t.Error("the storm did not happen")
	}
	w.expectNoKeyLeak()
}

func totalCalls(c simulator.Counters) int {
	n := 0
	for _, v := range c.Calls {
		n += v
	}
	return n
}

// callbackFlags turns on the operator's callbacks on a free loopback port, with a stable key.
func callbackFlags(t *testing.T) []string {
	t.Helper()
	addr := freeAddr(t)
	keyFile := filepath.Join(t.TempDir(), "callback-key")
	must(t, os.WriteFile(keyFile, []byte(strings.Repeat("k", 32)), 0o600))
	return []string{"--callback-bind-address=" + addr, "--callback-public-url=http://" + addr,
		"--callback-key-file=" + keyFile, "--callback-poll-interval=5s"}
}

// freeAddr returns a loopback address with a free port.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	must(t, err)
	addr := ln.Addr().String()
	must(t, ln.Close())
	return addr
}

// Two replicas with leader election; the leader is stopped repeatedly while renders are
// submitted, and a new replica replaces it each time. A SIGTERMed leader finishes its paid
// calls and releases the lease (0 SubmissionUnknown, 0 orphans); a SIGKILLed one leaves the
// same window as a single replica's SIGKILL, and the standby takes over when the lease expires.
func TestLeaderHandOver(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			w := newWorld(t, simulator.Options{Faults: simulator.Faults{Latency: 300 * time.Millisecond,
				Endpoints: []string{apiclient.EndpointRenderStoryboard}}})
			ha := []string{"--leader-elect", "--leader-election-namespace=" + w.ns, "--leader-election-id=faults-" + w.ns,
				"--leader-elect-lease-duration=3s", "--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=500ms"}
			w.startManager(ha...)
			w.startManager(ha...)
			leader := w.waitLeader(t, nil)
			// Let the leader call once so that its key's circuit is closed (a new key's first paid
			// call goes alone).
			w.createRenders("warm", 0, 1)
			w.waitTerminal(30 * time.Second)

			n, handovers := size(12, 100), size(3, 6)
			per := n / handovers
			var takeovers []time.Duration
			for k := range handovers {
				w.createRenders("handover", k*per, (k+1)*per)
				time.Sleep(400 * time.Millisecond)
				killedAt := time.Now()
				leader.kill(t, sig, shutdownWithin)
				w.startManager(ha...) // the replacement pod
				leader = w.waitLeader(t, leader)
				takeovers = append(takeovers, time.Since(killedAt))
			}
			w.createRenders("handover", handovers*per, n)
			w.waitTerminal(90 * time.Second)
			w.note = fmt.Sprintf("take-over %s to %s", slices.Min(takeovers).Round(10*time.Millisecond),
				slices.Max(takeovers).Round(10*time.Millisecond))
			r := w.measure(fmt.Sprintf("2 replicas, leader %s x%d", sig, handovers))
			r.expectNoDoubleCharge(w)
			if sig == syscall.SIGTERM {
				w.expectBillMatchesAudit(r)
				if r.UnknownCallMade+r.UnknownNoCall != 0 || r.Orphans != 0 || r.Ready != n+1 {
					t.Errorf("a clean hand-over must leave 0 SubmissionUnknown, 0 orphans and every object Ready: %s", r)
				}
			}
			w.expectNoKeyLeak()
		})
	}
}

// Two replicas with callbacks behind one address, as behind a Service: the service's callbacks
// reach whichever replica the address picks, also the standby and also during a hand-over, and
// every one must still wake the leader's reconcile (the document promises no webhook retry). The
// fallback poll of jobs that call back is a minute, longer than the case lasts: every object
// completes through its callback or not at all.
func TestCallbacksOnEveryReplica(t *testing.T) {
	w := newWorld(t, simulator.Options{Faults: simulator.Faults{Latency: 300 * time.Millisecond,
		Endpoints: []string{apiclient.EndpointRenderStoryboard}}})
	lb := newCallbackBalancer(t)
	ha := []string{"--leader-elect", "--leader-election-namespace=" + w.ns, "--leader-election-id=faults-" + w.ns,
		"--leader-elect-lease-duration=3s", "--leader-elect-renew-deadline=2s", "--leader-elect-retry-period=500ms"}
	replica := func() { w.startManager(append(ha, lb.replicaFlags(t)...)...) }
	replica()
	replica()
	leader := w.waitLeader(t, nil)

	n, handovers := size(12, 60), size(2, 4)
	per := n / handovers
	for k := range handovers {
		w.createRenders("cb", k*per, (k+1)*per)
		time.Sleep(600 * time.Millisecond)
		leader.kill(t, syscall.SIGTERM, shutdownWithin)
		replica()
		leader = w.waitLeader(t, leader)
	}
	w.createRenders("cb", handovers*per, n)
	w.waitTerminal(45 * time.Second) // less than the one-minute fallback poll
	c := w.sim.Counters()
	w.note = fmt.Sprintf("callbacks: %d delivered (at least %d to a replica that never led), %d failed", c.WebhooksDelivered, lb.toStandby(w), c.WebhooksFailed)
	r := w.measure(fmt.Sprintf("2 replicas with callbacks behind one address, leader terminated x%d", handovers))
	r.expectNoDoubleCharge(w)
	w.expectBillMatchesAudit(r)
	if r.UnknownCallMade+r.UnknownNoCall != 0 || r.Orphans != 0 || r.Ready != n || c.WebhooksFailed != 0 {
		t.Errorf("every callback must reach a replica and wake the leader: want 0 SubmissionUnknown, 0 orphans, "+
			"every object Ready and no failed webhook: %s", r)
	}
	w.expectNoKeyLeak()
}

// waitLeader returns the live manager that leads, other than previous: the one whose log says
// it acquired the lease.
func (w *world) waitLeader(t *testing.T, previous *managerProc) *managerProc {
	t.Helper()
	var leader *managerProc
	waitFor(t, 30*time.Second, "a leader", func() bool {
		w.mu.Lock()
		procs := append([]*managerProc(nil), w.procs...)
		w.mu.Unlock()
		for _, p := range procs {
			select {
			case <-p.done:
				continue
			default:
			}
			b, err := os.ReadFile(p.log)
			if err == nil && p != previous && strings.Contains(strings.ToLower(string(b)), "successfully acquired lease") {
				leader = p
				return true
			}
		}
		return false
	})
	return leader
}

// A service outage as timeouts: every call hangs past --service-timeout (5 s here), beginning
// while nothing is in flight. A timeout after sending is an unknown outcome; the idle key's check
// before paying hangs instead, one at a time, and every paid submission waits for it.
func TestTimeoutOutage(t *testing.T) {
	w := newWorld(t, simulator.Options{})
	n := size(4, 20)
	w.startManager()
	w.createRenders("before", 0, 1)
	w.waitTerminal(30 * time.Second)
	idle()
	w.sim.SetFaults(simulator.Faults{Latency: 8 * time.Second})
	// The first submission's check hangs; the others, created after, wait for its answer.
	w.createRenders("timeout", 0, 1)
	time.Sleep(1500 * time.Millisecond)
	w.createRenders("timeout", 1, n)
	time.Sleep(5 * time.Second) // past the first call's timeout
	w.sim.SetFaults(simulator.Faults{})
	w.waitTerminal(90 * time.Second)
	r := w.measure("service outage: every call times out")
	r.expectNoDoubleCharge(w)
	if unknown := r.UnknownCallMade + r.UnknownNoCall; unknown > 0 || r.Ready != n+1 {
		t.Errorf("the outage began with nothing in flight: want 0 SubmissionUnknown, every object Ready: %s", r)
	}
	w.expectNoKeyLeak()
}

// Malformed and truncated answers: the service did the work but its answer cannot be read. A
// submission whose answer is unreadable may have created its job, so it stalls (and its job is
// an orphan the object names); reads are retried. Never a second job, never a silent orphan.
func TestUnreadableAnswers(t *testing.T) {
	w := newWorld(t, simulator.Options{Faults: simulator.Faults{MalformedShare: 0.15, TruncatedShare: 0.15}})
	n := size(8, 60)
	w.startManager()
	w.createRenders("garbled", 0, n)
	w.waitTerminal(90 * time.Second)
	r := w.measure("malformed and truncated answers (30% of calls)")
	r.expectNoDoubleCharge(w)
	c := w.sim.Counters().Faults
	if c["malformed"]+c["truncated"] == 0 {
		t.Error("no answer was garbled")
	}
	w.expectNoKeyLeak()
}

// A job that never ends: --job-deadline gives it up with a clear reason, and nothing is paid
// again by itself.
func TestJobThatNeverEnds(t *testing.T) {
	w := newWorld(t, simulator.Options{RenderDuration: 1000 * time.Hour}) // 5 hours here
	n := size(4, 20)
	w.startManager("--job-deadline=2s")
	w.createRenders("endless", 0, n)
	w.waitTerminal(60 * time.Second)
	r := w.measure("a job that never ends (--job-deadline=2s)")
	r.expectNoDoubleCharge(w)
	items, err := w.renders(t.Context())
	must(t, err)
	for i := range items {
		if !stalledWith(&items[i], "JobDeadlineExceeded") {
			t.Errorf("%s is not stalled with JobDeadlineExceeded: %+v", items[i].Name, items[i].Status.Conditions)
		}
	}
	if r.Jobs != n {
		t.Errorf("%d jobs for %d objects", r.Jobs, n)
	}
	w.expectNoKeyLeak()
}

// The API server failing the manager's status writes: 500s and conflicts (not applied) and
// answers lost after the write was applied. A write that fails changes nothing, and one whose
// answer was lost is read back, so nothing is paid twice and no submission becomes unknown.
func TestAPIServerWriteFaults(t *testing.T) {
	w := newWorld(t, simulator.Options{})
	proxy := newAPIProxy(t, restConfig, apiFaults{ServerError: 0.15, Conflict: 0.15, LostAnswer: 0.1})
	n := size(8, 60)
	w.startManager("--kubeconfig=" + proxy.kubeconfig)
	w.createRenders("writes", 0, n)
	w.waitTerminal(90 * time.Second)
	w.note = fmt.Sprintf("status writes failed: %d 500, %d conflicts, %d lost answers",
		proxy.counts["server_error"].Load(), proxy.counts["conflict"].Load(), proxy.counts["lost_answer"].Load())
	r := w.measure("API server: 15% of status writes 500, 15% conflict, 10% answer lost")
	r.expectNoDoubleCharge(w)
	w.expectBillMatchesAudit(r)
	if r.UnknownCallMade+r.UnknownNoCall != 0 || r.Ready != n || r.Orphans != 0 {
		t.Errorf("failed status writes must cost nothing: want every object Ready with one job: %s", r)
	}
	if proxy.counts["server_error"].Load()+proxy.counts["conflict"].Load()+proxy.counts["lost_answer"].Load() == 0 {
		t.Error("no status write was failed")
	}
	w.expectNoKeyLeak()
	w.stopAll()
}
