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

// Package simulator is the video service's interface document made executable: an http.Handler
// serving, under /serviceapis, the five endpoints the operator uses plus GET /v2/projects, with the
// document's shapes, status codes, validation, job lifecycle, clearance codes and webhook, plus
// fault injection, a time scale and counters for tests. It is a test double: it keeps everything
// in memory and accepts the API keys it is given.
package simulator

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// BasePath is the path prefix of every API endpoint ("{base_url} is the service host followed by
// the path prefix /serviceapis").
const BasePath = "/serviceapis"

// Endpoint names used by the counters; the same names as the operator's client uses for metrics.
const (
	EndpointCreateStoryboard = "create_storyboard"
	EndpointRenderStoryboard = "render_storyboard"
	EndpointRenderProject    = "render_project"
	EndpointGetJob           = "get_job"
	EndpointListBrands       = "list_brands"
	EndpointListProjects     = "list_projects"
	EndpointFiles            = "files"
)

// Nominal durations of the real service, before Options.TimeScale.
const (
	DefaultPreviewDuration   = 30 * time.Second
	DefaultRenderDuration    = 2 * time.Minute
	DefaultDesignDurationMin = 1 * time.Minute
	DefaultDesignDurationMax = 3 * time.Minute
	DefaultClearanceExpiry   = 7 * 24 * time.Hour
	DefaultWebhookTimeout    = 10 * time.Second
	DefaultMaxRequestBytes   = 2 << 20
	DefaultTickInterval      = 10 * time.Millisecond
)

// Options configure a Server. The zero value is usable: it accepts no key until APIKeys is set.
type Options struct {
	// APIKeys are the keys accepted in the Authorization header, compared exactly: a
	// "Bearer "-prefixed key is refused, as by the real service.
	APIKeys []string
	// Brands are listed by GET /v1/brands/video and accepted as brandId or brandName. Nil means
	// DefaultBrands().
	Brands []Brand
	// Projects are known to GET /v2/projects and POST /v2/projects/{id}/render. Nil means
	// DefaultProjects().
	Projects []Project
	// KnownVoices are the voice names a speaker may use, matched case-insensitively. Nil means
	// DefaultVoices(). Any other speaker fails the job with TEXT_TO_VIDEO_FAILED unless it is a
	// premium-provider voice id (see IsPremiumVoiceID).
	KnownVoices []string

	// TimeScale multiplies every job duration: 1 is the real service's pace, 0.01 turns a
	// two-minute render into 1.2 s. Zero means 1. It does not scale ClearanceExpiry or
	// JobRetention, which tests move with Clock.
	TimeScale float64
	// PreviewDuration, RenderDuration and the design step's range are the unscaled durations.
	// Zero means the Default constants.
	PreviewDuration time.Duration
	RenderDuration  time.Duration
	// RenderDurationMax, when above RenderDuration, makes each render's unscaled duration a draw
	// from the seeded source, uniform in [RenderDuration, RenderDurationMax]: a load of jobs that
	// all end at once is not what a real service produces, and a benchmark needs the spread.
	RenderDurationMax time.Duration
	DesignDurationMin time.Duration
	DesignDurationMax time.Duration
	// ClearanceExpiry is how long a platform clearance code is valid. Zero means 7 days.
	ClearanceExpiry time.Duration
	// JobRetention, when positive, makes the service forget ("clean") a job that long after it
	// ended: GET answers JOB_NOT_FOUND. Zero keeps jobs for the server's life.
	JobRetention time.Duration
	// ScopeJobsByKey makes each job visible only to the API key that created it: GET of another
	// key's job answers JOB_NOT_FOUND, as a key of another account would be answered. The
	// interface document does not say whether keys of one account share their jobs; off, any
	// accepted key reads any job (keys of one account).
	ScopeJobsByKey bool
	// Documents are the texts the service finds at a blogUrl or pptUrl, by URL: script mode
	// narrates a blog post word for word ("AI storyboard rules" 2), one scene per non-empty line
	// (a paragraph, or a slide's notes), so a long document makes a long video whose length no
	// request field states. A URL not listed is a short document: three key points of an article,
	// five slides of a deck.
	Documents map[string]string

	// Clock gives the time; nil means the wall clock. Tests pass a *FakeClock.
	Clock Clock
	// Seed seeds the random source (job ids, design times, faults, codes), so a run with the same
	// seed and the same requests behaves the same. Zero picks a seed from the time.
	Seed uint64
	// Faults are injected into API answers; SetFaults changes them at run time.
	Faults Faults

	// WebhookTimeout bounds one webhook POST. Zero means 10 s.
	WebhookTimeout time.Duration
	// WebhookClient sends webhooks; nil means a client with WebhookTimeout.
	WebhookClient *http.Client
	// PublicURL is the scheme and host put in output URLs (for example http://127.0.0.1:8080).
	// Empty means http:// plus the Host of the request that created the job.
	PublicURL string
	// MaxRequestBytes bounds a request body. Zero means 2 MiB.
	MaxRequestBytes int64
	// TickInterval is how often ended jobs are looked for to send their webhook. Zero means 10 ms.
	TickInterval time.Duration
	// ReflectAuthorization plays a proxy or WAF in front of the service that copies the request's
	// Authorization header into the text of successful answers: a job answer's
	// renderProgressMessage and error_message, and, for the webhook of a job, the same fields of
	// its body (the key that created the job is then kept in memory). The key must not reach
	// status, events or logs of the client.
	ReflectAuthorization bool

	// Logger receives one line per webhook and per rejected request; nil discards. API keys are
	// never logged.
	Logger *slog.Logger
}

// Server is the simulated service. Create it with New and stop it with Close.
type Server struct {
	opts  Options
	mux   *http.ServeMux
	clock Clock
	log   *slog.Logger
	keys  map[string]bool // by KeyID
	// reflected holds the Authorization header of each key, by KeyID, only with
	// Options.ReflectAuthorization.
	reflected map[string]string
	voices    map[string]bool // lower-case names

	webhookClient *http.Client
	webhookSem    chan struct{}
	ctx           context.Context
	cancel        context.CancelFunc
	wg            sync.WaitGroup
	closeOnce     sync.Once

	// briefTakes counts the requests planned, numbering brief narrations (plan.go).
	briefTakes atomic.Int64

	mu            sync.Mutex
	rng           *rand.Rand
	faults        Faults
	brands        []Brand
	projects      []*project
	jobs          map[string]*job
	jobOrder      []string
	due           jobHeap
	addedVoices   map[string]bool
	calls         map[string]int
	byKey         map[string]int
	byInput       map[string]int
	faultCounts   map[string]int
	webhookCounts map[string]int
}

// New returns a running server. Its background goroutine (webhook delivery) runs until Close.
func New(opts Options) *Server {
	if opts.TimeScale <= 0 {
		opts.TimeScale = 1
	}
	setDefault(&opts.PreviewDuration, DefaultPreviewDuration)
	setDefault(&opts.RenderDuration, DefaultRenderDuration)
	setDefault(&opts.DesignDurationMin, DefaultDesignDurationMin)
	setDefault(&opts.DesignDurationMax, DefaultDesignDurationMax)
	setDefault(&opts.ClearanceExpiry, DefaultClearanceExpiry)
	setDefault(&opts.WebhookTimeout, DefaultWebhookTimeout)
	setDefault(&opts.TickInterval, DefaultTickInterval)
	if opts.DesignDurationMax < opts.DesignDurationMin {
		opts.DesignDurationMax = opts.DesignDurationMin
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if opts.Brands == nil {
		opts.Brands = DefaultBrands()
	}
	if opts.Projects == nil {
		opts.Projects = DefaultProjects()
	}
	if opts.KnownVoices == nil {
		opts.KnownVoices = DefaultVoices()
	}
	seed := opts.Seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	s := &Server{
		opts:          opts,
		mux:           http.NewServeMux(),
		clock:         opts.Clock,
		log:           opts.Logger,
		keys:          map[string]bool{},
		reflected:     map[string]string{},
		voices:        map[string]bool{},
		webhookClient: opts.WebhookClient,
		webhookSem:    make(chan struct{}, 64),
		rng:           rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), //nolint:gosec // seeded on purpose: a run is reproducible
		faults:        opts.Faults,
		brands:        append([]Brand(nil), opts.Brands...),
		jobs:          map[string]*job{},
		addedVoices:   map[string]bool{},
		calls:         map[string]int{},
		byKey:         map[string]int{},
		byInput:       map[string]int{},
		faultCounts:   map[string]int{},
		webhookCounts: map[string]int{},
	}
	if s.clock == nil {
		s.clock = realClock{}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.webhookClient == nil {
		s.webhookClient = &http.Client{Timeout: opts.WebhookTimeout}
	}
	for _, k := range opts.APIKeys {
		s.keys[KeyID(k)] = true
	}
	for _, v := range opts.KnownVoices {
		s.voices[strings.ToLower(v)] = true
	}
	for _, p := range opts.Projects {
		s.projects = append(s.projects, &project{Project: p})
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.routes()
	s.wg.Add(1)
	go s.webhookLoop()
	return s
}

func setDefault(d *time.Duration, def time.Duration) {
	if *d <= 0 {
		*d = def
	}
}

// Close stops the background goroutine and waits for webhook deliveries under way, which it
// cancels. It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.cancel()
		s.wg.Wait()
	})
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) routes() {
	s.mux.Handle("POST "+BasePath+"/v2/video/storyboard", s.api(EndpointCreateStoryboard, s.handleSubmit(kindPreview)))
	s.mux.Handle("POST "+BasePath+"/v2/video/storyboard/render", s.api(EndpointRenderStoryboard, s.handleSubmit(kindRender)))
	s.mux.Handle("POST "+BasePath+"/v2/projects/{projectid}/render", s.api(EndpointRenderProject, s.handleRenderProject))
	s.mux.Handle("GET "+BasePath+"/v1/jobs/{jobid}", s.api(EndpointGetJob, s.handleGetJob))
	s.mux.Handle("GET "+BasePath+"/v1/brands/video", s.api(EndpointListBrands, s.handleListBrands))
	s.mux.Handle("GET "+BasePath+"/v2/projects", s.api(EndpointListProjects, s.handleListProjects))
	s.mux.HandleFunc("GET /files/{jobid}/{name}", s.handleFile)
	s.mux.HandleFunc("GET /share/{jobid}", s.handlePage)
	s.mux.HandleFunc("GET /embed/{jobid}", s.handlePage)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{"success": false, "message": "Not found"})
	})
}

// api wraps an endpoint with call counting, added latency, authentication, then the other faults:
// a rejected or faulted call still counts as a call.
func (s *Server) api(name string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := s.rollFaults(name)
		if f.latency > 0 {
			t := time.NewTimer(f.latency)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		if !s.authorised(r.Header.Get("Authorization")) {
			writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Unauthorized"})
			return
		}
		if s.opts.ReflectAuthorization {
			s.mu.Lock()
			s.reflected[KeyID(r.Header.Get("Authorization"))] = r.Header.Get("Authorization")
			s.mu.Unlock()
		}
		if f.respond(w) {
			return
		}
		if f.body != bodyIntact {
			rec := &recorder{header: http.Header{}, status: http.StatusOK}
			h(rec, r)
			f.writeCorrupted(w, rec)
			return
		}
		h(w, r)
	})
}

func (s *Server) authorised(header string) bool {
	if header == "" {
		return false
	}
	return s.keys[KeyID(header)]
}

// KeyID is how the simulator identifies an API key in its counters and job records: a short
// SHA-256 prefix, so that tests can ask about a key without the simulator keeping it around.
func KeyID(apiKey string) string {
	sum := sha256.Sum256([]byte(apiKey))
	return hex.EncodeToString(sum[:8])
}

// writeJSON writes v with status; encoding errors cannot happen for the maps used here.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"INTERNAL_ERROR","message":"encoding failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// write400 answers with the "Errors" shape of a 400.
func write400(w http.ResponseWriter, fields []FieldError) {
	msg := "Invalid request body"
	if len(fields) > 0 {
		msg += ": " + fields[0].Name + " " + fields[0].Errors
	}
	writeJSON(w, http.StatusBadRequest, map[string]any{"code": "INVALID_REQUEST_BODY", "message": msg, "fields": fields})
}

// readJSONObject reads a request body as a JSON object, numbers kept as json.Number.
func (s *Server) readJSONObject(w http.ResponseWriter, r *http.Request) (map[string]any, []byte, []FieldError) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxRequestBytes))
	if err != nil {
		return nil, nil, []FieldError{{Name: "body", Errors: "could not read the request body: " + err.Error()}}
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var req map[string]any
	if err := dec.Decode(&req); err != nil || req == nil {
		return nil, raw, []FieldError{{Name: "body", Errors: "must be a JSON object"}}
	}
	if dec.More() {
		return nil, raw, []FieldError{{Name: "body", Errors: "must hold a single JSON object"}}
	}
	return req, raw, nil
}

// publicBase is the scheme and host for output URLs of a job created by r.
func (s *Server) publicBase(r *http.Request) string {
	if s.opts.PublicURL != "" {
		return strings.TrimRight(s.opts.PublicURL, "/")
	}
	return "http://" + r.Host
}

// recorder buffers a handler's answer so that a fault can corrupt it.
type recorder struct {
	header http.Header
	status int
	body   []byte
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(status int)      { r.status = status }
func (r *recorder) Write(b []byte) (int, error) { r.body = append(r.body, b...); return len(b), nil }

// reflectHeader copies header into the text fields of a job view, as a proxy that reflects the
// Authorization header would (Options.ReflectAuthorization).
func reflectHeader(view map[string]any, header string) {
	data, _ := view["data"].(map[string]any)
	if data == nil || header == "" {
		return
	}
	note := " (proxy: Authorization=" + header + ")"
	msg, _ := data["renderProgressMessage"].(string)
	data["renderProgressMessage"] = msg + note
	if m, ok := data["error_message"].(string); ok {
		data["error_message"] = m + note
	}
}
