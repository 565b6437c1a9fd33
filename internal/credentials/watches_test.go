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

package credentials

import (
	"context"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/videoops/video-operator/internal/testutil"
)

// secretsSeen collects the Secrets every watch of w ever delivered, by namespace/name.
type secretsSeen struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (s *secretsSeen) has(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[key]
}

func startAPIServer(t *testing.T) (*rest.Config, client.Client, *runtime.Scheme) {
	t.Helper()
	testutil.APIServer(t)
	env := &envtest.Environment{}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest (KUBEBUILDER_ASSETS): %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, c, scheme
}

// TestWatchesHoldOnlyTheNamedSecrets: a Secret is in the watches only once its name was read;
// a Secret of another name never is, not even its metadata; a change to a named Secret reaches
// a watch added before the name was read; past MaxNames, further names are read from a watch
// of every Secret.
func TestWatchesHoldOnlyTheNamedSecrets(t *testing.T) {
	g := NewWithT(t)
	cfg, c, scheme := startAPIServer(t)
	httpClient, err := rest.HTTPClientFor(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	g.Expect(err).NotTo(HaveOccurred())
	w := NewWatches(WatchesOptions{Config: cfg, HTTPClient: httpClient, Scheme: scheme, Mapper: mapper, MaxNames: 1})

	seen := &secretsSeen{seen: map[string]bool{}}
	g.Expect(w.OnWatch(func(cc cache.Cache) error {
		inf, err := cc.GetInformer(t.Context(), secretMetadata())
		if err != nil {
			return err
		}
		_, err = inf.AddEventHandler(eventRecorder{seen})
		return err
	})).To(Succeed())

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = w.Start(ctx) }()

	for _, s := range []struct{ ns, name string }{{"default", "video-api-key"}, {"default", "unrelated"}, {"kube-public", "video-api-key"}} {
		g.Expect(c.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.ns, Name: s.name},
			StringData: map[string]string{"apiKey": "k"}})).To(Succeed())
	}

	meta := secretMetadata()
	g.Expect(w.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "video-api-key"}, meta)).To(Succeed())
	g.Expect(meta.Name).To(Equal("video-api-key"))
	names, all := w.Names()
	g.Expect(names).To(Equal(1))
	g.Expect(all).To(BeFalse())
	// The watch of the name covers every namespace the manager watches; it delivered both
	// Secrets of that name and nothing else.
	g.Eventually(func() bool { return seen.has("kube-public/video-api-key") }, 30*time.Second).Should(BeTrue())
	g.Expect(seen.has("default/video-api-key")).To(BeTrue())
	g.Consistently(func() bool { return seen.has("default/unrelated") }, 2*time.Second).Should(BeFalse(),
		"a Secret no read named reached the watches")

	// A Secret of a watched name created later reaches the handler given before.
	g.Expect(c.Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "video-api-key"}})).To(Succeed())
	g.Eventually(func() bool { return seen.has("kube-system/video-api-key") }, 30*time.Second).Should(BeTrue())

	// MaxNames is 1: the second name is read from a watch of every Secret, which then delivers
	// the unrelated one too, and is reported.
	err = w.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "other-key"}, secretMetadata())
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
	names, all = w.Names()
	g.Expect(names).To(Equal(1))
	g.Expect(all).To(BeTrue())
	g.Eventually(func() bool { return seen.has("default/unrelated") }, 30*time.Second).Should(BeTrue())
}

// eventRecorder marks every Secret an informer delivers.
type eventRecorder struct{ s *secretsSeen }

func (e eventRecorder) mark(obj any) {
	if o, ok := obj.(client.Object); ok {
		e.s.mu.Lock()
		e.s.seen[o.GetNamespace()+"/"+o.GetName()] = true
		e.s.mu.Unlock()
	}
}

func (e eventRecorder) OnAdd(obj any, _ bool) { e.mark(obj) }
func (e eventRecorder) OnUpdate(_, obj any)   { e.mark(obj) }
func (e eventRecorder) OnDelete(obj any)      { e.mark(obj) }
