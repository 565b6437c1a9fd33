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
	"errors"
	"fmt"
	"time"
)

// CallbackOptions configure the callback server.
type CallbackOptions struct {
	// PublicURL is the URL at which the service reaches the callback server, without the path.
	PublicURL string
	// Key signs callback URLs. Keep it stable across restarts (a Secret), so that a callback for
	// a submission interrupted by a restart is still recognised.
	Key []byte
	// RateLimit and Burst bound the callbacks accepted per second.
	RateLimit float64
	Burst     int
	// PollInterval replaces the 10-30 s polling of jobs that will call back: polling remains
	// only as the fallback for lost callbacks.
	PollInterval time.Duration
	// Elected is closed once this replica leads (the manager's Elected()). The callback server
	// runs on every replica; one that does not lead records each callback on its object, which
	// wakes the leader. Nil means this replica always leads.
	Elected <-chan struct{}
}

// DefaultCallbackPollInterval is the fallback polling interval of jobs that will call back.
const DefaultCallbackPollInterval = 5 * time.Minute

func (o *CallbackOptions) validate() error {
	if o.PublicURL == "" {
		return errors.New("callback options: PublicURL is required")
	}
	if len(o.Key) < 32 {
		return fmt.Errorf("callback options: the signing key must be at least 32 bytes, got %d", len(o.Key))
	}
	if o.RateLimit <= 0 {
		o.RateLimit = 100
	}
	if o.Burst <= 0 {
		o.Burst = 200
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultCallbackPollInterval
	}
	return nil
}
