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
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// serviceMonitorEndpoint returns the one ServiceMonitor of objs and its one endpoint.
func serviceMonitorEndpoint(t *testing.T, objs []*unstructured.Unstructured) (*unstructured.Unstructured, map[string]any) {
	t.Helper()
	var monitors []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "ServiceMonitor" {
			monitors = append(monitors, o)
		}
	}
	if len(monitors) != 1 {
		t.Fatalf("want one ServiceMonitor, got %d", len(monitors))
	}
	endpoints, _, _ := unstructured.NestedSlice(monitors[0].Object, "spec", "endpoints")
	if len(endpoints) != 1 {
		t.Fatalf("want one endpoint, got %v", endpoints)
	}
	return monitors[0], endpoints[0].(map[string]any)
}

// TestChartServiceMonitorKnobs renders the ServiceMonitor with the full values (which
// TestChartInstallerAndMonitoringApplyToAPIServer also applies, with a server-side dry run, to
// an API server holding the Prometheus Operator's ServiceMonitor CRD): it lives in Prometheus's
// namespace and scrapes the release's, takes its token from a Secret (not the deprecated
// bearerTokenFile) and verifies the manager's certificate with a CA for the metrics Service's
// name (not insecureSkipVerify), the manager serving the certificate Secret the CA signed,
// mounted as a directory so that a renewal reaches it; scrapeTimeout and the relabelings are
// passed through. With default values it keeps the token file and skips verification of the
// self-signed certificate, and a CA without a certificate to verify is refused.
func TestChartServiceMonitorKnobs(t *testing.T) {
	objs := decode(t, helmTemplate(t, "--values", fullValuesFile))
	sm, ep := serviceMonitorEndpoint(t, objs)
	if sm.GetNamespace() != "monitoring" {
		t.Errorf("ServiceMonitor in %s, want monitoring (metrics.serviceMonitor.namespace)", sm.GetNamespace())
	}
	if got, _, _ := unstructured.NestedStringSlice(sm.Object, "spec", "namespaceSelector", "matchNames"); !slices.Equal(got, []string{namespace}) {
		t.Errorf("namespaceSelector.matchNames = %v, want the release's namespace %s", got, namespace)
	}
	var metricsSvc corev1.Service
	typed(t, objs, "Service", release+"-controller-manager-metrics-service", &metricsSvc)
	want := map[string]any{
		"path": "/metrics", "port": "https", "scheme": "https", "interval": "15s", "scrapeTimeout": "10s",
		"authorization": map[string]any{"type": "Bearer", "credentials": map[string]any{"name": "prometheus-video-operator-token", "key": "token"}},
		"tlsConfig": map[string]any{
			"ca":         map[string]any{"secret": map[string]any{"name": "video-operator-metrics-ca", "key": "ca.crt"}},
			"serverName": metricsSvc.Name + "." + namespace + ".svc",
		},
		"relabelings":       []any{map[string]any{"targetLabel": "cluster", "replacement": "prod-eu-1"}},
		"metricRelabelings": []any{map[string]any{"sourceLabels": []any{"__name__"}, "regex": "go_gc_.*", "action": "drop"}},
	}
	if !reflect.DeepEqual(ep, want) {
		t.Errorf("ServiceMonitor endpoint\n got  %v\n want %v", ep, want)
	}

	var d appsv1.Deployment
	typed(t, objs, "Deployment", "", &d)
	c := d.Spec.Template.Spec.Containers[0]
	const certDir = "/etc/video-operator/metrics-cert"
	if !slices.Contains(c.Args, "--metrics-cert-dir="+certDir) {
		t.Errorf("args %q lack --metrics-cert-dir=%s", c.Args, certDir)
	}
	mount := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == certDir })
	if mount < 0 || c.VolumeMounts[mount].SubPath != "" || !c.VolumeMounts[mount].ReadOnly {
		t.Fatalf("the metrics certificate must be mounted read-only at %s, as a directory: %+v", certDir, c.VolumeMounts)
	}
	vol := slices.IndexFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == c.VolumeMounts[mount].Name })
	if vol < 0 || d.Spec.Template.Spec.Volumes[vol].Secret == nil || d.Spec.Template.Spec.Volumes[vol].Secret.SecretName != "video-operator-metrics-tls" {
		t.Errorf("the metrics certificate volume must be Secret video-operator-metrics-tls: %+v", d.Spec.Template.Spec.Volumes)
	}

	// Defaults: Prometheus's own token file, and no verification of a self-signed certificate.
	objs = decode(t, helmTemplate(t, "--set", "metrics.serviceMonitor.enabled=true"))
	sm, ep = serviceMonitorEndpoint(t, objs)
	if sm.GetNamespace() != namespace || ep["bearerTokenFile"] == nil || ep["authorization"] != nil ||
		!reflect.DeepEqual(ep["tlsConfig"], map[string]any{"insecureSkipVerify": true}) {
		t.Errorf("default ServiceMonitor in %s: %v", sm.GetNamespace(), ep)
	}
	typed(t, objs, "Deployment", "", &d)
	for _, a := range d.Spec.Template.Spec.Containers[0].Args {
		if strings.HasPrefix(a, "--metrics-cert-dir") {
			t.Errorf("default values pass %s", a)
		}
	}
	// A ConfigMap CA.
	_, ep = serviceMonitorEndpoint(t, decode(t, helmTemplate(t, "--set", "metrics.serviceMonitor.enabled=true",
		"--set", "metrics.certSecret=tls", "--set", "metrics.serviceMonitor.tls.caConfigMapName=ca", "--set", "metrics.serviceMonitor.tls.serverName=metrics.example")))
	if want := map[string]any{"ca": map[string]any{"configMap": map[string]any{"name": "ca", "key": "ca.crt"}}, "serverName": "metrics.example"}; !reflect.DeepEqual(ep["tlsConfig"], want) {
		t.Errorf("tlsConfig with a ConfigMap CA = %v, want %v", ep["tlsConfig"], want)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "metrics.serviceMonitor.tls.caSecretName=ca"}, "metrics.certSecret is empty"},
		{[]string{"--set", "metrics.certSecret=tls", "--set", "metrics.serviceMonitor.tls.caSecretName=ca",
			"--set", "metrics.serviceMonitor.tls.caConfigMapName=ca"}, "not both"},
		{[]string{"--set", "metrics.serviceMonitor.scrapeTimeout=10 seconds"}, "scrapeTimeout"},
	} {
		out := helmTemplateFails(t, append(append([]string{}, withBaseURL...), append([]string{"--set", "metrics.serviceMonitor.enabled=true"}, tc.args...)...)...)
		if !strings.Contains(out, tc.want) {
			t.Errorf("helm template %v: want a failure naming %q, got:\n%s", tc.args, tc.want, out)
		}
	}
}

// TestChartUninstallHookSchedulesLikeTheManager: the pre-delete hook Job runs where the manager
// may run, at its priority: on a cluster whose manager needs a dedicated pool (nodeSelector,
// tolerations, nodeAffinity) or a priority class, a hook without them stays Pending and
// `helm uninstall` waits for it until it times out. The manager's pod anti-affinity is not
// copied: it names the manager's own pods, which the hook stops.
func TestChartUninstallHookSchedulesLikeTheManager(t *testing.T) {
	objs := decode(t, helmTemplate(t, "--values", fullValuesFile,
		"--set-json", `affinity={"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"pool","operator":"In","values":["operators"]}]}]}},"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":100,"podAffinityTerm":{"topologyKey":"kubernetes.io/hostname","labelSelector":{"matchLabels":{"app.kubernetes.io/name":"video-operator"}}}}]}}`))
	var d appsv1.Deployment
	typed(t, objs, "Deployment", "", &d)
	var job batchv1.Job
	typed(t, objs, "Job", release+"-uninstall", &job)
	manager, hook := d.Spec.Template.Spec, job.Spec.Template.Spec
	if hook.PriorityClassName == "" || hook.PriorityClassName != manager.PriorityClassName {
		t.Errorf("hook priorityClassName %q, manager's %q", hook.PriorityClassName, manager.PriorityClassName)
	}
	if len(hook.NodeSelector) == 0 || !reflect.DeepEqual(hook.NodeSelector, manager.NodeSelector) {
		t.Errorf("hook nodeSelector %v, manager's %v", hook.NodeSelector, manager.NodeSelector)
	}
	if len(hook.Tolerations) == 0 || !reflect.DeepEqual(hook.Tolerations, manager.Tolerations) {
		t.Errorf("hook tolerations %v, manager's %v", hook.Tolerations, manager.Tolerations)
	}
	if hook.Affinity == nil || manager.Affinity.NodeAffinity == nil || !reflect.DeepEqual(hook.Affinity.NodeAffinity, manager.Affinity.NodeAffinity) {
		t.Errorf("hook affinity %+v, want the manager's nodeAffinity %+v", hook.Affinity, manager.Affinity)
	} else if hook.Affinity.PodAntiAffinity != nil || hook.Affinity.PodAffinity != nil {
		t.Errorf("the hook takes the manager's pod (anti-)affinity, which names the pods it stops: %+v", hook.Affinity)
	}
}
