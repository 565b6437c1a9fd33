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

package gitops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsSayWhatArgoCDShowsForAwaitingApproval: docs/approval.md said Argo CD shows a render
// awaiting approval as Progressing while docs/deploy.md, and the health check, said Suspended.
// What the pages say is what health.lua returns for such a render: approval.md's state table
// (its Argo CD column) and its text, and deploy.md's GitOps section.
func TestDocsSayWhatArgoCDShowsForAwaitingApproval(t *testing.T) {
	script, err := os.ReadFile(filepath.Join(argocdDir, "health.lua"))
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for _, c := range healthCases() {
		if c.name == "waiting for approval" {
			want = runHealth(t, string(script), objectFor(t, "VideoRender", c)).Status
		}
	}
	if want == "" {
		t.Fatal("no health case waits for approval")
	}
	read := func(page string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "docs", page))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	approval := read("approval.md")
	rows := 0
	for line := range strings.SplitSeq(approval, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 5 || !strings.Contains(cells[2], "`AwaitingApproval`") {
			continue
		}
		rows++
		tools := strings.Split(cells[4], " / ")
		if got := strings.TrimSpace(tools[len(tools)-1]); got != want {
			t.Errorf("docs/approval.md's state table shows Argo CD %q for AwaitingApproval; health.lua says %q", got, want)
		}
	}
	if rows != 1 {
		t.Errorf("docs/approval.md has %d state table rows for AwaitingApproval, want 1", rows)
	}
	for _, para := range strings.Split(approval, "\n\n") {
		if strings.Contains(para, "reason `AwaitingApproval`") && strings.Contains(para, "Argo CD") && !strings.Contains(para, "Argo CD (with the health check of\n  `config/gitops/argocd`) as `"+want+"`") {
			t.Errorf("docs/approval.md says what Argo CD shows for AwaitingApproval other than `%s`:\n%s", want, para)
		}
	}

	deploy := read("deploy.md")
	if !strings.Contains(deploy, "In **Argo CD** a render waiting for its preview's approval (`AwaitingApproval`) is `"+want+"`") {
		t.Errorf("docs/deploy.md does not say Argo CD shows AwaitingApproval as `%s`", want)
	}
}
