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

// Command video-demo runs the whole operator on this machine: a local Kubernetes control plane
// (the kube-apiserver and etcd that envtest uses), the CRDs, the service simulator and the
// manager, then applies the demo manifests in hack/demo/ and shows them move through their
// phases. `make demo` obtains the Kubernetes binaries, builds it and runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Environment variables read by --real.
const (
	envBaseURL = "VIDEO_SERVICE_BASE_URL"
	envAPIKey  = "VIDEO_API_KEY" //nolint:gosec // the name of an environment variable, not a key
)

// config is the demo's command line.
type config struct {
	repo         string
	exitWhenDone bool
	timeout      time.Duration
	real         bool
	timeScale    float64
	pollMin      time.Duration
	pollMax      time.Duration
	namespace    string
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("video-demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		_, _ = fmt.Fprintf(stderr, `Usage: make demo [DEMO_ARGS="flags"]   (or: KUBEBUILDER_ASSETS=... bin/video-demo [flags])

Runs video-operator on this machine with nothing else installed: a local Kubernetes API server,
the CRDs, a simulator of the video service and the operator's manager. It applies the files in
hack/demo/ (a storyboard preview, a render of that preview, a direct render and one invalid
render), shows them move through their phases, prints the finished videos, and keeps running
until Ctrl-C so that you can try kubectl against it. Everything it writes goes into .demo/.

With --real it talks to your account of the real service instead of the simulator:
$%s is the service's base URL (including /serviceapis) and $%s your API key.
It submits one preview and two renders to your account; renders are paid.

Flags:
`, envBaseURL, envAPIKey)
		fs.PrintDefaults()
	}
	fs.StringVar(&c.repo, "repo", ".", "the repository's root `folder` (the CRDs and hack/demo/ are read from it)")
	fs.BoolVar(&c.exitWhenDone, "exit-when-done", false, "exit when every demo object reached its final phase: 0 when all completed, 1 otherwise (for tests and CI)")
	fs.DurationVar(&c.timeout, "timeout", 0, "with --exit-when-done, give up after this long (default 3m with the simulator, 30m with --real)")
	fs.BoolVar(&c.real, "real", false, "use the real service ($"+envBaseURL+" and $"+envAPIKey+") instead of the simulator")
	fs.Float64Var(&c.timeScale, "time-scale", 0.05, "simulator only: factor on job durations (1 is real time: preview 30s, render 2m, AI design +1-3m)")
	fs.DurationVar(&c.pollMin, "poll-min", 0, "the manager's --poll-min (default 1s with the simulator, 10s with --real, as the service asks)")
	fs.DurationVar(&c.pollMax, "poll-max", 0, "the manager's --poll-max (default 2s with the simulator, 30s with --real)")
	fs.StringVar(&c.namespace, "namespace", "default", "namespace of the demo objects")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q (see --help)", fs.Args())
	}
	// The simulator is fast, so the demo polls it often; the real service asks for 10 to 30 s.
	if c.pollMin == 0 {
		c.pollMin = map[bool]time.Duration{false: time.Second, true: 10 * time.Second}[c.real]
	}
	if c.pollMax == 0 {
		c.pollMax = max(c.pollMin, map[bool]time.Duration{false: 2 * time.Second, true: 30 * time.Second}[c.real])
	}
	if c.timeout == 0 {
		c.timeout = map[bool]time.Duration{false: 3 * time.Minute, true: 30 * time.Minute}[c.real]
	}
	if c.pollMin <= 0 || c.pollMax < c.pollMin {
		return nil, fmt.Errorf("--poll-min (%s) must be positive and at most --poll-max (%s)", c.pollMin, c.pollMax)
	}
	if c.timeScale <= 0 {
		return nil, fmt.Errorf("--time-scale must be positive")
	}
	return c, nil
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "video-demo:", err)
		os.Exit(2)
	}
	// SIGHUP too: closing the terminal must stop the API server and etcd like Ctrl-C does.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "\nThe demo failed: %v\n", err)
		os.Exit(1)
	}
}
