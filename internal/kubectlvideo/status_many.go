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
	"context"
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// runStatus is kubectl video status: the list without arguments; otherwise one screen (or
// object, with -o) per object named, as kubectl get names them (vr/a vr/b, or vr a b). A kind
// alone is every object of that kind in the namespace, as kubectl describe vr; vb alone is the
// namespace's VideoBudget, which is always named default. An object that cannot be read is
// reported after the others are shown.
func runStatus(ctx context.Context, env *Env, args []string, output string) error {
	if err := checkStructured(output); err != nil {
		return err
	}
	if len(args) == 0 {
		if output == "" {
			return List(ctx, env)
		}
		objs, err := listVideos(ctx, env)
		if err != nil {
			return err
		}
		return printObjects(env.Out, output, objs, true)
	}
	targets, err := ParseTargets(args)
	if err != nil {
		return err
	}
	many := len(targets) > 1
	if len(targets) == 1 && targets[0].Name == "" {
		if targets[0].Kind == KindBudget {
			targets[0].Name = videov1alpha1.VideoBudgetName
		} else {
			many = true
			if targets, err = allOfKind(ctx, env, targets[0].Kind); err != nil {
				return err
			}
		}
	}
	var errs []error
	if output != "" {
		var objs []client.Object
		for _, t := range targets {
			o, err := getObject(ctx, env.Client, env.Namespace, t)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			objs = append(objs, o)
		}
		if len(objs) > 0 || many {
			if err := printObjects(env.Out, output, objs, many); err != nil {
				return err
			}
		}
		return errors.Join(errs...)
	}
	shown := 0
	for _, t := range targets {
		if shown > 0 {
			_, _ = fmt.Fprintln(env.Out)
		}
		var err error
		if t.Kind == KindBudget {
			err = BudgetStatus(ctx, env, t.Name)
		} else {
			err = Status(ctx, env, t)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		shown++
	}
	if len(targets) == 0 {
		_, _ = fmt.Fprintf(env.Out, "No %s in namespace %q.\n", targets0Kind(args), env.Namespace)
	}
	return errors.Join(errs...)
}

// targets0Kind is the kind named alone on the command line, for the empty answer.
func targets0Kind(args []string) string {
	if k, ok := kindAliases[strings.ToLower(args[0])]; ok {
		return string(k)
	}
	return args[0]
}

// allOfKind lists the objects of one kind in the namespace, as targets.
func allOfKind(ctx context.Context, env *Env, k Kind) ([]Target, error) {
	names, err := objectNames(ctx, env.Client, env.Namespace, k)
	if err != nil {
		return nil, fmt.Errorf("listing %ss in namespace %q: %w", k, env.Namespace, err)
	}
	ts := make([]Target, 0, len(names))
	for _, n := range names {
		ts = append(ts, Target{Kind: k, Name: n})
	}
	return ts, nil
}

// getObject reads any of the plugin's kinds, as the API type.
func getObject(ctx context.Context, c client.Client, ns string, t Target) (client.Object, error) {
	if t.Kind == KindBudget {
		return getBudget(ctx, c, ns, t.Name)
	}
	o, err := get(ctx, c, ns, t)
	if err != nil {
		return nil, err
	}
	return o.raw(), nil
}

// listVideos is what the list shows (the storyboards and renders of the namespace, or of all
// namespaces with -A), as API objects.
func listVideos(ctx context.Context, env *Env) ([]client.Object, error) {
	var opts []client.ListOption
	if !env.AllNamespaces {
		opts = append(opts, client.InNamespace(env.Namespace))
	}
	var vsbs videov1alpha1.VideoStoryboardList
	if err := env.Client.List(ctx, &vsbs, opts...); err != nil {
		return nil, fmt.Errorf("listing VideoStoryboards: %w", err)
	}
	var vrs videov1alpha1.VideoRenderList
	if err := env.Client.List(ctx, &vrs, opts...); err != nil {
		return nil, fmt.Errorf("listing VideoRenders: %w", err)
	}
	objs := make([]client.Object, 0, len(vsbs.Items)+len(vrs.Items))
	for i := range vsbs.Items {
		objs = append(objs, &vsbs.Items[i])
	}
	for i := range vrs.Items {
		objs = append(objs, &vrs.Items[i])
	}
	return objs, nil
}
