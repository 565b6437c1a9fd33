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

package deploy

import (
	"strings"
	"testing"
)

// TestChartNeverShipsAnAbsentAlertThatCannotClear: VideoOperatorAbsent is
// absent(video_operator_leader_election_enabled), a metric only the manager's metrics endpoint
// serves. With metrics.enabled=false the chart serves no metrics (no --metrics-bind-address, no
// metrics Service), yet monitoring.prometheusRule.enabled=true still installs the alert: it
// fires 10 minutes after the install and never clears, a critical page saying "no video is
// submitted or followed" about a manager that runs and pays. The chart refuses the pair, as it
// refuses a ServiceMonitor CA without a certificate, or leaves the absent alert out.
func TestChartNeverShipsAnAbsentAlertThatCannotClear(t *testing.T) {
	args := append(append([]string{}, withBaseURL...),
		"--set", "metrics.enabled=false", "--set", "monitoring.prometheusRule.enabled=true")
	out, err := helmOutput(t, append([]string{"template", release, chartDir, "-n", namespace}, args...)...)
	if err != nil {
		return // refused: fine
	}
	if strings.Contains(out, "--metrics-bind-address=:") {
		t.Fatal("metrics.enabled=false still serves metrics: the check below tests nothing")
	}
	if strings.Contains(out, "alert: VideoOperatorAbsent") || strings.Contains(out, "absent(video_operator_leader_election_enabled)") {
		t.Error("metrics.enabled=false with monitoring.prometheusRule.enabled=true renders VideoOperatorAbsent, " +
			"over a metric nothing serves: it pages forever for a manager that runs")
	}
}
