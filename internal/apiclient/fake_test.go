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
	"strings"
	"testing"
)

func TestFakeFailsLoudlyWhenUnset(t *testing.T) {
	f := &Fake{}
	ctx := context.Background()
	calls := map[string]func() error{
		"CreateStoryboardPreview": func() error { _, err := f.CreateStoryboardPreview(ctx, map[string]any{}); return err },
		"RenderStoryboard":        func() error { _, err := f.RenderStoryboard(ctx, map[string]any{}); return err },
		"RenderProject":           func() error { _, err := f.RenderProject(ctx, "p"); return err },
		"GetJob":                  func() error { _, err := f.GetJob(ctx, "j"); return err },
		"ListVideoBrands":         func() error { _, err := f.ListVideoBrands(ctx); return err },
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, ErrFakeNotImplemented) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
		if f.CallCount(name) != 1 {
			t.Errorf("%s not recorded", name)
		}
	}
	if len(f.Calls()) != len(calls) {
		t.Errorf("calls %v", f.Calls())
	}
}

func TestFakeUsesItsFunctions(t *testing.T) {
	f := &Fake{GetJobFunc: func(_ context.Context, id string) (*Job, error) {
		return &Job{JobID: id, Data: JobData{Status: JobStatusCompleted}}, nil
	}}
	j, err := f.GetJob(context.Background(), "j-1")
	if err != nil || j.JobID != "j-1" || f.Calls()[0] != (FakeCall{Method: "GetJob", Arg: "j-1"}) {
		t.Fatalf("%+v %v", j, err)
	}
	ff := &FakeFactory{Client: f}
	c, err := ff.ForKey("k")
	if err != nil || c != Interface(f) || ff.Keys()[0] != "k" {
		t.Fatalf("factory %v %v", c, err)
	}
	if _, err := (&FakeFactory{}).ForKey("k"); !errors.Is(err, ErrFakeNotImplemented) {
		t.Errorf("unset factory: %v", err)
	}
}
