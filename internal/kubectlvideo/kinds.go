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

// Package kubectlvideo is the kubectl plugin `kubectl video`: status, a contact sheet of a
// storyboard preview, render-from-preview with confirmation, retry, confirm-resubmit and
// outputs. Each command takes its streams and a controller-runtime client, so tests drive it
// in-process against a real API server; cmd/kubectl-video only wires the kubeconfig flags.
package kubectlvideo

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// Kind is one of the kinds the plugin works with.
type Kind string

// The kinds, spelled as in their manifests.
const (
	KindStoryboard Kind = "VideoStoryboard"
	KindRender     Kind = "VideoRender"
	// KindBudget has no job: status shows it, the commands that act on a job refuse it.
	KindBudget Kind = "VideoBudget"
)

// short is the kind's short name, as kubectl get accepts it.
func (k Kind) short() string {
	switch k {
	case KindStoryboard:
		return "vsb"
	case KindBudget:
		return "vb"
	}
	return "vr"
}

// kindAliases are the names kubectl accepts for each kind: singular, plural, short name and
// the fully qualified resource.
var kindAliases = map[string]Kind{
	"videostoryboard": KindStoryboard, "videostoryboards": KindStoryboard, "vsb": KindStoryboard,
	"videostoryboards.video.videoops.io": KindStoryboard, "videostoryboard.video.videoops.io": KindStoryboard,
	"videorender": KindRender, "videorenders": KindRender, "vr": KindRender,
	"videorenders.video.videoops.io": KindRender, "videorender.video.videoops.io": KindRender,
	"videobudget": KindBudget, "videobudgets": KindBudget, "vb": KindBudget,
	"videobudgets.video.videoops.io": KindBudget, "videobudget.video.videoops.io": KindBudget,
}

// unknownKind names the kinds the plugin knows.
func unknownKind(kind string) error {
	return fmt.Errorf("unknown kind %q: kubectl video works with videostoryboard (vsb), videorender (vr) and videobudget (vb)", kind)
}

// Target is the object a command acts on.
type Target struct {
	Kind Kind
	Name string
}

func (t Target) String() string { return t.Kind.short() + "/" + t.Name }

// ParseTarget reads KIND/NAME, or KIND NAME as two arguments, the way kubectl does.
func ParseTarget(args []string) (Target, error) {
	if len(args) != 1 && len(args) != 2 || len(args) == 1 && !strings.Contains(args[0], "/") {
		return Target{}, errExpectedKindName(args)
	}
	ts, err := ParseTargets(args)
	if err != nil {
		return Target{}, err
	}
	if len(ts) != 1 || ts[0].Name == "" {
		return Target{}, errExpectedKindName(args)
	}
	return ts[0], nil
}

func errExpectedKindName(args []string) error {
	return fmt.Errorf("expected KIND/NAME (for example vsb/my-preview or vr/my-video), got %q", strings.Join(args, " "))
}

// ParseTargets reads objects as kubectl get does: KIND/NAME each (vr/a vr/b), or one KIND then
// its names (vr a b). A KIND alone is a Target without a Name: every object of that kind.
func ParseTargets(args []string) ([]Target, error) {
	if len(args) == 0 {
		return nil, errExpectedKindName(args)
	}
	if !strings.Contains(args[0], "/") {
		k, ok := kindAliases[strings.ToLower(args[0])]
		if !ok {
			return nil, unknownKind(args[0])
		}
		if len(args) == 1 {
			return []Target{{Kind: k}}, nil
		}
		var ts []Target
		for _, name := range args[1:] {
			if strings.Contains(name, "/") || name == "" {
				return nil, fmt.Errorf("%q: name objects as KIND/NAME each, or give one KIND then names, not both", strings.Join(args, " "))
			}
			ts = append(ts, Target{Kind: k, Name: name})
		}
		return ts, nil
	}
	var ts []Target
	for _, arg := range args {
		kind, name, found := strings.Cut(arg, "/")
		if !found {
			return nil, fmt.Errorf("%q: name objects as KIND/NAME each, or give one KIND then names, not both", strings.Join(args, " "))
		}
		k, ok := kindAliases[strings.ToLower(kind)]
		if !ok {
			return nil, unknownKind(kind)
		}
		if name == "" {
			return nil, fmt.Errorf("%q names no object: expected KIND/NAME", arg)
		}
		ts = append(ts, Target{Kind: k, Name: name})
	}
	return ts, nil
}

// parseJobTarget is ParseTarget for the commands that act on a job: a VideoBudget has none.
func parseJobTarget(args []string, command string) (Target, error) {
	t, err := ParseTarget(args)
	if err == nil && t.Kind == KindBudget {
		return t, fmt.Errorf("kubectl video %s works on a VideoRender (vr) or a VideoStoryboard (vsb), not on %s", command, t)
	}
	return t, err
}

// parseTargetOf is ParseTarget for commands that accept only one kind.
func parseTargetOf(args []string, want Kind, command string) (Target, error) {
	t, err := ParseTarget(args)
	if err != nil {
		return t, err
	}
	if t.Kind != want {
		return t, fmt.Errorf("kubectl video %s works on a %s (%s/NAME), not on %s", command, want, want.short(), t)
	}
	return t, nil
}

// object is what the commands read from either kind.
type object interface {
	client.Object
	jobStatus() *videov1alpha1.JobStatus
	// raw is the typed object, for the client (the scheme knows only the API types).
	raw() client.Object
}

type storyboard struct{ *videov1alpha1.VideoStoryboard }

func (s storyboard) jobStatus() *videov1alpha1.JobStatus { return &s.Status.JobStatus }
func (s storyboard) raw() client.Object                  { return s.VideoStoryboard }

type render struct{ *videov1alpha1.VideoRender }

func (r render) jobStatus() *videov1alpha1.JobStatus { return &r.Status.JobStatus }
func (r render) raw() client.Object                  { return r.VideoRender }

// get reads the target in namespace ns, with an error that names it when it does not exist.
func get(ctx context.Context, c client.Client, ns string, t Target) (object, error) {
	key := client.ObjectKey{Namespace: ns, Name: t.Name}
	if t.Kind == KindStoryboard {
		vsb := &videov1alpha1.VideoStoryboard{}
		if err := c.Get(ctx, key, vsb); err != nil {
			return nil, notFoundOr(err, t, ns)
		}
		return storyboard{vsb}, nil
	}
	vr := &videov1alpha1.VideoRender{}
	if err := c.Get(ctx, key, vr); err != nil {
		return nil, notFoundOr(err, t, ns)
	}
	return render{vr}, nil
}

// notFoundOr turns NotFound into an error that says what is missing and where.
func notFoundOr(err error, t Target, ns string) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%s %q not found in namespace %q", t.Kind, t.Name, ns)
	}
	return fmt.Errorf("reading %s in namespace %q: %w", t, ns, err)
}

// getStoryboard and getRender read one kind.
func getStoryboard(ctx context.Context, c client.Client, ns, name string) (*videov1alpha1.VideoStoryboard, error) {
	o, err := get(ctx, c, ns, Target{Kind: KindStoryboard, Name: name})
	if err != nil {
		return nil, err
	}
	return o.(storyboard).VideoStoryboard, nil
}

func getRender(ctx context.Context, c client.Client, ns, name string) (*videov1alpha1.VideoRender, error) {
	o, err := get(ctx, c, ns, Target{Kind: KindRender, Name: name})
	if err != nil {
		return nil, err
	}
	return o.(render).VideoRender, nil
}
