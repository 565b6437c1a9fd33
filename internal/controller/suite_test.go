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
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/testutil"
)

// These tests run against a real kube-apiserver and etcd started by envtest. The binaries come
// from hack/envtest-assets.sh through KUBEBUILDER_ASSETS (make test sets it).

var (
	ctx       context.Context
	cancel    context.CancelFunc
	testEnv   *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
	scheme    = runtime.NewScheme()
)

func TestControllers(t *testing.T) {
	if testing.Short() {
		t.Skip("the envtest suite needs a kube-apiserver: run it without -short (make test does)")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "Controller Suite")
}

// patience is how many times longer than on a quiet machine the suite lets an asynchronous step
// take before a spec fails. The specs' bounds are written for a quiet 2-core machine; beside other
// CPU-bound work every step takes longer (a status write of a 10,000-scene render above all, which
// the API server validates rule by rule), and a 90 s bound on that write once failed there. An
// Eventually returns as soon as its condition holds, so patience costs time only in a spec that
// fails. Consistently windows are not stretched: load only makes them check less, never fail. The
// package still takes about 8 minutes (470 s with a one-minute load of 2 to 8 on 2 cores); the
// Makefile's -timeout (30m) leaves room for a machine almost four times as slow.
const patience = 3

// within is a spec's wall-clock bound d, as written for a quiet machine, times patience: every
// Eventually with a bound of its own takes it through within, and the default bound is within(20s).
func within(d time.Duration) time.Duration { return patience * d }

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	// Jobs of the simulated service take a fraction of a second at the specs' time scale.
	SetDefaultEventuallyTimeout(within(20 * time.Second))
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	SetDefaultConsistentlyPollingInterval(50 * time.Millisecond)
	ctx, cancel = context.WithCancel(context.Background())

	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(videov1alpha1.AddToScheme(scheme)).To(Succeed())
	Expect(apiextensionsv1.AddToScheme(scheme)).To(Succeed())

	testEnv = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		// envtest's own default, 20 s, is the bound load breaks first.
		ControlPlaneStartTimeout: within(20 * time.Second),
	}
	var err error
	cfg, err = testEnv.Start()
	Expect(err).NotTo(HaveOccurred(), "starting envtest: run the tests through 'make test', which provides KUBEBUILDER_ASSETS")
	Expect(cfg).NotTo(BeNil())
	// The admission policies an install has (config/policies): the scenes' rules.
	Expect(testutil.InstallPolicies(ctx, cfg)).To(Succeed())

	// Strict field validation makes the API server reject unknown fields instead of dropping them,
	// as kubectl does, so a typo in a test object fails the test.
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	k8sClient = client.WithFieldValidation(c, metav1.FieldValidationStrict)
	// The managers' own namespace, where the budget ledgers live (out of tenants' reach).
	Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: managerNamespace}})).To(Succeed())
})

// managerNamespace is the namespace the specs' managers run in: it holds the budget ledgers.
const managerNamespace = "video-operator-system"

var _ = AfterSuite(func() {
	cancel()
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
})

// newNamespace creates a namespace with a generated name for one spec: envtest has no namespace
// controller, so namespaces are never really deleted and specs must not share names.
func newNamespace() string {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// kubeVersion returns the Kubernetes version named in hack/envtest/versions.env, the one place
// that pins it.
func kubeVersion() string {
	GinkgoHelper()
	f, err := os.Open(filepath.Join("..", "..", "hack", "envtest", "versions.env"))
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "KUBE_VERSION="); ok {
			return v
		}
	}
	Expect(sc.Err()).NotTo(HaveOccurred())
	Fail("KUBE_VERSION not found in hack/envtest/versions.env")
	return ""
}
