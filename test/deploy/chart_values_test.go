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
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestChartRequiresServiceBaseURL: the defaults used to render a manager that crash-loops on an
// empty service URL. The schema refuses the missing value, naming it, and the template says what
// to set when the schema is skipped.
func TestChartRequiresServiceBaseURL(t *testing.T) {
	if out := helmTemplateFails(t); !strings.Contains(out, "missing property 'baseURL'") {
		t.Errorf("want the schema to name the missing service.baseURL:\n%.800s", out)
	}
	if out := helmTemplateFails(t, "--skip-schema-validation"); !strings.Contains(out, "service.baseURL is required") {
		t.Errorf("want `required` to name service.baseURL without the schema:\n%.800s", out)
	}
}

// TestChartSchemaRefusesBadValues renders values that used to pass and install a manager that
// breaks (or silently renders something else): the schema refuses each, naming the value.
func TestChartSchemaRefusesBadValues(t *testing.T) {
	for _, tc := range []struct {
		name, values, want string
	}{
		{"negative replicas", "replicas: -1", "at '/replicas'"},
		{"a duration that is not one", "polling:\n  min: banana", "at '/polling/min'"},
		{"a service timeout in hours", "service:\n  baseURL: " + serviceBaseURL + "\n  timeout: 1h", "at '/service/timeout'"},
		{"a base URL without a scheme", "service:\n  baseURL: video.example.com/serviceapis", "at '/service/baseURL'"},
		{"a namespace list with a bad name", "watchNamespaces: [team-a, Team_B]", "at '/watchNamespaces/1'"},
		{"a namespace string with a bad name", "watchNamespaces: team-a;team-b", "at '/watchNamespaces'"},
		{"watchNamespaces as a map", "watchNamespaces: {team-a: true}", "at '/watchNamespaces'"},
		{"an unknown top-level key", "replica: 2", "additional properties 'replica' not allowed"},
		{"an unknown nested key", "metrics:\n  prot: 9443", "additional properties 'prot' not allowed"},
		{"a pull policy that does not exist", "image:\n  pullPolicy: Sometimes", "at '/image/pullPolicy'"},
		{"a port out of range", "metrics:\n  port: 70000", "at '/metrics/port'"},
		{"a rate of zero", "service:\n  baseURL: " + serviceBaseURL + "\n  rateLimit: 0", "at '/service/rateLimit'"},
		{"concurrency zero", "maxConcurrentReconciles: 0", "at '/maxConcurrentReconciles'"},
		{"an env var without a name", "extraEnv:\n- value: x", "at '/extraEnv/0'"},
		{"a relative mount path", "volumeMounts:\n- name: ca\n  mountPath: etc/ca", "at '/volumeMounts/0/mountPath'"},
		{"an extra arg that is not a flag", "extraArgs: [job-deadline=6h]", "at '/extraArgs/0'"},
		{"a PDB percentage without %", "podDisruptionBudget:\n  enabled: true\n  minAvailable: half", "at '/podDisruptionBudget/minAvailable'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "values.yaml")
			if err := os.WriteFile(f, []byte(tc.values+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"--values", f}
			if !strings.Contains(tc.values, "baseURL") {
				args = append(withBaseURL, args...)
			}
			if out := helmTemplateFails(t, args...); !strings.Contains(out, tc.want) {
				t.Errorf("want the schema to refuse it with %q:\n%.800s", tc.want, out)
			}
		})
	}
}

// TestChartSchemaCoversEveryValue walks values.yaml and checks that the schema declares each key
// (with additionalProperties false, an undeclared one would be refused), so the schema cannot
// fall behind a new value.
func TestChartSchemaCoversEveryValue(t *testing.T) {
	var values map[string]any
	data, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	data, err = os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v map[string]any, s map[string]any)
	walk = func(path string, v map[string]any, s map[string]any) {
		props, _ := s["properties"].(map[string]any)
		if props == nil {
			return // a free-form Kubernetes object (resources, affinity, ...): its own API validates it
		}
		if s["additionalProperties"] != false {
			t.Errorf("%s: the schema allows unknown keys", path)
		}
		for k, val := range v {
			ps, ok := props[k].(map[string]any)
			if !ok {
				t.Errorf("%s.%s is not in values.schema.json", path, k)
				continue
			}
			if _, typed := ps["type"]; !typed && ps["oneOf"] == nil {
				t.Errorf("%s.%s has no type in values.schema.json", path, k)
			}
			if m, ok := val.(map[string]any); ok {
				walk(path+"."+k, m, ps)
			}
		}
	}
	walk("values", values, schema)
}

// TestChartWatchNamespacesStringOrList: both forms used to differ (a list rendered as "[a b]");
// now both give the same setting and the same Roles.
func TestChartWatchNamespacesStringOrList(t *testing.T) {
	settings := func(objs []*unstructured.Unstructured) (string, []string) {
		var cm corev1.ConfigMap
		typed(t, objs, "ConfigMap", release+"-manager-config", &cm)
		var roles []string
		for _, o := range objs {
			if o.GetKind() == "Role" && o.GetName() == release+"-manager-role" {
				roles = append(roles, o.GetNamespace())
			}
		}
		sort.Strings(roles)
		return cm.Data["VIDEO_WATCH_NAMESPACES"], roles
	}
	for _, args := range [][]string{
		{"--set", "watchNamespaces=team-a\\, team-b"},
		{"--set", "watchNamespaces={team-a,team-b}"},
	} {
		w, roles := settings(decode(t, helmTemplate(t, args...)))
		if w != "team-a,team-b" || !slices.Equal(roles, []string{"team-a", "team-b"}) {
			t.Errorf("%v: VIDEO_WATCH_NAMESPACES = %q, manager Roles in %v; want team-a,team-b and Roles in both", args, w, roles)
		}
	}
}

// TestChartKnobs renders each knob a platform team expects and checks it reaches its object.
func TestChartKnobs(t *testing.T) {
	deployment := func(t *testing.T, objs []*unstructured.Unstructured) appsv1.Deployment {
		t.Helper()
		var d appsv1.Deployment
		typed(t, objs, "Deployment", "", &d)
		return d
	}
	t.Run("podSecurityContext and securityContext", func(t *testing.T) {
		d := deployment(t, decode(t, helmTemplate(t, "--set", "podSecurityContext.fsGroup=2000", "--set", "securityContext.runAsUser=1001")))
		if psc := d.Spec.Template.Spec.SecurityContext; psc == nil || psc.FSGroup == nil || *psc.FSGroup != 2000 || psc.RunAsNonRoot == nil {
			t.Errorf("pod securityContext = %+v, want fsGroup 2000 merged into the defaults", psc)
		}
		if sc := d.Spec.Template.Spec.Containers[0].SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 1001 || sc.ReadOnlyRootFilesystem == nil {
			t.Errorf("container securityContext = %+v, want runAsUser 1001 merged into the defaults", sc)
		}
	})
	t.Run("serviceAccount", func(t *testing.T) {
		objs := decode(t, helmTemplate(t, "--set", "serviceAccount.name=video-sa", "--set", "serviceAccount.annotations.iam\\.example\\.com/role=video"))
		var sa corev1.ServiceAccount
		typed(t, objs, "ServiceAccount", "video-sa", &sa)
		if sa.Annotations["iam.example.com/role"] != "video" {
			t.Errorf("ServiceAccount annotations = %v", sa.Annotations)
		}
		if d := deployment(t, objs); d.Spec.Template.Spec.ServiceAccountName != "video-sa" {
			t.Errorf("serviceAccountName = %q", d.Spec.Template.Spec.ServiceAccountName)
		}
		var crb rbacv1.ClusterRoleBinding
		typed(t, objs, "ClusterRoleBinding", release+"-manager-rolebinding", &crb)
		if crb.Subjects[0].Name != "video-sa" {
			t.Errorf("the manager's binding names %q", crb.Subjects[0].Name)
		}
		existing := decode(t, helmTemplate(t, "--set", "serviceAccount.create=false", "--set", "serviceAccount.name=platform-sa"))
		for _, o := range existing {
			if o.GetKind() == "ServiceAccount" {
				t.Errorf("serviceAccount.create=false renders ServiceAccount %s", o.GetName())
			}
		}
		if d := deployment(t, existing); d.Spec.Template.Spec.ServiceAccountName != "platform-sa" {
			t.Errorf("serviceAccountName = %q, want the existing platform-sa", d.Spec.Template.Spec.ServiceAccountName)
		}
		if out := helmTemplateFails(t, append(withBaseURL, "--set", "serviceAccount.create=false")...); !strings.Contains(out, "serviceAccount.create=false needs serviceAccount.name") {
			t.Errorf("want a failure naming serviceAccount.name:\n%.500s", out)
		}
	})
	t.Run("extraEnv volumes and volumeMounts", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "values.yaml")
		if err := os.WriteFile(f, []byte(`extraEnv:
- name: HTTPS_PROXY
  value: http://proxy.example.com:3128
- name: SSL_CERT_DIR
  value: /etc/corporate-ca
volumes:
- name: corporate-ca
  configMap:
    name: corporate-ca
volumeMounts:
- name: corporate-ca
  mountPath: /etc/corporate-ca
  readOnly: true
`), 0o600); err != nil {
			t.Fatal(err)
		}
		d := deployment(t, decode(t, helmTemplate(t, "--values", f)))
		c := d.Spec.Template.Spec.Containers[0]
		// POD_NAMESPACE (the manager's namespace, for its budget ledgers) comes first, then extraEnv.
		if len(c.Env) != 3 || c.Env[0].Name != "POD_NAMESPACE" || c.Env[1].Name != "HTTPS_PROXY" || c.Env[2].Value != "/etc/corporate-ca" {
			t.Errorf("env = %+v", c.Env)
		}
		if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/etc/corporate-ca" ||
			len(d.Spec.Template.Spec.Volumes) != 1 || d.Spec.Template.Spec.Volumes[0].ConfigMap == nil {
			t.Errorf("volumes %+v, mounts %+v", d.Spec.Template.Spec.Volumes, c.VolumeMounts)
		}
		// With callbacks on, the extra volume comes next to the callback key's.
		both := deployment(t, decode(t, helmTemplate(t, "--values", f, "--set", "callbacks.enabled=true", "--set", "callbacks.publicURL=https://video-operator.example.com")))
		if len(both.Spec.Template.Spec.Volumes) != 2 || len(both.Spec.Template.Spec.Containers[0].VolumeMounts) != 2 {
			t.Errorf("with callbacks: volumes %+v", both.Spec.Template.Spec.Volumes)
		}
	})
	t.Run("topologySpreadConstraints", func(t *testing.T) {
		d := deployment(t, decode(t, helmTemplate(t, "--set", "topologySpreadConstraints[0].maxSkew=1",
			"--set", "topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone",
			"--set", "topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway")))
		tsc := d.Spec.Template.Spec.TopologySpreadConstraints
		if len(tsc) != 1 || tsc[0].TopologyKey != "topology.kubernetes.io/zone" || tsc[0].WhenUnsatisfiable != corev1.ScheduleAnyway {
			t.Errorf("topologySpreadConstraints = %+v", tsc)
		}
	})
	t.Run("podDisruptionBudget", func(t *testing.T) {
		for _, o := range decode(t, helmTemplate(t)) {
			if o.GetKind() == "PodDisruptionBudget" {
				t.Error("a PodDisruptionBudget by default")
			}
		}
		objs := decode(t, helmTemplate(t, "--set", "replicas=2", "--set", "podDisruptionBudget.enabled=true"))
		var pdb policyv1.PodDisruptionBudget
		typed(t, objs, "PodDisruptionBudget", "", &pdb)
		d := deployment(t, objs)
		if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() != 1 || pdb.Spec.MaxUnavailable != nil {
			t.Errorf("PDB spec = %+v, want minAvailable 1", pdb.Spec)
		}
		for k, v := range pdb.Spec.Selector.MatchLabels {
			if d.Spec.Template.Labels[k] != v {
				t.Errorf("the PDB selects %s=%s, which the pods do not carry", k, v)
			}
		}
		typed(t, decode(t, helmTemplate(t, "--set", "podDisruptionBudget.enabled=true", "--set", "podDisruptionBudget.maxUnavailable=50%")),
			"PodDisruptionBudget", "", &pdb)
		if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.String() != "50%" || pdb.Spec.MinAvailable != nil {
			t.Errorf("PDB spec = %+v, want maxUnavailable 50%% only", pdb.Spec)
		}
	})
	t.Run("networkPolicy", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "values.yaml")
		if err := os.WriteFile(f, []byte(`networkPolicy:
  enabled: true
  metricsFrom:
  - namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: monitoring
  callbacksFrom:
  - namespaceSelector:
      matchLabels:
        kubernetes.io/metadata.name: ingress-nginx
  egress:
  - ports:
    - port: 443
      protocol: TCP
callbacks:
  enabled: true
  publicURL: https://video-operator.example.com
`), 0o600); err != nil {
			t.Fatal(err)
		}
		objs := decode(t, helmTemplate(t, "--values", f))
		var np networkingv1.NetworkPolicy
		typed(t, objs, "NetworkPolicy", "", &np)
		d := deployment(t, objs)
		for k, v := range np.Spec.PodSelector.MatchLabels {
			if d.Spec.Template.Labels[k] != v {
				t.Errorf("the NetworkPolicy selects %s=%s, which the pods do not carry", k, v)
			}
		}
		if len(np.Spec.Ingress) != 2 || np.Spec.Ingress[0].Ports[0].Port.IntValue() != 8443 || np.Spec.Ingress[1].Ports[0].Port.IntValue() != 9443 ||
			np.Spec.Ingress[0].From[0].NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != "monitoring" {
			t.Errorf("ingress rules = %+v, want metrics 8443 from monitoring and callbacks 9443", np.Spec.Ingress)
		}
		if !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) || len(np.Spec.Egress) != 1 {
			t.Errorf("egress = %+v %v", np.Spec.Egress, np.Spec.PolicyTypes)
		}
		var open networkingv1.NetworkPolicy
		typed(t, decode(t, helmTemplate(t, "--set", "networkPolicy.enabled=true")), "NetworkPolicy", "", &open)
		if slices.Contains(open.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
			t.Errorf("without networkPolicy.egress the policy must leave egress open: %v", open.Spec.PolicyTypes)
		}
	})
	t.Run("nameOverride and fullnameOverride", func(t *testing.T) {
		objs := decode(t, helmTemplate(t, "--set", "fullnameOverride=videos"))
		d := deployment(t, objs)
		if d.Name != "videos-controller-manager" || d.Spec.Template.Spec.Containers[0].EnvFrom[0].ConfigMapRef.Name != "videos-manager-config" {
			t.Errorf("fullnameOverride: Deployment %s reading %s", d.Name, d.Spec.Template.Spec.Containers[0].EnvFrom[0].ConfigMapRef.Name)
		}
		for _, o := range objs {
			if o.GetKind() != "CustomResourceDefinition" && !strings.HasPrefix(o.GetName(), "videos-") {
				t.Errorf("fullnameOverride: %s/%s is not prefixed videos-", o.GetKind(), o.GetName())
			}
		}
		objs = decode(t, runHelm(t, append([]string{"template", "prod", chartDir, "--namespace", namespace, "--set", "nameOverride=videos"}, withBaseURL...)...))
		d = deployment(t, objs)
		if d.Name != "prod-videos-controller-manager" || d.Spec.Template.Labels["app.kubernetes.io/name"] != "videos" {
			t.Errorf("nameOverride: Deployment %s with labels %v", d.Name, d.Spec.Template.Labels)
		}
	})
}

// TestChartMonitoring: the PrometheusRule and dashboard of config/monitoring are optional chart
// resources, rendered from the copies `make manifests` makes, so they say what config/monitoring says.
func TestChartMonitoring(t *testing.T) {
	for _, o := range decode(t, helmTemplate(t)) {
		if o.GetKind() == "PrometheusRule" || strings.HasSuffix(o.GetName(), "grafana-dashboard") {
			t.Errorf("%s/%s by default", o.GetKind(), o.GetName())
		}
	}
	// The chart points runbook_url at the runbooks of its version (TestChartRunbookURLsPointAtTheInstalledVersion);
	// with config/monitoring's base (main) it must render that file's rules unchanged.
	objs := decode(t, helmTemplate(t, "--set", "monitoring.prometheusRule.enabled=true", "--set", "monitoring.prometheusRule.labels.release=prometheus",
		"--set", "monitoring.dashboard.enabled=true", "--set", "monitoring.dashboard.namespace=grafana",
		"--set", "monitoring.runbookBaseURL=https://github.com/videoops/video-operator/blob/main/docs/runbooks.md"))
	source := decode(t, kustomizeBuild(t, filepath.Join(root, "config", "monitoring")))
	var rule, sourceRule *unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "PrometheusRule" {
			rule = o
		}
	}
	for _, o := range source {
		if o.GetKind() == "PrometheusRule" {
			sourceRule = o
		}
	}
	if rule == nil || sourceRule == nil {
		t.Fatal("want a PrometheusRule from the chart and from config/monitoring")
	}
	if !reflect.DeepEqual(rule.Object["spec"], sourceRule.Object["spec"]) {
		t.Error("the chart's PrometheusRule differs from config/monitoring/prometheus-rule.yaml: run 'make manifests'")
	}
	if rule.GetLabels()["release"] != "prometheus" || rule.GetNamespace() != namespace {
		t.Errorf("PrometheusRule labels %v in %s", rule.GetLabels(), rule.GetNamespace())
	}
	var cm corev1.ConfigMap
	typed(t, objs, "ConfigMap", release+"-grafana-dashboard", &cm)
	dashboard, err := os.ReadFile(filepath.Join(root, "config", "monitoring", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(cm.Data["grafana-dashboard.json"]) != strings.TrimSpace(string(dashboard)) {
		t.Error("the chart's dashboard differs from config/monitoring/grafana-dashboard.json: run 'make manifests'")
	}
	if cm.Namespace != "grafana" || cm.Labels["grafana_dashboard"] != "1" {
		t.Errorf("dashboard ConfigMap in %s with labels %v", cm.Namespace, cm.Labels)
	}
}
