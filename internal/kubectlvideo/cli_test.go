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

package kubectlvideo

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/videoops/video-operator/internal/version"
)

// runOffline runs the plugin with a kubeconfig that does not exist: the commands that need no
// cluster (version, completion, help) must work before any cluster is configured.
func runOffline(t *testing.T, args ...string) (string, error) {
	t.Helper()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "no-such-kubeconfig"))
	var out bytes.Buffer
	cmd := NewCommand(strings.NewReader(""), &out, &out, Overrides{})
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// Usage lines read as what the user types: kubectl runs the plugin as `kubectl video`.
func TestUsageLinesSayKubectlVideo(t *testing.T) {
	root := NewCommand(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}, Overrides{})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		if line := c.UseLine(); !strings.HasPrefix(line, "kubectl video") {
			t.Errorf("usage line %q does not start with `kubectl video`", line)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, args := range [][]string{{"--help"}, {"status", "--help"}, {"retry", "--help"}} {
		out, err := runOffline(t, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if strings.Contains(out, "kubectl-video") {
			t.Errorf("%v prints kubectl-video, which nobody types:\n%s", args, out)
		}
		if !strings.Contains(out, "kubectl video") {
			t.Errorf("%v does not say kubectl video:\n%s", args, out)
		}
	}
}

// version prints the plugin's own version, needs no cluster, and has kubectl's -o json|yaml.
func TestVersion(t *testing.T) {
	defer func(v string) { version.Version = v }(version.Version)
	version.Version = "v9.8.7-test"

	for _, args := range [][]string{{"version"}, {"version", "--client"}} {
		out, err := runOffline(t, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if !strings.Contains(out, "v9.8.7-test") || !strings.Contains(out, runtime.Version()) {
			t.Errorf("%v printed %q, without the version and the Go version", args, out)
		}
	}
	type info struct {
		ClientVersion struct {
			Version   string `json:"version"`
			GoVersion string `json:"goVersion"`
			Platform  string `json:"platform"`
		} `json:"clientVersion"`
	}
	for _, format := range []string{"json", "yaml"} {
		out, err := runOffline(t, "version", "--client", "-o", format)
		if err != nil {
			t.Fatalf("-o %s: %v", format, err)
		}
		var got info
		if format == "json" {
			err = json.Unmarshal([]byte(out), &got)
		} else {
			err = yaml.UnmarshalStrict([]byte(out), &got)
		}
		if err != nil {
			t.Fatalf("-o %s printed %q: %v", format, out, err)
		}
		if got.ClientVersion.Version != "v9.8.7-test" || got.ClientVersion.Platform != runtime.GOOS+"/"+runtime.GOARCH {
			t.Errorf("-o %s: %+v", format, got)
		}
	}
	if _, err := runOffline(t, "version", "-o", "xml"); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("-o xml: %v, want an error naming the format", err)
	}
}

// completion writes cobra's script for each shell, without a cluster.
func TestCompletionScripts(t *testing.T) {
	for shell, marker := range map[string]string{
		"bash":       "__start_kubectl-video",
		"zsh":        "#compdef kubectl-video",
		"fish":       "complete -c kubectl-video",
		"powershell": "Register-ArgumentCompleter",
	} {
		out, err := runOffline(t, "completion", shell)
		if err != nil {
			t.Fatalf("completion %s: %v", shell, err)
		}
		if !strings.Contains(out, marker) {
			t.Errorf("completion %s: no %q in the script", shell, marker)
		}
	}
	// Subcommand names complete without a cluster.
	out, err := runOffline(t, "__complete", "st")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "status") {
		t.Errorf("__complete st: %q", out)
	}
}

func TestParseTargetBudget(t *testing.T) {
	for _, args := range [][]string{{"vb/default"}, {"videobudget", "default"}, {"VideoBudgets/default"}, {"videobudgets.video.videoops.io/default"}} {
		tg, err := ParseTarget(args)
		if err != nil || string(tg.Kind) != "VideoBudget" || tg.Name != "default" {
			t.Errorf("ParseTarget(%v) = %v, %v", args, tg, err)
		}
	}
}
