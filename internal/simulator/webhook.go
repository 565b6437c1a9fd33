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

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// The job-result webhook ("Events"): when a job with a webhook ends, its result is POSTed there
// once, in the job status response's shape plus the request's webhookInput. The document gives
// no retries, signing or timeout; the simulator sends one attempt bounded by WebhookTimeout and
// counts what happened (Counters.Webhooks*).

type delivery struct {
	jobID string
	url   string
	body  []byte
}

func (s *Server) webhookLoop() {
	defer s.wg.Done()
	t := time.NewTicker(s.opts.TickInterval)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
			s.dispatchDue()
		}
	}
}

// dispatchDue starts the delivery of every webhook whose job has ended by now.
func (s *Server) dispatchDue() {
	now := s.clock.Now()
	var out []delivery
	s.mu.Lock()
	for len(s.due) > 0 && !s.due[0].ends.After(now) {
		j := heap.Pop(&s.due).(*job)
		j.webhookSent = true
		payload := s.viewLocked(j, now)
		if s.opts.ReflectAuthorization {
			reflectHeader(payload, s.reflected[j.keyID])
		}
		if len(j.webhookInput) > 0 {
			payload["webhookInput"] = j.webhookInput
		}
		if s.faults.DropWebhookShare > 0 && s.rng.Float64() < s.faults.DropWebhookShare {
			s.webhookCounts["dropped"]++
			continue
		}
		body, err := json.Marshal(payload)
		if err != nil {
			s.webhookCounts["failed"]++
			continue
		}
		out = append(out, delivery{jobID: j.id, url: j.webhook, body: body})
	}
	s.mu.Unlock()
	for _, d := range out {
		s.wg.Add(1)
		go s.deliver(d)
	}
}

func (s *Server) deliver(d delivery) {
	defer s.wg.Done()
	select {
	case s.webhookSem <- struct{}{}:
		defer func() { <-s.webhookSem }()
	case <-s.ctx.Done():
		s.countWebhook("failed")
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.WebhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url, bytes.NewReader(d.body))
	if err != nil {
		s.countWebhook("failed")
		s.log.Info("Webhook not sent", "job", d.jobID, "error", err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "video-service-sim")
	resp, err := s.webhookClient.Do(req)
	if err != nil {
		s.countWebhook("failed")
		s.log.Info("Webhook failed", "job", d.jobID, "error", err)
		return
	}
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		s.countWebhook("failed")
		s.log.Info("Webhook refused", "job", d.jobID, "status", resp.StatusCode)
		return
	}
	s.countWebhook("delivered")
	s.log.Info("Webhook delivered", "job", d.jobID, "status", resp.StatusCode)
}

func (s *Server) countWebhook(what string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.webhookCounts[what]++
}
