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
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// registerLeaderElectionGauge exports whether this replica runs with leader election, under the
// lease's name. client-go's leader_election_master_status exists only while leader election is on,
// so an alert built on its absence pages forever for a manager run without leader election (Helm
// leaderElection.enabled=false). With this gauge the
// VideoOperatorNoLeader alert fires only where some replica says leader election is on and none
// holds the lease.
func registerLeaderElectionGauge(reg prometheus.Registerer, enabled bool, leaseName string) error {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "video_operator_leader_election_enabled",
		Help:        "1 when this replica runs with leader election (--leader-elect), 0 when it reconciles without a lease.",
		ConstLabels: prometheus.Labels{"name": leaseName},
	})
	if enabled {
		g.Set(1)
	}
	if err := reg.Register(g); err != nil {
		return fmt.Errorf("registering the leader election gauge: %w", err)
	}
	return nil
}
