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

package controller

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
)

// These specs prove the suite talks to a real API server: objects round-trip through etcd, the
// server applies its own defaulting and validation, and it reports the pinned version.
var _ = Describe("The envtest control plane", func() {
	It("stores and returns a Secret in a fresh namespace", func() {
		ns := newNamespace()
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "video-api-key"},
			StringData: map[string]string{"apiKey": "sim-key-1"},
		}
		Expect(k8sClient.Create(ctx, secret)).To(Succeed())

		var got corev1.Secret
		Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: ns, Name: "video-api-key"}, &got)).To(Succeed())
		// stringData is folded into data by the API server, not by the client.
		Expect(got.Data).To(HaveKeyWithValue("apiKey", []byte("sim-key-1")))
		Expect(got.Type).To(Equal(corev1.SecretTypeOpaque), "the server defaults the Secret type")
		Expect(got.UID).NotTo(BeEmpty())
	})

	It("rejects an invalid object with the server's own validation", func() {
		bad := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: newNamespace(), Name: "Not_A_DNS_Name"}}
		err := k8sClient.Create(ctx, bad)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "expected Invalid, got %v", err)
	})

	It("runs the Kubernetes version the project pins", func() {
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		v, err := dc.ServerVersion()
		Expect(err).NotTo(HaveOccurred())
		Expect(v.GitVersion).To(Equal("v"+kubeVersion()), "hack/envtest/versions.env names the version")
	})

	It("serves the CRDs installed from config/crd/bases", func() {
		var crds apiextensionsv1.CustomResourceDefinitionList
		Expect(k8sClient.List(ctx, &crds)).To(Succeed())
		for _, crd := range testEnv.CRDs {
			Expect(crds.Items).To(ContainElement(HaveField("Name", crd.Name)))
		}
	})
})
