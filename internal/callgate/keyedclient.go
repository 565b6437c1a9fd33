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

package callgate

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/videoops/video-operator/internal/apiclient"
)

// KeyedClient is the service client of one API key as the controllers use it: every answer,
// whichever call it follows, tells the key's budget and circuit what the service is doing. A
// 429 pauses the key's calls; an answer shows the service up; a 5xx, a timeout or an unreadable
// answer to any call makes the next paid submission check the service first.
type KeyedClient struct {
	apiclient.Interface
	keyID    string
	budgets  *Budgets
	circuits *Circuits
	// pause is how long a 429 without a Retry-After pauses the key.
	pause time.Duration
}

var _ apiclient.Interface = (*KeyedClient)(nil)

// NewKeyedClient wraps api, the client of the key whose fingerprint is keyID. pause is how long a
// 429 without a Retry-After pauses the key.
func NewKeyedClient(api apiclient.Interface, keyID string, budgets *Budgets, circuits *Circuits, pause time.Duration) *KeyedClient {
	return &KeyedClient{Interface: api, keyID: keyID, budgets: budgets, circuits: circuits, pause: pause}
}

func (k *KeyedClient) observe(ctx context.Context, err error) {
	switch {
	case errors.Is(ctx.Err(), context.Canceled) && err != nil:
		// Cut by shutdown: it says nothing about the service. A call that ran out of its own
		// deadline did: the service did not answer in time.
	case apiclient.IsRateLimited(err):
		k.budgets.Pause(k.keyID, cmp.Or(apiclient.RetryAfter(err), k.pause))
		k.circuits.Answered(k.keyID)
	case ServiceAnswers(err):
		k.circuits.Answered(k.keyID)
	case !apiclient.IsNotSubmitted(err):
		// Sent, and no usable answer: a paid call now could be one nobody can identify.
		k.circuits.Troubled(k.keyID)
	}
}

// CreateStoryboardPreview implements apiclient.Interface.
func (k *KeyedClient) CreateStoryboardPreview(ctx context.Context, body any) (*apiclient.JobCreated, error) {
	r, err := k.Interface.CreateStoryboardPreview(ctx, body)
	k.observe(ctx, err)
	return r, err
}

// RenderStoryboard implements apiclient.Interface.
func (k *KeyedClient) RenderStoryboard(ctx context.Context, body any) (*apiclient.JobCreated, error) {
	r, err := k.Interface.RenderStoryboard(ctx, body)
	k.observe(ctx, err)
	return r, err
}

// RenderProject implements apiclient.Interface.
func (k *KeyedClient) RenderProject(ctx context.Context, projectID string) (*apiclient.JobCreated, error) {
	r, err := k.Interface.RenderProject(ctx, projectID)
	k.observe(ctx, err)
	return r, err
}

// GetJob implements apiclient.Interface.
func (k *KeyedClient) GetJob(ctx context.Context, jobID string) (*apiclient.Job, error) {
	r, err := k.Interface.GetJob(ctx, jobID)
	k.observe(ctx, err)
	return r, err
}

// ListVideoBrands implements apiclient.Interface.
func (k *KeyedClient) ListVideoBrands(ctx context.Context) ([]apiclient.Brand, error) {
	r, err := k.Interface.ListVideoBrands(ctx)
	k.observe(ctx, err)
	return r, err
}
