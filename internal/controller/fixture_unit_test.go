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
	"context"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
)

// stepFixture runs one step of the render lifecycle against a fake API server and a fake service,
// and records every write the step makes, in order, as "verb Kind[/subresource] namespace/name"
// (cert-manager's ExpectedActions, cluster-api's step tests). No envtest: these run in seconds.
type stepFixture struct {
	t      *testing.T
	scheme *runtime.Scheme
	c      client.WithWatch
	api    *apiclient.Fake
	l      *lifecycle[*videov1alpha1.VideoRender]

	mu     sync.Mutex
	writes []string
	// failWrite, when set, answers a write instead of the fake API server (an injected conflict).
	failWrite func(verb, what string) error
}

const fixtureNS = "tenant"

func newStepFixture(t *testing.T, objs ...client.Object) *stepFixture {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := videov1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	f := &stepFixture{t: t, scheme: s, api: &apiclient.Fake{
		ListVideoBrandsFunc: func(context.Context) ([]apiclient.Brand, error) { return nil, nil },
	}}
	secret := &corev1.Secret{ObjectMeta: metaOf(videov1alpha1.DefaultAPIKeySecretName),
		Data: map[string][]byte{videov1alpha1.DefaultAPIKeySecretKey: []byte("sk-video-fixture-key")}}
	objs = append(objs, secret)
	f.c = fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).
		WithStatusSubresource(&videov1alpha1.VideoRender{}, &videov1alpha1.VideoStoryboard{}, &videov1alpha1.VideoBudget{}).
		WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if err := f.write("create", obj, ""); err != nil {
					return err
				}
				return c.Create(ctx, obj, opts...)
			},
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				if err := f.write("update", obj, ""); err != nil {
					return err
				}
				return c.Update(ctx, obj, opts...)
			},
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
				if err := f.write("patch", obj, ""); err != nil {
					return err
				}
				return c.Patch(ctx, obj, p, opts...)
			},
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
				if err := f.write("patch", obj, sub); err != nil {
					return err
				}
				return c.SubResource(sub).Patch(ctx, obj, p, opts...)
			},
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				if err := f.write("update", obj, sub); err != nil {
					return err
				}
				return c.SubResource(sub).Update(ctx, obj, opts...)
			},
		}).Build()
	r, err := NewReconcilers(f.c, Options{ClientFactory: &apiclient.FakeFactory{Client: f.api}, APIReader: f.c,
		Recorder: fakeAnnotated{events.NewFakeRecorder(100)}, LedgerNamespace: "video-operator-system"})
	if err != nil {
		t.Fatal(err)
	}
	f.l = r.Render.lifecycle
	return f
}

func metaOf(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: fixtureNS, Name: name}
}

func (f *stepFixture) write(verb string, obj client.Object, sub string) error {
	gvk, err := apiutil.GVKForObject(obj, f.scheme)
	if err != nil {
		return err
	}
	what := gvk.Kind
	if sub != "" {
		what += "/" + sub
	}
	what += " " + obj.GetNamespace() + "/" + obj.GetName()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failWrite != nil {
		if err := f.failWrite(verb, what); err != nil {
			f.writes = append(f.writes, verb+" "+what+" (refused)")
			return err
		}
	}
	f.writes = append(f.writes, verb+" "+what)
	return nil
}

// Writes returns the writes so far and forgets them.
func (f *stepFixture) Writes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.writes
	f.writes = nil
	return w
}

// scopeOf reads the render as a reconcile would and begins its reconcile: its status transaction
// and what the spec asks for (the step resolve's target, with its request digest).
func (f *stepFixture) scopeOf(name string) *scope[*videov1alpha1.VideoRender] {
	f.t.Helper()
	s := f.l.newScope(f.get(name))
	s.target = f.targetOf(s.obj)
	return s
}

// answered makes the render's API key one the service answered a moment ago, so that a paid call
// goes without the free check an idle key takes first (callgate's circuit).
func (f *stepFixture) answered(obj *videov1alpha1.VideoRender) {
	f.t.Helper()
	_, keyID, err := f.l.apiClient(context.Background(), obj)
	if err != nil {
		f.t.Fatal(err)
	}
	f.l.circuits.Answered(keyID)
}

// targetOf is what the render's current spec asks for, with its request digest.
func (f *stepFixture) targetOf(obj *videov1alpha1.VideoRender) *target {
	f.t.Helper()
	t, err := f.l.adapter.resolve(context.Background(), obj)
	if err != nil {
		f.t.Fatal(err)
	}
	if t.wait == nil {
		if err := t.setDigests(); err != nil {
			f.t.Fatal(err)
		}
	}
	return t
}

// get reads the render from the fake API server.
func (f *stepFixture) get(name string) *videov1alpha1.VideoRender {
	f.t.Helper()
	obj := &videov1alpha1.VideoRender{}
	if err := f.c.Get(context.Background(), client.ObjectKey{Namespace: fixtureNS, Name: name}, obj); err != nil {
		f.t.Fatal(err)
	}
	return obj
}

// inlineRender is a render of an inline script storyboard ("Scene fields": a story scene).
func inlineRender(name string) *videov1alpha1.VideoRender {
	return &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: fixtureNS, Name: name, Generation: 1, UID: types.UID("uid-" + name)},
		Spec: videov1alpha1.VideoRenderSpec{Storyboard: &videov1alpha1.StoryboardRequest{VideoName: "Fixture " + name,
			Scenes: []videov1alpha1.Scene{{Story: ptr.To("A short script. It has two sentences.")}}}}}
}

func sameWrites(got, want []string) error {
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("writes:\n got  %q\n want %q", got, want)
	}
	return nil
}
