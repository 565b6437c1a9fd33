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

// Command video-service-sim runs the video service simulator (internal/simulator) on its own, so
// that the operator can be run and demonstrated without an account.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/videoops/video-operator/internal/simulator"
)

// keysEnv holds accepted keys, comma-separated, for when a flag would show them in ps.
const keysEnv = "VIDEO_SIM_API_KEYS"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "video-service-sim:", err)
		os.Exit(2)
	}
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

type config struct {
	listen, keysFile, publicURL, faultEndpoints, musicProjects string
	keys, brands, projects, voices                             listFlag
	timeScale                                                  float64
	clearanceExpiry, jobRetention, webhookTimeout              time.Duration
	seed                                                       uint64
	faults                                                     simulator.Faults
	quiet                                                      bool
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("video-service-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		_, _ = fmt.Fprintf(stderr, `Usage: video-service-sim [flags]

Runs a simulator of the video generation service: the storyboard preview and render endpoints,
project render, job status, brands and projects lists under /serviceapis, with the interface
document's validation, job lifecycle, clearance codes, webhooks and optional fault injection.
It prints the base URL to give the operator as the service URL, and stops on SIGINT or SIGTERM.
Defaults: brands "Acme Corporate" and "Acme Social"; projects "Quarterly update" (library music)
and "Product tour"; voices Matthew, Joanna, Amy, Brian, Emma, Olivia and others (see the README);
any 20-character letters-and-digits id with a digit is a premium-provider voice.

Accepted API keys come from --api-key, --api-keys-file and $%s (comma-separated); with none,
a random key is generated and printed.

Flags:
`, keysEnv)
		fs.PrintDefaults()
	}
	fs.StringVar(&c.listen, "listen", "127.0.0.1:8080", "`address` to listen on (port 0 picks a free port)")
	fs.Var(&c.keys, "api-key", "an accepted API `key` (repeatable); visible to ps, prefer the file or $"+keysEnv)
	fs.StringVar(&c.keysFile, "api-keys-file", "", "`file` of accepted API keys, one per line (# starts a comment)")
	fs.Float64Var(&c.timeScale, "time-scale", 1, "`factor` applied to job durations (preview 30s, render 2m, AI design step +1-3m); 0.01 makes a render take 1.2s")
	fs.DurationVar(&c.clearanceExpiry, "clearance-expiry", simulator.DefaultClearanceExpiry, "validity of a platform clearance code (not scaled)")
	fs.DurationVar(&c.jobRetention, "job-retention", 0, "forget jobs this long after they end, answering JOB_NOT_FOUND (0 keeps them)")
	fs.DurationVar(&c.webhookTimeout, "webhook-timeout", simulator.DefaultWebhookTimeout, "timeout of one webhook POST")
	fs.StringVar(&c.publicURL, "public-url", "", "scheme and host put in output URLs (default: http:// and the request's Host)")
	fs.Uint64Var(&c.seed, "seed", 0, "random `seed` for job ids, design times, faults and codes (0: from the time)")
	fs.Var(&c.brands, "brand", "a video brand as `ID=Name` (repeatable; replaces the default brands)")
	fs.Var(&c.projects, "project", "a project as `ID=Name` (repeatable; replaces the default projects)")
	fs.StringVar(&c.musicProjects, "library-music-projects", "", "comma-separated project `IDs` whose renders use library music (with --project)")
	fs.Var(&c.voices, "voice", "a known voice `name` (repeatable; replaces the default voices)")
	fs.Float64Var(&c.faults.RateLimitShare, "fault-429", 0, "`share` (0-1) of API calls answered 429 with Retry-After")
	fs.DurationVar(&c.faults.RetryAfter, "fault-retry-after", time.Second, "Retry-After sent with an injected 429")
	fs.Float64Var(&c.faults.ServerErrorShare, "fault-500", 0, "`share` of API calls answered 500 INTERNAL_ERROR")
	fs.Float64Var(&c.faults.HTMLShare, "fault-html", 0, "`share` of API calls answered 502 with an HTML page")
	fs.Float64Var(&c.faults.MalformedShare, "fault-malformed", 0, "`share` of API calls whose body is not valid JSON (a submission still creates its job)")
	fs.Float64Var(&c.faults.TruncatedShare, "fault-truncated", 0, "`share` of API calls whose body is cut short and the connection closed")
	fs.DurationVar(&c.faults.Latency, "fault-latency", 0, "latency added to API calls")
	fs.Float64Var(&c.faults.LatencyShare, "fault-latency-share", 0, "`share` of API calls delayed by --fault-latency (0: all)")
	fs.Float64Var(&c.faults.DropWebhookShare, "fault-drop-webhook", 0, "`share` of webhooks never sent")
	fs.StringVar(&c.faultEndpoints, "fault-endpoints", "", "comma-separated endpoint `names` the faults apply to (create_storyboard, render_storyboard, render_project, get_job, list_brands, list_projects; default all)")
	fs.BoolVar(&c.quiet, "quiet", false, "do not log webhooks and rejected requests")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return c, nil
}

func (c *config) options(stderr io.Writer) (simulator.Options, []string, error) {
	o := simulator.Options{
		TimeScale:       c.timeScale,
		ClearanceExpiry: c.clearanceExpiry,
		JobRetention:    c.jobRetention,
		WebhookTimeout:  c.webhookTimeout,
		PublicURL:       c.publicURL,
		Seed:            c.seed,
		Faults:          c.faults,
	}
	keys := append([]string{}, c.keys...)
	for _, k := range strings.Split(os.Getenv(keysEnv), ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	if c.keysFile != "" {
		fileKeys, err := readKeys(c.keysFile)
		if err != nil {
			return o, nil, err
		}
		keys = append(keys, fileKeys...)
	}
	o.APIKeys = keys
	for _, b := range c.brands {
		id, name, ok := strings.Cut(b, "=")
		if !ok || id == "" || name == "" {
			return o, nil, fmt.Errorf("--brand %q: want ID=Name", b)
		}
		o.Brands = append(o.Brands, simulator.Brand{ID: id, Name: name})
	}
	music := map[string]bool{}
	for _, id := range strings.Split(c.musicProjects, ",") {
		music[strings.TrimSpace(id)] = true
	}
	for _, p := range c.projects {
		id, name, ok := strings.Cut(p, "=")
		if !ok || id == "" || name == "" {
			return o, nil, fmt.Errorf("--project %q: want ID=Name", p)
		}
		o.Projects = append(o.Projects, simulator.Project{ID: id, Name: name, LibraryMusic: music[id]})
	}
	if len(c.voices) > 0 {
		o.KnownVoices = c.voices
	}
	if c.faultEndpoints != "" {
		for _, e := range strings.Split(c.faultEndpoints, ",") {
			o.Faults.Endpoints = append(o.Faults.Endpoints, strings.TrimSpace(e))
		}
	}
	if !c.quiet {
		o.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	var generated []string
	if len(o.APIKeys) == 0 {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return o, nil, fmt.Errorf("generating an API key: %w", err)
		}
		k := "sim-" + hex.EncodeToString(b)
		o.APIKeys, generated = []string{k}, []string{k}
	}
	return o, generated, nil
}

func readKeys(path string) ([]string, error) {
	f, err := os.Open(path) //nolint:gosec // the keys file the operator named with --api-keys-file
	if err != nil {
		return nil, fmt.Errorf("reading API keys: %w", err)
	}
	defer func() { _ = f.Close() }()
	var keys []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			keys = append(keys, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading API keys from %s: %w", path, err)
	}
	return keys, nil
}

// run serves until ctx ends. ready, when not nil, receives the base URL once listening (tests).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, ready chan<- string) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	opts, generated, err := cfg.options(stderr)
	if err != nil {
		return err
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", cfg.listen, err)
	}
	sim := simulator.New(opts)
	defer sim.Close()
	srv := &http.Server{Handler: sim, ReadHeaderTimeout: 10 * time.Second}

	base := "http://" + ln.Addr().String() + simulator.BasePath
	_, _ = fmt.Fprintf(stdout, "video-service-sim serving %s\n", base)
	for _, k := range generated {
		_, _ = fmt.Fprintf(stdout, "no API key configured; accepting the generated key %s\n", k)
	}
	if ready != nil {
		ready <- base
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	_, _ = fmt.Fprintln(stdout, "video-service-sim stopped")
	return nil
}
