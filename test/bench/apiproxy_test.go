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

package bench

import (
	"context"
	"errors"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// countingProxy stands between the manager and the API server and counts the manager's requests
// by verb and resource, and its status writes per object. It listens in plain HTTP on the
// loopback interface, so the only TLS on the path is the API server's own, and it does nothing
// but count: a mutex and a map lookup per request.
type countingProxy struct {
	srv        *http.Server
	url        string
	kubeconfig string

	mu sync.Mutex
	// requests counts every request by "VERB resource[/subresource]", VERB being GET, LIST,
	// WATCH, CREATE (POST), UPDATE (PUT), PATCH or DELETE.
	requests map[string]int
	// statusWrites counts PATCH and PUT of the status subresource per "resource ns/name".
	statusWrites map[string]int
	// statusWriteCodes counts the answers to status writes by resource and HTTP status code.
	statusWriteCodes map[string]map[int]int
}

func startCountingProxy(cfg *rest.Config, dir string) (*countingProxy, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	p := &countingProxy{requests: map[string]int{}, statusWrites: map[string]int{}, statusWriteCodes: map[string]map[int]int{}}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	rp.FlushInterval = -1 // watch events go through as they come
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p.url = "http://" + ln.Addr().String()
	p.srv = &http.Server{Handler: p.handler(rp), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := p.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(err) // the harness cannot measure anything without it
		}
	}()

	kc := clientcmdapi.NewConfig()
	kc.Clusters["bench"] = &clientcmdapi.Cluster{Server: p.url}
	kc.AuthInfos["bench"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: "bench"}
	kc.CurrentContext = "bench"
	p.kubeconfig = filepath.Join(dir, "kubeconfig-proxy")
	if err := clientcmd.WriteToFile(*kc, p.kubeconfig); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *countingProxy) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := classify(r)
		statusWrite := req.subresource == "status" && (r.Method == http.MethodPatch || r.Method == http.MethodPut)
		p.mu.Lock()
		p.requests[req.String()]++
		if statusWrite {
			p.statusWrites[req.resource+" "+req.namespace+"/"+req.name]++
		}
		p.mu.Unlock()
		if !statusWrite {
			next.ServeHTTP(w, r)
			return
		}
		cw := &codeWriter{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(cw, r)
		p.mu.Lock()
		if p.statusWriteCodes[req.resource] == nil {
			p.statusWriteCodes[req.resource] = map[int]int{}
		}
		p.statusWriteCodes[req.resource][cw.code]++
		p.mu.Unlock()
	})
}

// Close stops the proxy and cuts the watches that stream through it.
func (p *countingProxy) Close() { _ = p.srv.Close() }

// counts returns copies of the counters.
func (p *countingProxy) counts() (requests, statusWrites map[string]int, codes map[string]map[int]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	requests, statusWrites, codes = map[string]int{}, map[string]int{}, map[string]map[int]int{}
	for k, v := range p.requests {
		requests[k] = v
	}
	for k, v := range p.statusWrites {
		statusWrites[k] = v
	}
	for resource, byCode := range p.statusWriteCodes {
		codes[resource] = maps.Clone(byCode)
	}
	return requests, statusWrites, codes
}

// codeWriter records the status code of an answer.
type codeWriter struct {
	http.ResponseWriter
	code int
}

func (w *codeWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *codeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// apiRequest is what a request to the API server addresses.
type apiRequest struct {
	verb, resource, subresource, namespace, name string
}

func (a apiRequest) String() string {
	s := a.verb + " " + a.resource
	if a.subresource != "" {
		s += "/" + a.subresource
	}
	return s
}

// classify reads the verb and resource of a request path: /api/v1/... or
// /apis/GROUP/VERSION/..., then [namespaces/NS/]RESOURCE[/NAME[/SUBRESOURCE]]. Other paths
// (discovery, /version) count as "GET other".
func classify(r *http.Request) apiRequest {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var tail []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		tail = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		tail = parts[3:]
	}
	a := apiRequest{}
	if len(tail) >= 2 && tail[0] == "namespaces" && len(tail) != 2 {
		a.namespace, tail = tail[1], tail[2:]
	}
	if len(tail) > 0 {
		a.resource = tail[0]
	} else {
		a.resource = "other"
	}
	if len(tail) > 1 {
		a.name = tail[1]
	}
	if len(tail) > 2 {
		a.subresource = tail[2]
	}
	switch r.Method {
	case http.MethodGet:
		switch {
		case r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1":
			a.verb = "WATCH"
		case a.name == "" && a.resource != "other":
			a.verb = "LIST"
		default:
			a.verb = "GET"
		}
	case http.MethodPost:
		a.verb = "CREATE"
	case http.MethodPut:
		a.verb = "UPDATE"
	default:
		a.verb = r.Method
	}
	return a
}
