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
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The approval policies and the approver role of config/approval (docs/approval.md), in both
// installs.

// approvalObjects are the objects config/approval installs, as config/default names them.
var approvalObjects = []string{
	"ClusterRole/video-operator-videorender-approver",
	"ValidatingAdmissionPolicy/video-operator-videorender-approval",
	"ValidatingAdmissionPolicyBinding/video-operator-videorender-approval",
	"MutatingAdmissionPolicy/video-operator-videorender-approval-stamp",
	"MutatingAdmissionPolicyBinding/video-operator-videorender-approval-stamp",
	"ValidatingAdmissionPolicy/video-operator-videostoryboard-author",
	"ValidatingAdmissionPolicyBinding/video-operator-videostoryboard-author",
	"MutatingAdmissionPolicy/video-operator-videostoryboard-author-stamp",
	"MutatingAdmissionPolicyBinding/video-operator-videostoryboard-author-stamp",
}

// TestApprovalPoliciesInKustomizeAndChart: config/default and the chart's defaults install the
// same policies (spec for spec), each binding names a policy of the same install, the approver
// role is aggregated into admin and not edit, and the messages name the role as installed.
func TestApprovalPoliciesInKustomizeAndChart(t *testing.T) {
	kust := byKey(decode(t, kustomizeBuild(t, filepath.Join(root, "config", "default"))))
	chart := byKey(decode(t, helmTemplate(t)))
	for _, k := range approvalObjects {
		ko, kok := kust[k]
		co, cok := chart[k]
		if !kok || !cok {
			t.Errorf("%s: in config/default %v, in the chart %v; want both", k, kok, cok)
			continue
		}
		field := "spec"
		if ko.GetKind() == "ClusterRole" {
			field = "rules"
			labels := ko.GetLabels()
			if labels["rbac.authorization.k8s.io/aggregate-to-admin"] != "true" || labels["rbac.authorization.k8s.io/aggregate-to-edit"] != "" ||
				co.GetLabels()["rbac.authorization.k8s.io/aggregate-to-admin"] != "true" {
				t.Errorf("%s: want aggregated into admin and not edit, labels %v (chart %v)", k, labels, co.GetLabels())
			}
		}
		if !reflect.DeepEqual(ko.Object[field], co.Object[field]) {
			t.Errorf("%s: the chart's %s differs from config/approval (run 'make manifests'):\nchart: %v\nkustomize: %v", k, field, co.Object[field], ko.Object[field])
		}
		if p, ok, _ := unstructured.NestedString(ko.Object, "spec", "policyName"); ok {
			policy := strings.TrimSuffix(ko.GetKind(), "Binding") + "/" + p
			if _, ok := kust[policy]; !ok {
				t.Errorf("%s binds %s, which config/default does not install", k, policy)
			}
		}
	}
	// The viewer roles are aggregated into view; the editor roles into nothing (a render with an
	// inline storyboard pays without an approval), in both installs.
	for _, objs := range []map[string]*unstructured.Unstructured{kust, chart} {
		for _, kind := range []string{"videorender", "videostoryboard", "videobudget"} {
			for role, want := range map[string]string{"viewer": "true", "editor": ""} {
				o := objs["ClusterRole/video-operator-"+kind+"-"+role+"-role"]
				if o == nil {
					t.Errorf("no %s %s role", kind, role)
					continue
				}
				l := o.GetLabels()
				if l["rbac.authorization.k8s.io/aggregate-to-view"] != want || l["rbac.authorization.k8s.io/aggregate-to-edit"] != "" ||
					l["rbac.authorization.k8s.io/aggregate-to-admin"] != "" {
					t.Errorf("%s: aggregation labels %v, want aggregate-to-view %q only", key(o), l, want)
				}
			}
		}
	}
	msg, _ := yamlOf(t, kust["ValidatingAdmissionPolicy/video-operator-videorender-approval"])
	if !strings.Contains(msg, "ask someone bound to the ClusterRole video-operator-videorender-approver") {
		t.Error("the refusal does not name the approver role as installed")
	}

	t.Run("a release with another name names its own role", func(t *testing.T) {
		objs := byKey(decode(t, helmTemplate(t, "--set", "fullnameOverride=videos")))
		vap, ok := objs["ValidatingAdmissionPolicy/videos-videorender-approval"]
		if !ok {
			t.Fatal("no ValidatingAdmissionPolicy videos-videorender-approval")
		}
		text, _ := yamlOf(t, &unstructured.Unstructured{Object: map[string]any{"spec": vap.Object["spec"]}})
		if !strings.Contains(text, "the ClusterRole videos-videorender-approver") || strings.Contains(text, "video-operator-") {
			t.Errorf("the messages must name the release's objects:\n%s", text)
		}
		if _, ok := objs["ClusterRole/videos-videorender-approver"]; !ok {
			t.Error("no ClusterRole videos-videorender-approver")
		}
		b := objs["MutatingAdmissionPolicyBinding/videos-videorender-approval-stamp"]
		if p, _, _ := unstructured.NestedString(b.Object, "spec", "policyName"); p != "videos-videorender-approval-stamp" {
			t.Errorf("the binding names policy %q", p)
		}
	})
	t.Run("a cluster without MutatingAdmissionPolicy is refused with the remedy", func(t *testing.T) {
		// Against a cluster Helm knows the kinds it serves: an older one has no MutatingAdmissionPolicy.
		out := helmTemplateFails(t, append(withBaseURL, "--api-versions", "v1/ConfigMap", "--kube-version", "1.35.0")...)
		for _, want := range []string{"Kubernetes v1.35.0", "does not serve admissionregistration.k8s.io/v1 MutatingAdmissionPolicy",
			"set approval.policies.enabled=false", "docs/approval.md"} {
			if !strings.Contains(out, want) {
				t.Errorf("the refusal does not say %q:\n%s", want, out)
			}
		}
		objs := byKey(decode(t, helmTemplate(t, "--api-versions", "v1/ConfigMap", "--api-versions",
			"admissionregistration.k8s.io/v1/MutatingAdmissionPolicy", "--kube-version", "1.36.0")))
		if _, ok := objs["MutatingAdmissionPolicy/video-operator-videorender-approval-stamp"]; !ok {
			t.Error("a 1.36 cluster does not get the policies")
		}
	})
	t.Run("approval.policies.enabled=false installs the role and no policy", func(t *testing.T) {
		objs := decode(t, helmTemplate(t, "--set", "approval.policies.enabled=false", "--api-versions", "v1/ConfigMap"))
		var kinds []string
		for _, o := range objs {
			kinds = append(kinds, key(o))
			// The scenes' rules (config/policies, labelled) have a switch of their own.
			if _, scenes := o.GetLabels()["video.videoops.io/admission-policy"]; strings.Contains(o.GetKind(), "AdmissionPolicy") && !scenes {
				t.Errorf("renders %s", key(o))
			}
		}
		if !slices.Contains(kinds, "ClusterRole/video-operator-videorender-approver") {
			t.Error("the approver role is missing")
		}
	})
}

// TestApprovalPoliciesEnforcedWhenInstalled applies config/default to a real API server and uses
// it as an editor and as an approver: the editor's approval is refused naming the permission, the
// approver's is stamped with the approver's name.
func TestApprovalPoliciesEnforcedWhenInstalled(t *testing.T) {
	rendered := kustomizeBuild(t, filepath.Join(root, "config", "default"))
	_, kubeconfig := startAdminEnvtest(t, "deployer")
	run := func(input string, args ...string) (string, error) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), kubectl(t), append([]string{"--kubeconfig", kubeconfig}, args...)...)
		cmd.Stdin = strings.NewReader(input)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	must := func(input string, args ...string) string {
		t.Helper()
		out, err := run(input, args...)
		if err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
		return out
	}
	for _, o := range decode(t, rendered) {
		if o.GetKind() == "Namespace" {
			js, _ := o.MarshalJSON()
			must(string(js), "apply", "--server-side", "-f", "-")
		}
	}
	must(string(rendered), "apply", "--server-side", "-f", "-")
	must("", "wait", "--for=condition=Established", "crd/videorenders.video.videoops.io", "--timeout=60s")
	must("apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n", "apply", "-f", "-")
	for user, role := range map[string]string{"erin": "video-operator-videorender-editor-role", "amir": "video-operator-videorender-approver"} {
		must("", "-n", "team-a", "create", "rolebinding", user, "--clusterrole", role, "--user", user)
	}
	if out := must("", "-n", "team-a", "auth", "can-i", "approve", "videorenders.video.videoops.io", "--subresource", "approval", "--as", "amir"); strings.TrimSpace(out) != "yes" {
		t.Errorf("the approver may not approve: %s", out)
	}
	if out, _ := run("", "-n", "team-a", "auth", "can-i", "approve", "videorenders.video.videoops.io", "--subresource", "approval", "--as", "erin"); strings.TrimSpace(out) != "no" {
		t.Errorf("the editor may approve: %s", out)
	}

	render := func(name string) string {
		return "apiVersion: video.videoops.io/v1alpha1\nkind: VideoRender\nmetadata: {name: " + name + ", namespace: team-a}\n" +
			"spec: {storyboardRef: {name: launch, approval: Latest}}\n"
	}
	// The API server loads new policies within a second or two.
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := run(render("by-editor"), "create", "--as", "erin", "-f", "-")
		if err != nil && strings.Contains(out, "needs the permission approve on videorenders/approval") &&
			strings.Contains(out, "erin may edit this render but not approve it; ask someone bound to the ClusterRole video-operator-videorender-approver") {
			break
		}
		if err == nil {
			must("", "-n", "team-a", "delete", "videorender", "by-editor")
		}
		if time.Now().After(deadline) {
			t.Fatalf("the editor's approval was not refused naming the permission: %v\n%s", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	must(render("by-approver"), "create", "--as", "amir", "-f", "-")
	for _, o := range []string{"by-approver"} {
		if out := must("", "-n", "team-a", "get", "videorender", o, "-o", "jsonpath={.metadata.annotations}"); !strings.Contains(out, `"video.videoops.io/approved-by":"amir"`) {
			t.Errorf("the approver's render is not stamped with the approver: %s", out)
		}
	}

	// GitOps: the sample bindings of config/gitops/approver let Flux and Argo CD approve what they
	// apply in team-a, and the stamp names the controller.
	must(string(kustomizeBuild(t, filepath.Join(root, "config", "gitops", "approver"))), "apply", "-f", "-")
	for name, sa := range map[string]string{"by-flux": "system:serviceaccount:flux-system:kustomize-controller",
		"by-argocd": "system:serviceaccount:argocd:argocd-application-controller"} {
		must(render(name), "create", "--as", sa, "-f", "-")
		if out := must("", "-n", "team-a", "get", "videorender", name, "-o", "jsonpath={.metadata.annotations}"); !strings.Contains(out, `"video.videoops.io/approved-by":"`+sa+`"`) {
			t.Errorf("%s is not stamped with %s: %s", name, sa, out)
		}
	}
	// A GitOps controller applies the same manifest again and again (server-side apply, its own
	// field manager): the stamps of the approving apply stay, and nothing is re-approved.
	flux := "system:serviceaccount:flux-system:kustomize-controller"
	for range 2 {
		must(render("applied"), "apply", "--server-side", "--field-manager", "kustomize-controller", "--as", flux, "-f", "-")
		if out := must("", "-n", "team-a", "get", "videorender", "applied", "-o", "jsonpath={.metadata.annotations}"); !strings.Contains(out, `"video.videoops.io/approved-by":"`+flux+`"`) {
			t.Errorf("after a server-side apply the stamp is gone: %s", out)
		}
	}
	must("", "-n", "team-a", "create", "rolebinding", "default-editor", "--clusterrole", "video-operator-videorender-editor-role",
		"--serviceaccount", "team-a:default")
	if out, err := run(render("by-other-sa"), "create", "--as", "system:serviceaccount:team-a:default", "-f", "-"); err == nil ||
		!strings.Contains(out, "needs the permission approve") {
		t.Errorf("a service account without the binding approved: %v\n%s", err, out)
	}
}

// yamlOf is an object as text, for looking for a message in it.
func yamlOf(t *testing.T, o *unstructured.Unstructured) (string, error) {
	t.Helper()
	if o == nil {
		t.Fatal("no such object")
	}
	js, err := o.MarshalJSON()
	return string(js), err
}

// clusterScoped reports whether objects of kind have no namespace: the RBAC cluster kinds and the
// admission policies and their bindings.
func clusterScoped(kind string) bool {
	return strings.HasPrefix(kind, "Cluster") || strings.Contains(kind, "AdmissionPolicy")
}
