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
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// needsCluster is false for the commands that must work before any cluster is configured:
// version, help, the completion scripts, and cobra's __complete (which connects by itself, only
// when it completes object names).
func needsCluster(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		switch c.Name() {
		case "version", "help", "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
			return false
		}
	}
	return true
}

// argKinds are the kinds each command's arguments complete to, and whether it takes several.
var argKinds = map[string]struct {
	kinds []Kind
	many  bool
}{
	"status":           {[]Kind{KindRender, KindStoryboard, KindBudget}, true},
	"preview":          {[]Kind{KindStoryboard}, false},
	"render":           {[]Kind{KindStoryboard}, false},
	"outputs":          {[]Kind{KindRender}, false},
	"retry":            {[]Kind{KindRender, KindStoryboard}, false},
	"confirm-resubmit": {[]Kind{KindRender, KindStoryboard}, false},
}

// addCompletion completes object names and -n namespaces from the cluster, as kubectl does. The
// completion command itself is cobra's (bash, zsh, fish, powershell).
func addCompletion(root *cobra.Command, env *Env) {
	for _, cmd := range root.Commands() {
		if spec, ok := argKinds[cmd.Name()]; ok {
			cmd.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
				return completeObjects(cmd.Context(), env, spec.kinds, spec.many, args, toComplete), cobra.ShellCompDirectiveNoFileComp
			}
		}
	}
	_ = root.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return completeNamespaces(cmd.Context(), env, toComplete), cobra.ShellCompDirectiveNoFileComp
	})
}

// completeObjects offers KIND/NAME of the namespace's objects, or NAMEs after a separate KIND
// (status vr <TAB>). Names already on the line are not offered again.
func completeObjects(ctx context.Context, env *Env, kinds []Kind, many bool, args []string, toComplete string) []cobra.Completion {
	if ctx == nil {
		ctx = context.Background()
	}
	var withKind bool
	switch {
	case len(args) > 0 && !strings.Contains(args[0], "/"):
		// KIND NAME...: the kind is given, names follow.
		k, ok := kindAliases[strings.ToLower(args[0])]
		if !ok || !slices.Contains(kinds, k) || (!many && len(args) > 1) {
			return nil
		}
		kinds = []Kind{k}
	case len(args) > 0 && !many:
		return nil
	default:
		withKind = true
		if kind, _, found := strings.Cut(toComplete, "/"); found {
			k, ok := kindAliases[strings.ToLower(kind)]
			if !ok || !slices.Contains(kinds, k) {
				return nil
			}
			kinds = []Kind{k}
		}
	}
	if err := env.connect(); err != nil {
		cobra.CompDebugln("kubectl video: "+err.Error(), true)
		return nil
	}
	var out []cobra.Completion
	for _, k := range kinds {
		names, err := objectNames(ctx, env.Client, env.Namespace, k)
		if err != nil {
			cobra.CompDebugln("kubectl video: "+err.Error(), true)
			continue
		}
		for _, name := range names {
			candidate := name
			if withKind {
				candidate = Target{Kind: k, Name: name}.String()
			}
			if strings.HasPrefix(candidate, toComplete) && !slices.Contains(args, candidate) {
				out = append(out, candidate)
			}
		}
	}
	return out
}

// objectNames lists the names of one kind in namespace ns.
func objectNames(ctx context.Context, c client.Client, ns string, k Kind) ([]string, error) {
	var names []string
	switch k {
	case KindRender:
		var l videov1alpha1.VideoRenderList
		if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		for _, o := range l.Items {
			names = append(names, o.Name)
		}
	case KindStoryboard:
		var l videov1alpha1.VideoStoryboardList
		if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		for _, o := range l.Items {
			names = append(names, o.Name)
		}
	case KindBudget:
		var l videov1alpha1.VideoBudgetList
		if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		for _, o := range l.Items {
			names = append(names, o.Name)
		}
	}
	return names, nil
}

// completeNamespaces offers the cluster's namespaces after -n; nothing when they may not be
// listed.
func completeNamespaces(ctx context.Context, env *Env, toComplete string) []cobra.Completion {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := env.connect(); err != nil {
		cobra.CompDebugln("kubectl video: "+err.Error(), true)
		return nil
	}
	var l corev1.NamespaceList
	if err := env.Client.List(ctx, &l); err != nil {
		cobra.CompDebugln("kubectl video: listing namespaces: "+err.Error(), true)
		return nil
	}
	var out []cobra.Completion
	for _, ns := range l.Items {
		if strings.HasPrefix(ns.Name, toComplete) {
			out = append(out, ns.Name)
		}
	}
	return out
}
