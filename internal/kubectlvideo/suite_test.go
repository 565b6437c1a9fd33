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

package kubectlvideo

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/controller"
	"github.com/videoops/video-operator/internal/simulator"
	"github.com/videoops/video-operator/internal/testutil"
)

// The plugin's commands run in-process against a real kube-apiserver and etcd (envtest), with
// the real manager and the service simulator, so every state they read is one the controllers
// really write. Two kinds of namespace:
//   - liveNS is managed: objects there move through their phases as in a cluster;
//   - namespaces from newStaticNamespace are not: specs write statuses there directly through the
//     status subresource, for states a command must refuse (an unfinished preview, for example).

const testAPIKey = "sk-video-plugin-test-1d2e3f"

var (
	ctx       context.Context
	cancel    context.CancelFunc
	testEnv   *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
	scheme    = k8sruntime.NewScheme()
	sim       *simulator.Server
	simSrv    *httptest.Server
	liveNS    string
)

func TestKubectlVideo(t *testing.T) {
	if testing.Short() {
		t.Skip("the plugin's suite " + testutil.ShortSkipsAPIServer)
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "kubectl video Suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	SetDefaultEventuallyTimeout(20 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	ctx, cancel = context.WithCancel(context.Background())

	Expect(clientgoscheme.AddToScheme(scheme)).To(Succeed())
	Expect(videov1alpha1.AddToScheme(scheme)).To(Succeed())

	testEnv = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	var err error
	cfg, err = testEnv.Start()
	Expect(err).NotTo(HaveOccurred(), "starting envtest: run the tests through 'make test', which provides KUBEBUILDER_ASSETS")
	Expect(testutil.InstallPolicies(ctx, cfg)).To(Succeed())
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	k8sClient = client.WithFieldValidation(c, metav1.FieldValidationStrict)

	sim = simulator.New(simulator.Options{APIKeys: []string{testAPIKey}, TimeScale: 0.002, Seed: uint64(GinkgoRandomSeed())})
	simSrv = httptest.NewServer(sim)

	liveNS = newNamespace("live-")
	Expect(k8sClient.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: liveNS, Name: videov1alpha1.DefaultAPIKeySecretName},
		StringData: map[string]string{videov1alpha1.DefaultAPIKeySecretKey: testAPIKey},
	})).To(Succeed())
	startManager()
})

var _ = AfterSuite(func() {
	if cancel != nil {
		cancel()
	}
	if simSrv != nil {
		simSrv.Close()
		sim.Close()
	}
	if testEnv != nil {
		Expect(testEnv.Stop()).To(Succeed())
	}
})

// startManager runs both controllers on liveNS only, against the simulator, with fast polling.
func startManager() {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{liveNS: {}}, DefaultTransform: controller.CacheTransform},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	Expect(err).NotTo(HaveOccurred())
	factory, err := apiclient.NewFactory(apiclient.Options{BaseURL: simSrv.URL + "/serviceapis", Timeout: 5 * time.Second},
		apiclient.NewLimiterRegistry(1000, 100))
	Expect(err).NotTo(HaveOccurred())
	r, err := controller.NewReconcilers(mgr.GetClient(), controller.Options{
		ClientFactory: factory,
		APIReader:     mgr.GetAPIReader(),
		Recorder:      mgr.GetEventRecorder("video-operator"),
		PollMin:       20 * time.Millisecond,
		PollMax:       60 * time.Millisecond,
		BackoffBase:   20 * time.Millisecond,
		BackoffMax:    200 * time.Millisecond,
		BrandCacheTTL: time.Second,
		CallTimeout:   5 * time.Second,
		Audit:         controller.NewAuditLogger(GinkgoWriter),
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(r.SetupWithManager(ctx, mgr, 4)).To(Succeed())
	go func() {
		defer GinkgoRecover()
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
}

// newNamespace creates a namespace with a generated name: envtest cannot delete namespaces.
func newNamespace(prefix string) string {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}
	Expect(k8sClient.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// result is what one run of the plugin printed and returned.
type result struct {
	out, errOut string
	err         error
}

// kubectlVideo runs the plugin in-process, as `kubectl video ARGS` in namespace ns, with stdin
// typed on a terminal.
func kubectlVideo(ns, stdin string, args ...string) result {
	GinkgoHelper()
	return runPlugin(Overrides{Client: k8sClient, Namespace: ns, IsTerminal: func(io.Reader) bool { return true }}, stdin, args...)
}

// kubectlVideoPiped runs the plugin with stdin from a pipe or a file, not a terminal.
func kubectlVideoPiped(ns, stdin string, args ...string) result {
	GinkgoHelper()
	return runPlugin(Overrides{Client: k8sClient, Namespace: ns, IsTerminal: func(io.Reader) bool { return false }}, stdin, args...)
}

// runPlugin runs the plugin in-process with the overrides; nothing may be opened.
func runPlugin(ov Overrides, stdin string, args ...string) result {
	GinkgoHelper()
	var out, errOut bytes.Buffer
	ov.Open = func(string) error { Fail("nothing may be opened in these specs"); return nil }
	cmd := NewCommand(strings.NewReader(stdin), &out, &errOut, ov)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	GinkgoWriter.Printf("$ kubectl video %s\n%s%s", strings.Join(args, " "), out.String(), errOut.String())
	if err != nil {
		GinkgoWriter.Printf("error: %v\n", err)
	}
	printed := out.String() + errOut.String()
	if err != nil {
		printed += err.Error()
	}
	Expect(printed).NotTo(ContainSubstring(testAPIKey), "no command ever prints the API key")
	return result{out: out.String(), errOut: errOut.String(), err: err}
}

// fromYAML decodes a manifest into obj, in namespace ns.
func fromYAML[T client.Object](obj T, ns, manifest string) T {
	GinkgoHelper()
	Expect(yaml.UnmarshalStrict([]byte(manifest), obj)).To(Succeed())
	obj.SetNamespace(ns)
	return obj
}

// threeScenes is a storyboard of three scenes, so the contact sheet has three cards.
func threeScenes(ns, name, videoName string) *videov1alpha1.VideoStoryboard {
	return fromYAML(&videov1alpha1.VideoStoryboard{}, ns, `
metadata: {name: `+name+`}
spec:
  videoName: `+videoName+`
  scenes:
    - story: Declare a video in YAML. The operator does the rest.
    - story: Review the storyboard the service designed, scene by scene.
    - story: Approve it with one command, and the render starts.
`)
}

// readyStoryboard creates the storyboard in liveNS and waits for its preview.
func readyStoryboard(name, videoName string) *videov1alpha1.VideoStoryboard {
	GinkgoHelper()
	vsb := threeScenes(liveNS, name, videoName)
	Expect(k8sClient.Create(ctx, vsb)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(vsb), vsb)).To(Succeed())
		g.Expect(vsb.Status.Phase).To(Equal(videov1alpha1.PhaseCompleted), "%+v", vsb.Status.Conditions)
		g.Expect(vsb.Status.PreviewedGeneration).To(Equal(vsb.Generation))
	}).Should(Succeed())
	return vsb
}

// getRenderNamed reads a VideoRender, for Eventually.
func getRenderNamed(ns, name string) func(Gomega) *videov1alpha1.VideoRender {
	return func(g Gomega) *videov1alpha1.VideoRender {
		vr := &videov1alpha1.VideoRender{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, vr)).To(Succeed())
		return vr
	}
}

// setStatus writes a status directly, in a namespace no manager watches.
func setStatus(obj client.Object) {
	GinkgoHelper()
	Expect(k8sClient.Status().Update(ctx, obj)).To(Succeed())
}
