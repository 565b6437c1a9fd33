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

package testutil

import (
	"flag"
	"fmt"
	"strconv"
	"testing"
)

// recorder is a testing.TB that records a skip or a failure and stops the call there, as the
// real ones do.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Skip(args ...any) {
	r.skipped = fmt.Sprint(args...)
	panic(r)
}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	panic(r)
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(r)
}

// record runs fn with a recorder and returns it, with the value fn returned.
func record(t *testing.T, fn func(testing.TB) string) (rec *recorder, got string) {
	rec = &recorder{TB: t}
	defer func() {
		if p := recover(); p != nil && p != rec {
			panic(p)
		}
	}()
	return rec, fn(rec)
}

// withShort runs fn with -short set to short.
func withShort(t *testing.T, short bool, fn func()) {
	was := testing.Short()
	if err := flag.Set("test.short", strconv.FormatBool(short)); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = flag.Set("test.short", strconv.FormatBool(was)) }()
	fn()
}

// A missing tool skips a -short run and fails any other; a tool that is set is returned. An API
// server test is skipped under -short whatever the environment, and runs otherwise.
func TestToolAndAPIServerSkipOnlyUnderShort(t *testing.T) {
	const env = "VIDEO_OPERATOR_TESTUTIL_TOOL"
	tool := func(tb testing.TB) string { return Tool(tb, env) }
	apiServer := func(tb testing.TB) string { APIServer(tb); return "ran" }

	t.Setenv(env, "")
	withShort(t, true, func() {
		if rec, _ := record(t, tool); rec.skipped == "" || rec.failed != "" {
			t.Errorf("-short, %s unset: skipped %q, failed %q; want a skip", env, rec.skipped, rec.failed)
		}
		if rec, _ := record(t, apiServer); rec.skipped != ShortSkipsAPIServer {
			t.Errorf("-short: an API server test skipped with %q, want %q", rec.skipped, ShortSkipsAPIServer)
		}
	})
	withShort(t, false, func() {
		if rec, _ := record(t, tool); rec.failed == "" || rec.skipped != "" {
			t.Errorf("without -short, %s unset: skipped %q, failed %q; want a failure", env, rec.skipped, rec.failed)
		}
		if rec, got := record(t, apiServer); got != "ran" || rec.skipped != "" || rec.failed != "" {
			t.Errorf("without -short an API server test must run: got %q, skipped %q, failed %q", got, rec.skipped, rec.failed)
		}
	})
	t.Setenv(env, "/opt/tool")
	withShort(t, true, func() {
		if rec, got := record(t, tool); got != "/opt/tool" || rec.skipped != "" {
			t.Errorf("-short, %s set: got %q, skipped %q; want the tool", env, got, rec.skipped)
		}
	})
}
