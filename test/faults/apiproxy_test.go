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
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// apiFaults are failures of the manager's status writes, injected between the manager and the
// API server. Each share is drawn per status PATCH.
type apiFaults struct {
	// ServerError: answered 500, not applied.
	ServerError float64
	// Conflict: answered 409 Conflict, not applied.
	Conflict float64
	// LostAnswer: applied, but answered 504 as if the answer never came.
	LostAnswer float64
}

// apiProxy stands between one manager and the API server: it forwards everything (watches
// stream through) and fails status writes as configured.
type apiProxy struct {
	srv        *httptest.Server
	kubeconfig string
	faults     apiFaults
	mu         sync.Mutex
	rng        *rand.Rand
	counts     map[string]*atomic.Int32
}

// newAPIProxy starts a proxy to the API server of cfg and writes a kubeconfig that points at it.
func newAPIProxy(t *testing.T, cfg *rest.Config, f apiFaults) *apiProxy {
	t.Helper()
	target, err := url.Parse(cfg.Host)
	must(t, err)
	transport, err := rest.TransportFor(cfg)
	must(t, err)
	p := &apiProxy{faults: f, rng: rand.New(rand.NewPCG(1, 2)), //nolint:gosec // fault draws
		counts: map[string]*atomic.Int32{"server_error": {}, "conflict": {}, "lost_answer": {}}}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	rp.FlushInterval = -1 // watches stream
	p.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPatch || !strings.HasSuffix(r.URL.Path, "/status") {
			rp.ServeHTTP(w, r)
			return
		}
		switch p.draw() {
		case "server_error":
			writeStatus(w, http.StatusInternalServerError, "InternalError", "injected: the API server failed")
		case "conflict":
			writeStatus(w, http.StatusConflict, "Conflict", "injected: the object has been modified; please apply your changes to the latest version and try again")
		case "lost_answer":
			rec := httptest.NewRecorder()
			rp.ServeHTTP(rec, r)
			writeStatus(w, http.StatusGatewayTimeout, "Timeout", "injected: the answer to the write was lost")
		default:
			rp.ServeHTTP(w, r)
		}
	}))
	// Watches stream through the proxy for as long as the API server lets them: cut them, or
	// Close waits for them.
	t.Cleanup(func() {
		p.srv.CloseClientConnections()
		p.srv.Close()
	})

	kc := clientcmdapi.NewConfig()
	kc.Clusters["proxy"] = &clientcmdapi.Cluster{Server: p.srv.URL, InsecureSkipTLSVerify: true}
	kc.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	kc.CurrentContext = "proxy"
	p.kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	must(t, clientcmd.WriteToFile(*kc, p.kubeconfig))
	return p
}

// draw picks the fault of one status write.
func (p *apiProxy) draw() string {
	p.mu.Lock()
	x := p.rng.Float64()
	p.mu.Unlock()
	var fault string
	switch f := p.faults; {
	case x < f.ServerError:
		fault = "server_error"
	case x < f.ServerError+f.Conflict:
		fault = "conflict"
	case x < f.ServerError+f.Conflict+f.LostAnswer:
		fault = "lost_answer"
	default:
		return ""
	}
	p.counts[fault].Add(1)
	return fault
}

func writeStatus(w http.ResponseWriter, code int, reason, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = io.Copy(w, bytes.NewBufferString(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"`+
		message+`","reason":"`+reason+`","code":`+strconv.Itoa(code)+`}`))
}
