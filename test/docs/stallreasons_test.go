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

package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/videoops/video-operator/internal/metrics"
)

// alertExprs returns each alert of config/monitoring/prometheus-rule.yaml with its expression.
func alertExprs(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "config", "monitoring", "prometheus-rule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var pr struct {
		Spec struct {
			Groups []struct {
				Rules []struct{ Alert, Expr string }
			}
		}
	}
	if err := yaml.Unmarshal(data, &pr); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out[r.Alert] = r.Expr
			}
		}
	}
	return out
}

var (
	stalledSelectorRE = regexp.MustCompile(`video_operator_stalled_objects\{reason=~"([^"]*)"\}`)
	backtickedRE      = regexp.MustCompile("`([A-Za-z]+)`")
	alertNameRE       = regexp.MustCompile(`VideoOperator[A-Za-z]+`)
)

// TestEveryStallReasonPagesSomeone: after a Secret was overwritten, paid jobs sat Stalled with
// APIKeyChanged and no alert selected that reason. Every reason video_operator_stalled_objects
// counts (internal/metrics.StalledReasons, and Other) has a row in docs/monitoring.md's table
// "Which alert pages each stall reason", naming alerts that exist or saying it is silent; a row
// that says an alert pages it by "its selector" is selected by that alert's expression; and every
// reason an alert selects is one the manager counts, with a row naming that alert.
func TestEveryStallReasonPagesSomeone(t *testing.T) {
	alerts := alertExprs(t)
	counted := map[string]bool{metrics.ReasonOther: true}
	for _, r := range metrics.StalledReasons {
		counted[string(r)] = true
	}

	selected := map[string][]string{} // reason -> alerts whose stalled selector names it
	for alert, expr := range alerts {
		for _, m := range stalledSelectorRE.FindAllStringSubmatch(expr, -1) {
			for _, reason := range strings.Split(m[1], "|") {
				if !counted[reason] {
					t.Errorf("alert %s selects reason %q, which video_operator_stalled_objects never has", alert, reason)
				}
				selected[reason] = append(selected[reason], alert)
			}
		}
	}

	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "monitoring.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "### Which alert pages each stall reason\n")
	if !ok {
		t.Fatal(`docs/monitoring.md has no section "### Which alert pages each stall reason"`)
	}
	if end := strings.Index(section, "\n#"); end >= 0 {
		section = section[:end]
	}
	rows := map[string]string{} // reason -> its "paged by" cell
	for line := range strings.SplitSeq(section, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 2 || strings.HasPrefix(cells[0], "---") || cells[0] == "reason" {
			continue
		}
		for _, m := range backtickedRE.FindAllStringSubmatch(cells[0], -1) {
			if _, dup := rows[m[1]]; dup {
				t.Errorf("docs/monitoring.md: reason %s has two rows", m[1])
			}
			rows[m[1]] = cells[1]
		}
	}

	for reason := range counted {
		cell, ok := rows[reason]
		if !ok {
			t.Errorf("reason %s: no row in docs/monitoring.md's stall reasons table (an alert, or silent on purpose)", reason)
			continue
		}
		names := alertNameRE.FindAllString(cell, -1)
		if strings.HasPrefix(cell, "silent") {
			if len(selected[reason]) > 0 {
				t.Errorf("reason %s: the table says silent, and %v select it", reason, selected[reason])
			}
			continue
		}
		if len(names) == 0 {
			t.Errorf("reason %s: the row %q names no alert and does not say silent", reason, cell)
		}
		for _, a := range names {
			if _, ok := alerts[a]; !ok {
				t.Errorf("reason %s: the table names %s, which prometheus-rule.yaml does not have", reason, a)
			}
		}
		if strings.Contains(cell, "its selector") {
			for _, a := range names {
				if !strings.Contains(strings.Join(selected[reason], " "), a) {
					t.Errorf("reason %s: the table says %s selects it, its expression does not", reason, a)
				}
			}
		}
	}
	for reason, by := range selected {
		for _, a := range by {
			if !strings.Contains(rows[reason], a) {
				t.Errorf("reason %s: %s selects it, the table's row %q does not say so", reason, a, rows[reason])
			}
		}
	}
	for reason := range rows {
		if !counted[reason] {
			t.Errorf("docs/monitoring.md's table names %s, which video_operator_stalled_objects never has", reason)
		}
	}
}
