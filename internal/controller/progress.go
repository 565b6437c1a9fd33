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

package controller

import (
	"sync"
	"time"

	"k8s.io/utils/clock"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// progressWrites remembers when each running job's status was last written, so that a read
// that only finds more progress writes nothing until the progress interval has passed
// (docs/architecture.md "Load on the cluster": a render costs 3 status writes in the calm case, and
// every other write is there for a stated reason; progress is one, at most once per interval).
// A job this process never wrote (after a restart) gets its progress written at the first read.
type progressWrites struct {
	clock    clock.PassiveClock
	interval time.Duration

	mu      sync.Mutex
	written map[string]time.Time // by job id
	// sweepAt is the size at which entries past the interval are dropped (jobs of deleted
	// objects never end here).
	sweepAt int
}

func newProgressWrites(c clock.PassiveClock, interval time.Duration) *progressWrites {
	return &progressWrites{clock: c, interval: interval, written: map[string]time.Time{}}
}

// wrote records a write of the job's status (its job id, or its progress).
func (p *progressWrites) wrote(jobID string) {
	if p.interval <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	p.written[jobID] = now
	if len(p.written) > p.sweepAt {
		for id, at := range p.written {
			if now.Sub(at) >= p.interval {
				delete(p.written, id)
			}
		}
		p.sweepAt = max(1024, 2*len(p.written))
	}
}

// due reports whether the job's progress may be written now.
func (p *progressWrites) due(jobID string) bool {
	if p.interval <= 0 {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.written[jobID]
	return !ok || p.clock.Since(at) >= p.interval
}

// ended forgets the job: its end is always written.
func (p *progressWrites) ended(jobID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.written, jobID)
}

// progressFields are the fields a read of a running job moves.
type progressFields struct {
	progress *int32
	message  string
	state    string
	omitted  []string
}

func progressOf(st *videov1alpha1.JobStatus) progressFields {
	return progressFields{progress: st.Progress, message: st.ProgressMessage, state: st.RenderState, omitted: st.OutputsOmitted}
}

func (f progressFields) restore(st *videov1alpha1.JobStatus) {
	st.Progress, st.ProgressMessage, st.RenderState, st.OutputsOmitted = f.progress, f.message, f.state, f.omitted
}
