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

package apiclient

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrFakeNotImplemented is returned (wrapped, naming the method) by a Fake method whose function
// is not set, so that a test exercising an unexpected call fails loudly instead of getting a zero
// value that looks like success.
var ErrFakeNotImplemented = errors.New("apiclient.Fake: method called but its function is not set")

// FakeCall records one call to a Fake: the method name and its argument (the body, project id or
// job id; nil for ListVideoBrands).
type FakeCall struct {
	Method string
	Arg    any
}

// Fake implements Interface with one function per method, for controller unit tests (the idea
// of cert-manager's pkg/acme/client/fake.go). Unset functions return ErrFakeNotImplemented.
// Every call is recorded, set or not. Safe for concurrent use once the functions are set.
type Fake struct {
	CreateStoryboardPreviewFunc func(ctx context.Context, body any) (*JobCreated, error)
	RenderStoryboardFunc        func(ctx context.Context, body any) (*JobCreated, error)
	RenderProjectFunc           func(ctx context.Context, projectID string) (*JobCreated, error)
	GetJobFunc                  func(ctx context.Context, jobID string) (*Job, error)
	ListVideoBrandsFunc         func(ctx context.Context) ([]Brand, error)

	mu    sync.Mutex
	calls []FakeCall
}

var _ Interface = (*Fake)(nil)

func (f *Fake) record(method string, arg any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, FakeCall{Method: method, Arg: arg})
}

func notImplemented(method string) error {
	return fmt.Errorf("%w: %s (set Fake.%sFunc)", ErrFakeNotImplemented, method, method)
}

// Calls returns a copy of the calls so far, in order.
func (f *Fake) Calls() []FakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]FakeCall(nil), f.calls...)
}

// CallCount returns how many times method (for example "RenderStoryboard") was called.
func (f *Fake) CallCount(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c.Method == method {
			n++
		}
	}
	return n
}

// CreateStoryboardPreview implements Interface.
func (f *Fake) CreateStoryboardPreview(ctx context.Context, body any) (*JobCreated, error) {
	f.record("CreateStoryboardPreview", body)
	if f.CreateStoryboardPreviewFunc == nil {
		return nil, notImplemented("CreateStoryboardPreview")
	}
	return f.CreateStoryboardPreviewFunc(ctx, body)
}

// RenderStoryboard implements Interface.
func (f *Fake) RenderStoryboard(ctx context.Context, body any) (*JobCreated, error) {
	f.record("RenderStoryboard", body)
	if f.RenderStoryboardFunc == nil {
		return nil, notImplemented("RenderStoryboard")
	}
	return f.RenderStoryboardFunc(ctx, body)
}

// RenderProject implements Interface.
func (f *Fake) RenderProject(ctx context.Context, projectID string) (*JobCreated, error) {
	f.record("RenderProject", projectID)
	if f.RenderProjectFunc == nil {
		return nil, notImplemented("RenderProject")
	}
	return f.RenderProjectFunc(ctx, projectID)
}

// GetJob implements Interface.
func (f *Fake) GetJob(ctx context.Context, jobID string) (*Job, error) {
	f.record("GetJob", jobID)
	if f.GetJobFunc == nil {
		return nil, notImplemented("GetJob")
	}
	return f.GetJobFunc(ctx, jobID)
}

// ListVideoBrands implements Interface.
func (f *Fake) ListVideoBrands(ctx context.Context) ([]Brand, error) {
	f.record("ListVideoBrands", nil)
	if f.ListVideoBrandsFunc == nil {
		return nil, notImplemented("ListVideoBrands")
	}
	return f.ListVideoBrandsFunc(ctx)
}

// FakeFactory implements Factory for tests. ForKeyFunc, when set, decides; otherwise Client is
// returned for every key; with neither set, ForKey fails loudly. Keys asked for are recorded so a
// test can check that a rotated Secret was picked up (it is a test double: nothing is logged).
type FakeFactory struct {
	ForKeyFunc func(apiKey string) (Interface, error)
	Client     Interface

	mu   sync.Mutex
	keys []string
}

var _ Factory = (*FakeFactory)(nil)

// ForKey implements Factory.
func (f *FakeFactory) ForKey(apiKey string) (Interface, error) {
	f.mu.Lock()
	f.keys = append(f.keys, apiKey)
	f.mu.Unlock()
	switch {
	case f.ForKeyFunc != nil:
		return f.ForKeyFunc(apiKey)
	case f.Client != nil:
		return f.Client, nil
	}
	return nil, fmt.Errorf("%w: ForKey (set FakeFactory.ForKeyFunc or FakeFactory.Client)", ErrFakeNotImplemented)
}

// Keys returns the keys ForKey was called with, in order.
func (f *FakeFactory) Keys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.keys...)
}
