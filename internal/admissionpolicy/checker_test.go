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

package admissionpolicy

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// installed are the policies and bindings of Expected as kustomize names them (a prefix).
func installed() []client.Object {
	var objs []client.Object
	for _, p := range Expected {
		labels := map[string]string{Label: p.ID}
		objs = append(objs,
			&admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "video-operator-" + p.ID, Labels: labels}},
			&admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "video-operator-" + p.ID, Labels: labels},
				Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "video-operator-" + p.ID,
					ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}}})
	}
	return objs
}

func newChecker(t *testing.T, c client.Client) (*Checker, *events.FakeRecorder) {
	t.Helper()
	rec := events.NewFakeRecorder(10)
	ch, err := NewChecker(c, rec, prometheus.NewRegistry(), logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	return ch, rec
}

func fakeClient(objs ...client.Object) client.WithWatch {
	scheme := runtime.NewScheme()
	_ = admissionregistrationv1.AddToScheme(scheme)
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
}

func gauge(t *testing.T, ch *Checker, id string) float64 {
	t.Helper()
	var m dto.Metric
	if err := ch.missing.WithLabelValues(id).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

func drain(rec *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestCheckerReportsNothingWhenEveryPolicyIsBound(t *testing.T) {
	ch, rec := newChecker(t, fakeClient(installed()...))
	if problems := ch.Look(context.Background()); len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	for _, p := range Expected {
		if g := gauge(t, ch, p.ID); g != 0 {
			t.Errorf("%s{policy=%q} = %v, want 0", MissingMetric, p.ID, g)
		}
	}
	if evs := drain(rec); len(evs) != 0 {
		t.Errorf("events: %v", evs)
	}
}

func TestCheckerReportsAMissingOrUnboundPolicy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(objs []client.Object) []client.Object
		want   string
	}{
		{"no policy", func(objs []client.Object) []client.Object { return objs[1:] }, "no ValidatingAdmissionPolicy labelled"},
		{"no binding", func(objs []client.Object) []client.Object { return append(objs[:1:1], objs[2:]...) }, "has no ValidatingAdmissionPolicyBinding"},
		{"a binding of another policy", func(objs []client.Object) []client.Object {
			objs[1].(*admissionregistrationv1.ValidatingAdmissionPolicyBinding).Spec.PolicyName = "something-else"
			return objs
		}, "has no ValidatingAdmissionPolicyBinding"},
		{"a binding that only warns", func(objs []client.Object) []client.Object {
			objs[1].(*admissionregistrationv1.ValidatingAdmissionPolicyBinding).Spec.ValidationActions =
				[]admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn}
			return objs
		}, "has no ValidatingAdmissionPolicyBinding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeClient(tc.change(installed())...)
			ch, rec := newChecker(t, c)
			first, second := Expected[0].ID, Expected[1].ID
			problems := ch.Look(context.Background())
			if !strings.Contains(problems[first], tc.want) || len(problems) != 1 {
				t.Errorf("problems %v, want one for %s with %q", problems, first, tc.want)
			}
			if g := gauge(t, ch, first); g != 1 {
				t.Errorf("%s{policy=%q} = %v, want 1", MissingMetric, first, g)
			}
			if g := gauge(t, ch, second); g != 0 {
				t.Errorf("%s{policy=%q} = %v, want 0", MissingMetric, second, g)
			}
			evs := drain(rec)
			if len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning "+ReasonMissing+" ") || !strings.Contains(evs[0], "InvalidRequest") {
				t.Errorf("events %v, want one Warning %s", evs, ReasonMissing)
			}
			// The next look finds the same: the gauge stays, no second event.
			ch.Look(context.Background())
			if evs := drain(rec); len(evs) != 0 || gauge(t, ch, first) != 1 {
				t.Errorf("second look: events %v, gauge %v", evs, gauge(t, ch, first))
			}
			// Installed again: the gauge goes to 0 and a Normal event says so.
			for _, o := range installed() {
				_ = c.Delete(context.Background(), o)
				if err := c.Create(context.Background(), o); err != nil {
					t.Fatal(err)
				}
			}
			if problems := ch.Look(context.Background()); len(problems) != 0 {
				t.Errorf("after reinstalling: %v", problems)
			}
			if evs := drain(rec); len(evs) != 1 || !strings.HasPrefix(evs[0], "Normal "+ReasonRestored) || gauge(t, ch, first) != 0 {
				t.Errorf("after reinstalling: events %v, gauge %v", evs, gauge(t, ch, first))
			}
		})
	}
}

// A policy that cannot be read (no RBAC, an API server without the API) is not known to be in
// force: it is reported.
func TestCheckerReportsAPolicyItCannotRead(t *testing.T) {
	c := interceptor.NewClient(fakeClient(installed()...), interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			return errors.New("forbidden")
		},
	})
	ch, _ := newChecker(t, c)
	problems := ch.Look(context.Background())
	for _, p := range Expected {
		if !strings.Contains(problems[p.ID], "cannot be read: forbidden") || gauge(t, ch, p.ID) != 1 {
			t.Errorf("%s: problem %q, gauge %v", p.ID, problems[p.ID], gauge(t, ch, p.ID))
		}
	}
}
