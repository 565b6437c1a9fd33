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

package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/videoops/video-operator/internal/testutil"
)

func TestHelpDocumentsEveryFlag(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"--help"}, io.Discard, &out, nil)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("run --help: %v", err)
	}
	for _, f := range []string{"-listen", "-api-key", "-api-keys-file", "-time-scale", "-clearance-expiry", "-seed",
		"-fault-429", "-fault-500", "-fault-html", "-fault-malformed", "-fault-truncated", "-fault-latency",
		"-fault-drop-webhook", "-brand", "-project", "-voice", "VIDEO_SIM_API_KEYS"} {
		if !strings.Contains(out.String(), f) {
			t.Errorf("help lacks %s", f)
		}
	}
}

func TestRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--brand", "no-equals"}, {"--project", "=x"}, {"stray"}, {"--api-keys-file", "/nonexistent"}} {
		if err := run(context.Background(), args, io.Discard, io.Discard, nil); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

func TestServesAndShutsDown(t *testing.T) {
	t.Setenv(keysEnv, "env-key-1234")
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var out testutil.SyncBuffer
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--quiet", "--brand", "b1=House"}, &out, io.Discard, ready)
	}()
	var base string
	select {
	case base = <-ready:
	case err := <-done:
		t.Fatalf("run: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("not ready")
	}
	reqCtx, reqCancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer reqCancel()
	req, _ := http.NewRequestWithContext(reqCtx, http.MethodGet, base+"/v1/brands/video", nil)
	req.Header.Set("Authorization", "env-key-1234")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "House") {
		t.Errorf("brands: %d %s", resp.StatusCode, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no shutdown")
	}
	if !strings.Contains(out.String(), "serving "+base) || !strings.Contains(out.String(), "stopped") {
		t.Errorf("output %q", out.String())
	}
}
