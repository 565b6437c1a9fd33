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

// Package apiclient is the typed client of the video generation service, following the
// interface document (docs: "Video Generation Service Interface"): the five endpoints the
// operator uses, its error model, authentication with the raw key, a client-side rate limit per
// key, and redaction of the key everywhere.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/videoops/video-operator/internal/version"
)

// Endpoint names given to the Observer and carried by errors. They never contain ids or tokens,
// so they are safe as metric labels.
const (
	EndpointCreateStoryboard = "create_storyboard"
	EndpointRenderStoryboard = "render_storyboard"
	EndpointRenderProject    = "render_project"
	EndpointGetJob           = "get_job"
	EndpointListBrands       = "list_brands"
)

// Defaults of Options.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxResponseBytes = 4 << 20
)

// Interface is the part of the service the operator uses ("Endpoints"). Every method is safe for
// concurrent use. Errors are *APIError (an HTTP error answer, or JOB_NOT_FOUND), *TransportError,
// *DecodeError or *NotSentError; classify them with IsUnauthorized, IsRateLimited, IsNotFound,
// IsJobNotFound, IsConflict, IsInvalidRequest, IsRetryable, IsNotSubmitted and RetryAfter.
type Interface interface {
	// CreateStoryboardPreview submits a preview (POST /v2/video/storyboard). body is the
	// StoryboardRequest, serialised with encoding/json as given: it must encode to a JSON object
	// with the service's field names. The client adds nothing to it.
	CreateStoryboardPreview(ctx context.Context, body any) (*JobCreated, error)
	// RenderStoryboard submits a paid render (POST /v2/video/storyboard/render); body as above.
	RenderStoryboard(ctx context.Context, body any) (*JobCreated, error)
	// RenderProject renders an existing project (POST /v2/projects/{projectid}/render). A missing
	// project gives an error for which IsNotFound holds; one already rendering, IsConflict.
	RenderProject(ctx context.Context, projectID string) (*JobCreated, error)
	// GetJob reads a job (GET /v1/jobs/{jobid}). A failed job is a normal result (the service
	// answers 200): see Job.Failure. An unknown or cleaned job gives IsJobNotFound. Statuses the
	// document does not list are returned as they are (JobStatus.IsKnown is false).
	GetJob(ctx context.Context, jobID string) (*Job, error)
	// ListVideoBrands lists the account's video brands (GET /v1/brands/video).
	ListVideoBrands(ctx context.Context) ([]Brand, error)
}

// Observer is told about every HTTP exchange, for metrics: the endpoint name (an Endpoint
// constant), the HTTP status (0 when no response arrived) and the time from sending to the end of
// the body. Calls are concurrent; implementations must be fast and safe for concurrent use.
type Observer interface {
	ObserveRequest(endpoint string, statusCode int, duration time.Duration)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(endpoint string, statusCode int, duration time.Duration)

// ObserveRequest calls f.
func (f ObserverFunc) ObserveRequest(endpoint string, statusCode int, duration time.Duration) {
	f(endpoint, statusCode, duration)
}

// Options configure a Client. They hold no secret: the key is New's first argument.
type Options struct {
	// BaseURL is the service host followed by /serviceapis, for example
	// http://127.0.0.1:8080/serviceapis. Required; http or https.
	BaseURL string
	// AllowInsecureHTTP accepts a plain http:// BaseURL on a host that is not the loopback
	// interface. Off, such a URL is refused: the API key would cross the network in clear text.
	AllowInsecureHTTP bool
	// HTTPClient sends the requests. Default: one with DefaultTimeout plus a margin and a
	// connection pool sized for many concurrent polls.
	HTTPClient *http.Client
	// Timeout bounds each request, body included. Default DefaultTimeout.
	Timeout time.Duration
	// MaxResponseBytes bounds a response body. Default DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// UserAgent is sent as User-Agent. Default version.UserAgent(), "video-operator/<version>".
	UserAgent string
	// Limiter paces this client's requests; nil means no client-side limit. A Factory sets it to
	// the key's shared bucket.
	Limiter Limiter
	// Observer, when set, is told about every exchange.
	Observer Observer
}

// String describes the options, with any password in BaseURL redacted.
func (o Options) String() string {
	return fmt.Sprintf("apiclient.Options{BaseURL: %q, Timeout: %s, MaxResponseBytes: %d, UserAgent: %q}",
		redactURL(o.BaseURL), o.Timeout, o.MaxResponseBytes, o.UserAgent)
}

// GoString is String, so %#v cannot reveal more.
func (o Options) GoString() string { return o.String() }

// Format makes every verb print String.
func (o Options) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, o.String()) }

// Client implements Interface over HTTP. Create it with New; the zero value is not usable.
type Client struct {
	key        secretKey
	baseURL    string
	httpClient *http.Client
	timeout    time.Duration
	maxBytes   int64
	userAgent  string
	limiter    Limiter
	observer   Observer
	now        func() time.Time
}

var _ Interface = (*Client)(nil)

// New returns a client that authenticates with apiKey ("Authentication": the raw key in the
// Authorization header, no Bearer prefix). The key must be non-empty printable ASCII without
// spaces; the caller trims it. Errors never contain the key.
func New(apiKey string, opts Options) (*Client, error) {
	if len(apiKey) < minKeyLen {
		return nil, errors.New("apiclient: API key is empty or too short")
	}
	for i := 0; i < len(apiKey); i++ {
		if apiKey[i] <= ' ' || apiKey[i] > '~' {
			return nil, errors.New("apiclient: API key contains spaces, control or non-ASCII characters")
		}
	}
	base, err := normaliseBaseURL(opts.BaseURL, opts.AllowInsecureHTTP)
	if err != nil {
		return nil, err
	}
	c := &Client{
		key:        newSecretKey(apiKey),
		baseURL:    base,
		httpClient: opts.HTTPClient,
		timeout:    opts.Timeout,
		maxBytes:   opts.MaxResponseBytes,
		userAgent:  opts.UserAgent,
		limiter:    opts.Limiter,
		observer:   opts.Observer,
		now:        time.Now,
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.httpClient == nil {
		c.httpClient = NewHTTPClient(c.timeout)
	}
	if c.maxBytes <= 0 {
		c.maxBytes = DefaultMaxResponseBytes
	}
	if c.userAgent == "" {
		c.userAgent = version.UserAgent()
	}
	return c, nil
}

// NewHTTPClient returns the default HTTP client: its own timeout (a backstop behind the
// per-request context), a pool that keeps connections to the one service host open for many
// concurrent polls, and no redirects. A redirect would resend the Authorization header (even from
// https to http) and turn a paid POST into a GET; the interface document names none, so a 3xx is
// returned as the answer.
func NewHTTPClient(timeout time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: t, Timeout: timeout + 5*time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func normaliseBaseURL(raw string, allowInsecure bool) (string, error) {
	if raw == "" {
		return "", errors.New("apiclient: base URL is required (service host followed by /serviceapis)")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("apiclient: invalid base URL %q: %w", redactURL(raw), err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("apiclient: base URL %q must be an absolute http or https URL", redactURL(raw))
	}
	if u.Scheme == "http" && !allowInsecure && !isLoopback(u.Hostname()) {
		return "", fmt.Errorf("apiclient: base URL %q is plain http: the API key would cross the network in clear text; "+
			"use https (plain http is accepted on the loopback interface, or with the insecure option)", redactURL(raw))
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		// User info would be a second credential beside the Authorization header, and one that
		// ends up in logs with the URL.
		return "", fmt.Errorf("apiclient: base URL %q must not have user info, a query or a fragment", redactURL(raw))
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// isLoopback reports a host on the loopback interface: localhost, 127.0.0.0/8 or ::1.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// redactURL hides a password in a URL; unparsable input is hidden whole.
func redactURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return redacted
	}
	return u.Redacted()
}

// String describes the client without its key.
func (c Client) String() string {
	return fmt.Sprintf("apiclient.Client{BaseURL: %q, APIKey: %s}", redactURL(c.baseURL), redacted)
}

// GoString is String, so %#v cannot reveal the key.
func (c Client) GoString() string { return c.String() }

// Format makes every verb print String.
func (c Client) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, c.String()) }

// CreateStoryboardPreview implements Interface.
func (c *Client) CreateStoryboardPreview(ctx context.Context, body any) (*JobCreated, error) {
	return c.submit(ctx, EndpointCreateStoryboard, "/v2/video/storyboard", body)
}

// RenderStoryboard implements Interface.
func (c *Client) RenderStoryboard(ctx context.Context, body any) (*JobCreated, error) {
	return c.submit(ctx, EndpointRenderStoryboard, "/v2/video/storyboard/render", body)
}

// RenderProject implements Interface.
func (c *Client) RenderProject(ctx context.Context, projectID string) (*JobCreated, error) {
	seg, err := pathSegment("project id", projectID)
	if err != nil {
		return nil, &NotSentError{Endpoint: EndpointRenderProject, Err: err}
	}
	return c.submit(ctx, EndpointRenderProject, "/v2/projects/"+seg+"/render", nil)
}

// GetJob implements Interface.
func (c *Client) GetJob(ctx context.Context, jobID string) (*Job, error) {
	const ep = EndpointGetJob
	seg, err := pathSegment("job id", jobID)
	if err != nil {
		return nil, &NotSentError{Endpoint: ep, Err: err}
	}
	res, err := c.do(ctx, ep, http.MethodGet, "/v1/jobs/"+seg, nil)
	if err != nil {
		return nil, err
	}
	if nf := jobNotFound(ep, res.status, res.body, c.key.redactFunc()); nf != nil {
		return nil, nf
	}
	var j Job
	if err := res.decode(&j); err != nil {
		return nil, err
	}
	if len(j.Data.Raw) == 0 {
		return nil, res.decodeError(fmt.Errorf("%w: no \"data\" object", ErrUnexpectedShape))
	}
	return &j, nil
}

// ListVideoBrands implements Interface. It accepts the documented bare array and, tolerantly,
// the array wrapped as {"data": [...]}.
func (c *Client) ListVideoBrands(ctx context.Context) ([]Brand, error) {
	res, err := c.do(ctx, EndpointListBrands, http.MethodGet, "/v1/brands/video", nil)
	if err != nil {
		return nil, err
	}
	if b := bytes.TrimSpace(res.body); len(b) > 0 && b[0] == '{' {
		var wrapped struct {
			Data *[]Brand `json:"data"`
		}
		if err := res.decode(&wrapped); err != nil {
			return nil, err
		}
		if wrapped.Data == nil {
			return nil, res.decodeError(fmt.Errorf("%w: neither an array nor {\"data\": [...]}", ErrUnexpectedShape))
		}
		return *wrapped.Data, nil
	}
	var brands []Brand
	if err := res.decode(&brands); err != nil {
		return nil, err
	}
	return brands, nil
}

// submit sends a request that creates a job and reads the job-created response.
func (c *Client) submit(ctx context.Context, ep, path string, body any) (*JobCreated, error) {
	var payload []byte
	if ep != EndpointRenderProject {
		var err error
		if payload, err = encodeBody(body); err != nil {
			return nil, &NotSentError{Endpoint: ep, Err: err}
		}
	}
	res, err := c.do(ctx, ep, http.MethodPost, path, payload)
	if err != nil {
		return nil, err
	}
	var w jobCreatedWire
	if err := res.decode(&w); err != nil {
		return nil, err
	}
	if !w.Success {
		// A 2xx that says it failed: the document does not describe it, and a job may exist.
		apiErr := parseErrorBody(ep, res.status, res.header, res.body, c.now(), c.key.redactFunc())
		if apiErr.Message == "" {
			apiErr.Message = "service answered success false"
		}
		return nil, apiErr
	}
	if w.Data.JobID == "" {
		return nil, res.decodeError(fmt.Errorf("%w: no data.jobId", ErrUnexpectedShape))
	}
	return &JobCreated{Success: true, JobID: w.Data.JobID}, nil
}

// encodeBody serialises a StoryboardRequest. json.RawMessage and []byte pass through as
// already-encoded JSON. The result must be a JSON object.
func encodeBody(body any) ([]byte, error) {
	var b []byte
	switch v := body.(type) {
	case nil:
		return nil, errors.New("request body is required")
	case json.RawMessage:
		b = v
	case []byte:
		b = v
	default:
		var err error
		if b, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("encoding request body: %w", err)
		}
	}
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' || !json.Valid(t) {
		return nil, errors.New("request body must encode to a JSON object")
	}
	return b, nil
}

// pathSegment escapes an id for use as one path segment, refusing values that would change the
// path's meaning.
func pathSegment(what, v string) (string, error) {
	if v == "" || v == "." || v == ".." {
		return "", fmt.Errorf("invalid %s %q", what, v)
	}
	return url.PathEscape(v), nil
}

// response is a complete HTTP answer with a 2xx status.
type response struct {
	endpoint string
	status   int
	header   http.Header
	body     []byte
	redact   func(string) string
}

func (r *response) decodeError(err error) *DecodeError {
	return &DecodeError{
		Endpoint:    r.endpoint,
		StatusCode:  r.status,
		ContentType: r.header.Get("Content-Type"),
		Snippet:     snippet(r.body, r.redact),
		Err:         err,
	}
}

// decode unmarshals the body into out, telling a non-JSON page from broken JSON.
func (r *response) decode(out any) error {
	if !looksLikeJSON(r.body) {
		return r.decodeError(ErrNotJSON)
	}
	if err := json.Unmarshal(r.body, out); err != nil {
		return r.decodeError(fmt.Errorf("%w: %w", ErrMalformedJSON, err))
	}
	return nil
}

// do sends one request and returns a 2xx answer, or the error that describes the failure.
func (c *Client) do(ctx context.Context, ep, method, path string, payload []byte) (*response, error) {
	if c.limiter != nil {
		if err := c.limiter.Wait(ctx); err != nil {
			return nil, &NotSentError{Endpoint: ep, Err: fmt.Errorf("waiting for the client-side rate limit: %w", err)}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	var reqBody io.Reader
	if payload != nil {
		reqBody = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, reqBody)
	if err != nil {
		return nil, &NotSentError{Endpoint: ep, Err: fmt.Errorf("building request: %w", err)}
	}
	req.Header.Set("Authorization", c.key.header())
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}

	start := time.Now()
	resp, err := c.httpClient.Do(req)
	if err != nil {
		c.observe(ep, 0, time.Since(start))
		if isDialError(err) {
			// No connection was made (refused, unreachable, DNS): the request never left.
			return nil, &NotSentError{Endpoint: ep, Err: err}
		}
		return nil, &TransportError{Endpoint: ep, Err: err}
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBytes+1))
	c.observe(ep, resp.StatusCode, time.Since(start))
	if err != nil {
		return nil, &TransportError{Endpoint: ep, Err: fmt.Errorf("reading response body (HTTP %d): %w", resp.StatusCode, err)}
	}
	res := &response{endpoint: ep, status: resp.StatusCode, header: resp.Header, body: body, redact: c.key.redactFunc()}
	if int64(len(body)) > c.maxBytes {
		res.body = body[:c.maxBytes]
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return nil, parseErrorBody(ep, resp.StatusCode, resp.Header, nil, c.now(), res.redact)
		}
		return nil, res.decodeError(fmt.Errorf("%w of %d bytes", ErrBodyTooLarge, c.maxBytes))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, parseErrorBody(ep, resp.StatusCode, resp.Header, body, c.now(), res.redact)
	}
	res.body = redactBody(body, c.key.header())
	return res, nil
}

// isDialError reports a failure to open the connection, before any byte of the request was
// written.
func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

func (c *Client) observe(ep string, status int, d time.Duration) {
	if c.observer != nil {
		c.observer.ObserveRequest(ep, status, d)
	}
}
