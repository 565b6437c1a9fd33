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
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// RenderOptions are the flags of render.
type RenderOptions struct {
	// Name of the VideoRender; the storyboard's name when empty.
	Name string
	// Yes skips the confirmation, for scripts.
	Yes bool
	// DryRun prints the VideoRender as YAML instead of creating it.
	DryRun bool
}

func newRenderCommand(env *Env) *cobra.Command {
	var o RenderOptions
	cmd := &cobra.Command{
		Use:   "render vsb/NAME [--name R] [--yes | --dry-run]",
		Short: "Create the VideoRender that renders a reviewed storyboard (a paid render), after confirmation",
		Long: "Shows what will be paid for, asks for confirmation and creates a VideoRender with storyboardRef,\n" +
			"which renders exactly the request whose preview completed. --dry-run prints the VideoRender as\n" +
			"YAML for a GitOps repository instead (there, merging it is the approval).",
		Example: "  kubectl video render vsb/meet-video-operator\n" +
			"  kubectl video render vsb/meet-video-operator --name meet-final --yes\n" +
			"  kubectl video render vsb/meet-video-operator --dry-run > videos/meet-video-operator.yaml",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := parseTargetOf(args, KindStoryboard, "render")
			if err != nil {
				return err
			}
			return Render(cmd.Context(), env, t.Name, o)
		},
	}
	cmd.Flags().StringVar(&o.Name, "name", "", "name of the VideoRender (default: the storyboard's name)")
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "create it without asking")
	cmd.Flags().BoolVar(&o.DryRun, "dry-run", false, "print the VideoRender as YAML instead of creating it")
	return cmd
}

// Render creates the VideoRender of a storyboard whose preview completed.
func Render(ctx context.Context, env *Env, storyboardName string, o RenderOptions) error {
	vsb, err := approvableStoryboard(ctx, env, storyboardName)
	if err != nil {
		return err
	}
	vr := renderFor(vsb, o.Name)
	// A name the API server would refuse is refused before anyone is asked to pay.
	if errs := validation.IsDNS1123Subdomain(vr.Name); len(errs) > 0 {
		return fmt.Errorf("%q is not a valid name for a VideoRender: %s", vr.Name, strings.Join(errs, "; "))
	}
	if o.DryRun {
		out, err := manifest(vr)
		if err != nil {
			return fmt.Errorf("printing VideoRender %s: %w", vr.Name, err)
		}
		_, err = env.Out.Write(out)
		return err
	}
	// A taken name is refused before anyone is asked to pay; Create refuses it again if it is
	// taken meanwhile.
	switch err := env.Client.Get(ctx, client.ObjectKeyFromObject(vr), &videov1alpha1.VideoRender{}); {
	case err == nil:
		return nameTaken(vr)
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("reading VideoRender %s/%s: %w", vr.Namespace, vr.Name, err)
	}
	// A render created pinned is an approval: ask first (approve.go).
	if err := mayApprove(ctx, env, vr); err != nil {
		return err
	}
	if author := vsb.GetAnnotations()[videov1alpha1.AnnotationSpecChangedBy]; author != "" {
		vr.SetAnnotations(withAnnotation(vr.GetAnnotations(), videov1alpha1.AnnotationApprovedStoryboardAuthor, author))
	}
	refs, err := rendersOf(ctx, env.Client, vsb)
	if err != nil {
		return err
	}
	p := &printer{w: env.Out}
	describeRender(p, vsb, vr, refs)
	describeBudget(ctx, p, env, vr.Namespace)
	if !o.Yes {
		ok, err := confirm(ctx, env, fmt.Sprintf("Create VideoRender %s and pay for the render?", vr.Name))
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("not confirmed: nothing was created")
		}
	}
	if !o.Yes {
		// The question may have been open for a while: what is paid for is what was shown.
		again, err := approvableStoryboard(ctx, env, storyboardName)
		if err != nil {
			return err
		}
		if d := vr.Spec.StoryboardRef.ApprovedDigest; again.Status.Preview.Digest != d {
			return changedSinceShown(again, d, again.Status.Preview.Digest)
		}
	}
	if err := env.Client.Create(ctx, vr); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nameTaken(vr)
		}
		return fmt.Errorf("creating VideoRender %s/%s: %w", vr.Namespace, vr.Name, err)
	}
	_, _ = fmt.Fprintf(env.Out, "Created vr/%s. Follow it with: %s\n", vr.Name, hint("status", Target{KindRender, vr.Name}, vr.Namespace))
	return nil
}

// manifest is the object as YAML for a repository: what a person writes, without the empty
// status and creationTimestamp the API types would print.
func manifest(obj any) ([]byte, error) {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	return yaml.Marshal(m)
}

func nameTaken(vr *videov1alpha1.VideoRender) error {
	return fmt.Errorf("VideoRender %q already exists in namespace %q: nothing was created; choose another name with --name", vr.Name, vr.Namespace)
}

// renderFor is the VideoRender that renders the storyboard, with the same API key.
func renderFor(vsb *videov1alpha1.VideoStoryboard, name string) *videov1alpha1.VideoRender {
	if name == "" {
		name = vsb.Name
	}
	vr := &videov1alpha1.VideoRender{
		TypeMeta:   metav1.TypeMeta{APIVersion: videov1alpha1.GroupVersion.String(), Kind: string(KindRender)},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: vsb.Namespace},
		Spec: videov1alpha1.VideoRenderSpec{
			// The approval is pinned to the preview shown: a later preview is not paid for
			// until someone approves it (kubectl video approve).
			StoryboardRef: &videov1alpha1.StoryboardReference{Name: vsb.Name, ApprovedDigest: vsb.Status.Preview.Digest},
		},
	}
	// The render pays with the account that made the preview, unless it is the default anyway.
	if ref := vsb.Spec.APIKeySecretRef; ref != nil &&
		(ref.Name != videov1alpha1.DefaultAPIKeySecretName || ref.Key != videov1alpha1.DefaultAPIKeySecretKey) {
		vr.Spec.APIKeySecretRef = ref.DeepCopy()
	}
	return vr
}

// describeRender says what the render will pay for, and warns when it is rendered already.
func describeRender(p *printer, vsb *videov1alpha1.VideoStoryboard, vr *videov1alpha1.VideoRender, refs []videov1alpha1.VideoRender) {
	p.line("This creates VideoRender %s/%s, a paid render of storyboard vsb/%s as previewed:", vr.Namespace, vr.Name, vsb.Name)
	p.field("  Video name", orDash(vsb.Spec.VideoName))
	p.field("  Generation", fmt.Sprintf("%d (preview job %s)", vsb.Generation, orDash(vsb.Status.JobID)))
	p.field("  Scenes", fmt.Sprintf("%d", len(vsb.Status.Preview.Scenes)))
	if params := renderParams(vsb.Status.Preview); len(params) > 0 {
		p.line("  Render parameters:")
		for _, pr := range params {
			p.line("    %-22s %s", pr.Name, pr.Value)
		}
	}
	// Which account pays, also when it is the namespace's default one.
	if ref := vr.Spec.APIKeySecretRef; ref != nil {
		p.field("  API key", fmt.Sprintf("Secret %s, key %s", ref.Name, ref.Key))
	} else {
		p.field("  API key", fmt.Sprintf("Secret %s, key %s (the default)", videov1alpha1.DefaultAPIKeySecretName, videov1alpha1.DefaultAPIKeySecretKey))
	}
	if d := vr.Spec.StoryboardRef.ApprovedDigest; d != "" {
		p.field("  Preview digest", d)
		p.line("The VideoRender renders this preview only: a later change of vsb/%s waits until it is approved", vsb.Name)
		p.line("(kubectl video approve vr/%s -n %s).", vr.Name, vr.Namespace)
	}
	if len(refs) > 0 {
		p.line("WARNING: vsb/%s is already rendered by %s: another VideoRender pays for it again.", vsb.Name, strings.Join(renderSummaries(refs), ", "))
	}
}

// describeBudget says how much of the namespace's VideoBudget the render would draw on; one
// that is used up makes the new render wait for the next period.
func describeBudget(ctx context.Context, p *printer, env *Env, ns string) {
	var list videov1alpha1.VideoBudgetList
	switch err := env.Client.List(ctx, &list, client.InNamespace(ns)); {
	case apierrors.IsForbidden(err):
		p.field("  Budget", "not shown: you may not read the VideoBudgets of this namespace")
		return
	case err != nil:
		p.field("  Budget", "unknown: "+err.Error())
		return
	case len(list.Items) == 0:
		p.field("  Budget", "no VideoBudget in namespace "+ns+": renders are not limited")
		return
	}
	for _, b := range list.Items {
		spec, st := b.Spec, b.Status
		period := strings.ToLower(string(orDefault(st.Period, spec.Period)))
		renders := fmt.Sprintf("%d renders used", st.Used.Renders+st.Reserved.Renders)
		if m := spec.MaxRenders; m != nil {
			renders = fmt.Sprintf("%d of %d renders used", st.Used.Renders+st.Reserved.Renders, *m)
		}
		if m := spec.MaxRenderSeconds; m != nil {
			renders += fmt.Sprintf(", %d of %d render seconds", st.Used.RenderSeconds, *m)
		}
		if m := spec.MaxAICredits; m != nil {
			credits := "0"
			if st.Used.AICredits != nil {
				credits = st.Used.AICredits.String()
			}
			renders += fmt.Sprintf(", %s of %s AI credits", credits, m.String())
		}
		until := ""
		if st.PeriodEnd != nil {
			until = " until " + st.PeriodEnd.UTC().Format(time.RFC3339)
		}
		p.field("  Budget", fmt.Sprintf("VideoBudget %s: %s this %s period%s", b.Name, renders, period, until))
		if m := spec.MaxRenders; m != nil && st.Used.Renders+st.Reserved.Renders >= *m {
			p.line("WARNING: VideoBudget %s has no render left this period: the VideoRender would wait (BudgetExhausted)%s.", b.Name, until)
		}
	}
}

func orDefault(v, def videov1alpha1.BudgetPeriod) videov1alpha1.BudgetPeriod {
	if v == "" {
		return def
	}
	return v
}

// confirm asks a yes/no question on the command's streams; only "y" or "yes" agrees. It asks
// only a terminal: an answer piped in (yes | kubectl video ...) is no person's decision to pay.
func confirm(ctx context.Context, env *Env, question string) (bool, error) {
	if !env.Terminal {
		return false, fmt.Errorf("standard input is not a terminal, so nobody can confirm: nothing was done (use --yes to confirm in a script)")
	}
	_, _ = fmt.Fprintf(env.Out, "%s [y/N]: ", question)
	// The answer is read aside, so that Ctrl-C (which cancels ctx: the plugin handles SIGINT)
	// ends the question instead of waiting for Enter.
	type answer struct {
		line string
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		line, err := bufio.NewReader(env.In).ReadString('\n')
		answered <- answer{line, err}
	}()
	var a answer
	select {
	case <-ctx.Done():
		_, _ = fmt.Fprintln(env.Out)
		return false, fmt.Errorf("interrupted: nothing was done")
	case a = <-answered:
	}
	if a.err != nil && a.line == "" {
		_, _ = fmt.Fprintln(env.Out)
		return false, fmt.Errorf("no answer on standard input (use --yes to confirm in a script): nothing was done")
	}
	switch strings.ToLower(strings.TrimSpace(a.line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}
