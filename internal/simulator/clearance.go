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

package simulator

import "time"

// clearanceAlphabet avoids look-alike characters, as a code is typed into an upload form.
const clearanceAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"

// clearanceLocked returns the job's platform clearance code ("Resources and their fields",
// job status: one code per video, valid ClearanceExpiry, the same code on repeated polls until it
// expires, then a fresh one). The first code is issued on the first read after completion, which
// is also when the webhook payload is built. s.mu is held.
func (s *Server) clearanceLocked(j *job, now time.Time) (string, time.Time) {
	if j.clearanceCode == "" || !now.Before(j.clearanceExpires) {
		b := make([]byte, 0, 19)
		b = append(b, "PCC"...)
		for i := 0; i < 12; i++ {
			if i%4 == 0 {
				b = append(b, '-')
			}
			b = append(b, clearanceAlphabet[s.rng.IntN(len(clearanceAlphabet))])
		}
		j.clearanceCode = string(b)
		j.clearanceExpires = now.Add(s.opts.ClearanceExpiry)
		j.clearanceIssued++
	}
	return j.clearanceCode, j.clearanceExpires
}
