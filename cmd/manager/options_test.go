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
	"bufio"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// parsed returns the manager's options as its flags default them, with args applied.
func parsed(t *testing.T, args ...string) options {
	t.Helper()
	var o options
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	o.bind(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestServiceBaseURLPlaceholderIsRefusedWithTheRemedy: dist/install.yaml carries the placeholder of
// config/manager/manager-config.env until the platform team sets the URL. A manager started with
// it must say that it is the placeholder and where to set the URL, not fail on a URL it cannot call.
func TestServiceBaseURLPlaceholderIsRefusedWithTheRemedy(t *testing.T) {
	env := readEnvFile(t, filepath.Join("..", "..", "config", "manager", "manager-config.env"))
	placeholder := env["VIDEO_SERVICE_BASE_URL"]
	if placeholder != serviceBaseURLPlaceholder {
		t.Fatalf("config/manager/manager-config.env sets VIDEO_SERVICE_BASE_URL=%q, the manager recognises %q", placeholder, serviceBaseURLPlaceholder)
	}
	withPlaceholder := parsed(t, "--service-base-url="+placeholder)
	err := withPlaceholder.validate()
	if err == nil || !strings.Contains(err.Error(), "still the installer's placeholder") || !strings.Contains(err.Error(), "docs/release.md") {
		t.Errorf("validate() with the placeholder = %v, want it named as the installer's placeholder with the remedy", err)
	}
	withURL := parsed(t, "--service-base-url=https://video.example.com/serviceapis")
	if err := withURL.validate(); err != nil {
		t.Errorf("validate() with a real URL: %v", err)
	}
}

func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			env[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return env
}
