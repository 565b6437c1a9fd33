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
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/videoops/video-operator/internal/controller"
)

// The uninstall mode (--release-finalizers, docs/uninstall.md): the Helm chart's pre-delete hook
// runs it, and so does the documented uninstall of the installer and of kustomize. The manager's
// own role does not let it scale Deployments or list pods: --stop-deployment needs the hook's
// Role (dist/chart/templates/uninstall.yaml), which lives only as long as the hook.

// runReleaseFinalizers stops the manager (its Deployment, when named), waits until no manager
// holds the lease (with --leader-elect), then lets go of every finalizer with what it guards
// settled, and returns.
func runReleaseFinalizers(opts options) error {
	log := ctrl.Log.WithName("uninstall")
	ctx := ctrl.SetupSignalHandler()
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}
	if opts.stopDeployment != "" {
		ns, err := ownNamespace(opts.leaderElectNamespace)
		if err != nil {
			return err
		}
		if err := stopDeployment(ctx, c, ns, opts.stopDeployment, log.Info); err != nil {
			return err
		}
	}
	work := func(ctx context.Context) error {
		rep, err := controller.ReleaseFinalizers(ctrl.LoggerInto(ctx, log), c, splitNamespaces(opts.watchNamespaces), ledgerNamespace(opts.ledgerNamespace))
		if err != nil {
			return err
		}
		log.Info("Released the operator's finalizers; the operator can now be removed (docs/uninstall.md)",
			"finalizersReleased", rep.Released, "runningJobsChargedTheirEstimate", rep.Estimated,
			"recordedFactsFolded", rep.Folded,
			"reservationsCharged", rep.Charged, "reservationsReleased", rep.ReleasedReservations)
		return nil
	}
	if !opts.leaderElect {
		return work(ctx)
	}
	return whileLeading(ctx, cfg, opts, work)
}

// whileLeading runs work while holding the managers' lease: a manager still running (a pod in
// its graceful shutdown, finishing a paid call) holds it, and releases it only once its paid
// calls and job-id writes are done, so work never races a manager.
func whileLeading(ctx context.Context, cfg *rest.Config, opts options, work func(context.Context) error) error {
	ctrl.Log.WithName("uninstall").Info("Waiting for the manager's lease", "lease", opts.leaderElectionID)
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              opts.leaderElectionID,
		LeaderElectionNamespace:       opts.leaderElectNamespace,
		LeaseDuration:                 &opts.leaseDuration,
		RenewDeadline:                 &opts.renewDeadline,
		RetryPeriod:                   &opts.retryPeriod,
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return fmt.Errorf("creating the uninstall's lease holder: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var workErr error
	ran := false
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		workErr, ran = work(ctx), true
		cancel()
		return nil
	})); err != nil {
		return fmt.Errorf("adding the uninstall: %w", err)
	}
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("holding the lease %s: %w", opts.leaderElectionID, err)
	}
	if !ran {
		return errors.New("stopped before the lease was acquired: nothing was released")
	}
	return workErr
}

// stopDeployment scales the manager's Deployment to zero and waits until none of its pods is
// left (a pod in its graceful shutdown still counts: it may be finishing a paid call).
func stopDeployment(ctx context.Context, c client.Client, ns, name string, logf func(string, ...any)) error {
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
		return fmt.Errorf("reading the manager's Deployment %s/%s: %w", ns, name, err)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 0 {
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"replicas":0}}`))
		if err := c.Patch(ctx, d, patch); err != nil {
			return fmt.Errorf("scaling the manager's Deployment %s/%s to 0: %w", ns, name, err)
		}
		logf("Scaled the manager's Deployment to 0", "namespace", ns, "name", name)
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return fmt.Errorf("reading the selector of Deployment %s/%s: %w", ns, name, err)
	}
	return wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return false, fmt.Errorf("listing the manager's pods: %w", err)
		}
		if len(pods.Items) > 0 {
			logf("Waiting for the manager's pods to end", "pods", len(pods.Items))
		}
		return len(pods.Items) == 0, nil
	})
}

// ownNamespace is the namespace the manager's Deployment and lease are in: the flag, or the pod's.
func ownNamespace(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	b, err := os.ReadFile(serviceAccountNamespace)
	if err != nil {
		return "", errors.New("--stop-deployment outside a pod needs --leader-election-namespace: the namespace of the manager's Deployment")
	}
	return strings.TrimSpace(string(b)), nil
}

// splitNamespaces reads --watch-namespaces.
func splitNamespaces(s string) []string {
	var out []string
	for _, ns := range strings.Split(s, ",") {
		if ns = strings.TrimSpace(ns); ns != "" && !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}
