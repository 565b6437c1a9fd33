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
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// callbackBalancer stands for the Service in front of the replicas' callback servers: each
// callback goes to the next replica in turn, leader or not, and skips a replica that refuses the
// connection (a pod gone from the Service's endpoints).
type callbackBalancer struct {
	srv     *httptest.Server
	keyFile string
	client  *http.Client

	mu       sync.Mutex
	backends []string
	next     int
	// sent counts the callbacks each replica's callback server accepted, by address.
	sent map[string]int
}

func newCallbackBalancer(t *testing.T) *callbackBalancer {
	t.Helper()
	b := &callbackBalancer{keyFile: filepath.Join(t.TempDir(), "callback-key"), sent: map[string]int{},
		client: &http.Client{Timeout: 10 * time.Second}}
	must(t, os.WriteFile(b.keyFile, []byte(strings.Repeat("k", 32)), 0o600))
	b.srv = httptest.NewServer(http.HandlerFunc(b.forward))
	t.Cleanup(b.srv.Close)
	return b
}

// replicaFlags are the callback flags of one more replica: its own listener, the shared key and
// the balancer's public address.
func (b *callbackBalancer) replicaFlags(t *testing.T) []string {
	t.Helper()
	addr := freeAddr(t)
	b.mu.Lock()
	b.backends = append(b.backends, addr)
	b.mu.Unlock()
	return []string{"--callback-bind-address=" + addr, "--callback-public-url=" + b.srv.URL,
		"--callback-key-file=" + b.keyFile, "--callback-poll-interval=1m"}
}

func (b *callbackBalancer) forward(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b.mu.Lock()
	backends := append([]string(nil), b.backends...)
	start := b.next
	b.next++
	b.mu.Unlock()
	for i := range backends {
		addr := backends[(start+i)%len(backends)]
		req, err := http.NewRequestWithContext(r.Context(), r.Method, "http://"+addr+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			continue
		}
		req.Header = r.Header.Clone()
		resp, err := b.client.Do(req)
		if err != nil {
			continue // not listening: the next replica
		}
		b.mu.Lock()
		if resp.StatusCode < 300 {
			b.sent[addr]++
		}
		b.mu.Unlock()
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		_ = resp.Body.Close()
		return
	}
	http.Error(w, "no replica answers", http.StatusBadGateway)
}

// toStandby counts the callbacks accepted by a replica that was not leading when the case ended
// or had never led: those reached the leader's reconcile through the status receipt.
func (b *callbackBalancer) toStandby(w *world) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for addr, count := range b.sent {
		if !w.everLed(addr) {
			n += count
		}
	}
	return n
}

// everLed reports whether the replica whose callback server listens on addr ever held the lease.
func (w *world) everLed(addr string) bool {
	w.mu.Lock()
	procs := append([]*managerProc(nil), w.procs...)
	w.mu.Unlock()
	for _, p := range procs {
		if !slices.Contains(p.cmd.Args, "--callback-bind-address="+addr) {
			continue
		}
		b, err := os.ReadFile(p.log)
		return err != nil || strings.Contains(strings.ToLower(string(b)), "successfully acquired lease")
	}
	return true
}
