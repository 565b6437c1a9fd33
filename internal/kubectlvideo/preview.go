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
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

func newPreviewCommand(env *Env) *cobra.Command {
	var output string
	var open bool
	cmd := &cobra.Command{
		Use:   "preview vsb/NAME [--open | -o html [FILE]]",
		Short: "A storyboard preview as a contact sheet: one card per scene with its thumbnail and narration",
		Long: "Without flags, prints the scenes, the render parameters and the VideoRenders that refer to the\n" +
			"storyboard. -o html writes a self-contained HTML contact sheet (thumbnails embedded) to FILE, or\n" +
			"to standard output without FILE; --open writes it to FILE or a temporary file and opens it\n" +
			"with $BROWSER (or xdg-open).",
		Example: "  kubectl video preview vsb/meet-video-operator\n" +
			"  kubectl video preview vsb/meet-video-operator -o html preview.html\n" +
			"  kubectl video preview vsb/meet-video-operator --open",
		Args: cobra.RangeArgs(1, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, file, err := previewArgs(args)
			if err != nil {
				return err
			}
			switch output {
			case "", "text":
				if file != "" && !open {
					return fmt.Errorf("a FILE argument needs -o html")
				}
				if !open {
					return PreviewText(cmd.Context(), env, t.Name)
				}
			case "html":
			default:
				return fmt.Errorf("unknown output %q: use text or html", output)
			}
			return PreviewHTML(cmd.Context(), env, t.Name, file, open)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: text (default) or html")
	cmd.Flags().BoolVar(&open, "open", false, "write the HTML contact sheet and open it in a browser")
	return cmd
}

// previewArgs splits the arguments into the storyboard and an optional output file: both
// "vsb/NAME FILE" and "vsb NAME FILE" are accepted.
func previewArgs(args []string) (Target, string, error) {
	var file string
	targetArgs := args
	switch {
	case len(args) == 3:
		targetArgs, file = args[:2], args[2]
	case len(args) == 2 && strings.Contains(args[0], "/"):
		targetArgs, file = args[:1], args[1]
	}
	t, err := parseTargetOf(targetArgs, KindStoryboard, "preview")
	return t, file, err
}

// reviewedStoryboard reads a storyboard whose preview of the current spec completed, or says
// why there is nothing to review yet.
func reviewedStoryboard(ctx context.Context, env *Env, name string) (*videov1alpha1.VideoStoryboard, error) {
	vsb, err := getStoryboard(ctx, env.Client, env.Namespace, name)
	if err != nil {
		return nil, err
	}
	st := &vsb.Status
	switch {
	case st.Phase == videov1alpha1.PhaseFailed:
		why := headlineReason(&st.JobStatus)
		if st.Failure != nil {
			why = st.Failure.Code + ": " + st.Failure.Message
		}
		return nil, fmt.Errorf("the preview of vsb/%s failed (%s): see %s", name, why, hint("status", Target{KindStoryboard, name}, vsb.Namespace))
	case st.Preview == nil || len(st.Preview.Scenes) == 0 || st.PreviewedGeneration == 0:
		return nil, fmt.Errorf("the preview of vsb/%s is not complete yet (phase %s, progress %s): try again when its phase is Completed",
			name, orDash(string(st.Phase)), progressText(st.Progress))
	case st.PreviewedGeneration != vsb.Generation:
		return nil, fmt.Errorf("the preview of vsb/%s is of generation %d, but the spec is at generation %d: the new preview is not complete yet (phase %s, progress %s)",
			name, st.PreviewedGeneration, vsb.Generation, orDash(string(st.Phase)), progressText(st.Progress))
	}
	return vsb, nil
}

// approvableStoryboard is reviewedStoryboard for approve and render: its preview must have a
// digest, which a preview adopted by hand whose request is unknown, or one whose spec was edited
// before it completed, does not have. Such a preview is shown, never approved.
func approvableStoryboard(ctx context.Context, env *Env, name string) (*videov1alpha1.VideoStoryboard, error) {
	vsb, err := reviewedStoryboard(ctx, env, name)
	if err != nil {
		return nil, err
	}
	if p := vsb.Status.Preview; p.Digest == "" {
		why := "it was recorded by an operator older than approval pinning"
		if p.Unverified != "" {
			why = p.Unverified
		}
		return nil, fmt.Errorf("the preview of vsb/%s cannot be approved: it has no digest (%s); a fresh preview of its spec can be approved "+
			"(edit the storyboard's spec, or preview it again)", name, why)
	}
	return vsb, nil
}

// rendersOf lists the VideoRenders of the storyboard's namespace whose storyboardRef names it.
func rendersOf(ctx context.Context, c client.Client, vsb *videov1alpha1.VideoStoryboard) ([]videov1alpha1.VideoRender, error) {
	var list videov1alpha1.VideoRenderList
	if err := c.List(ctx, &list, client.InNamespace(vsb.Namespace)); err != nil {
		return nil, fmt.Errorf("listing the VideoRenders of namespace %q: %w", vsb.Namespace, err)
	}
	var out []videov1alpha1.VideoRender
	for _, vr := range list.Items {
		if vr.Spec.StoryboardRef != nil && vr.Spec.StoryboardRef.Name == vsb.Name {
			out = append(out, vr)
		}
	}
	return out, nil
}

// renderSummaries says, per render, its phase and which storyboard generation it rendered.
func renderSummaries(vrs []videov1alpha1.VideoRender) []string {
	out := make([]string, 0, len(vrs))
	for _, vr := range vrs {
		s := fmt.Sprintf("vr/%s (%s", vr.Name, orDash(string(vr.Status.Phase)))
		if g := vr.Status.StoryboardGeneration; g > 0 {
			s += fmt.Sprintf(", renders storyboard generation %d", g)
		}
		out = append(out, s+")")
	}
	return out
}

// param is one render parameter, its value as compact JSON unless it is a plain string.
type param struct{ Name, Value string }

// renderParams flattens the preview's render parameters to sorted name/value pairs.
func renderParams(p *videov1alpha1.StoryboardPreview) []param {
	if p == nil || p.RenderParameters == nil || len(p.RenderParameters.Raw) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(p.RenderParameters.Raw, &m); err != nil {
		return []param{{Name: "(as sent)", Value: string(p.RenderParameters.Raw)}}
	}
	out := make([]param, 0, len(m))
	for k, v := range m {
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = string(v)
		}
		out = append(out, param{Name: k, Value: s})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// PreviewText prints the contact sheet in the terminal.
func PreviewText(ctx context.Context, env *Env, name string) error {
	vsb, err := reviewedStoryboard(ctx, env, name)
	if err != nil {
		return err
	}
	refs, err := rendersOf(ctx, env.Client, vsb)
	if err != nil {
		return err
	}
	p := &printer{w: env.Out}
	p.line("Storyboard %s/%s: %q, generation %d, %d scenes", vsb.Namespace, vsb.Name, vsb.Spec.VideoName, vsb.Generation, len(vsb.Status.Preview.Scenes))
	for i, sc := range vsb.Status.Preview.Scenes {
		p.line("")
		p.line("Scene %d  %s", i+1, orDash(visible(sc.Thumbnail)))
		for _, l := range wrap(visible(sc.Story), 96) {
			p.line("  %s", l)
		}
	}
	if params := renderParams(vsb.Status.Preview); len(params) > 0 {
		p.line("")
		p.line("Render parameters:")
		for _, pr := range params {
			p.line("  %-22s %s", pr.Name, pr.Value)
		}
	}
	p.line("")
	if d := vsb.Status.Preview.Digest; d != "" {
		p.line("Preview digest: %s", d)
	} else if u := vsb.Status.Preview.Unverified; u != "" {
		p.line("Preview digest: none: this preview cannot be approved (%s)", u)
	}
	if len(refs) == 0 {
		p.line("No VideoRender refers to it yet. To render it: %s", hint("render", Target{KindStoryboard, vsb.Name}, vsb.Namespace))
	} else {
		p.line("Rendered by: %s", strings.Join(renderSummaries(refs), ", "))
		printApprovals(p, vsb, refs)
	}
	return nil
}

// PreviewHTML writes the contact sheet as a self-contained HTML file (or to standard output when
// file is empty and open is false), and opens it when asked.
func PreviewHTML(ctx context.Context, env *Env, name, file string, open bool) error {
	vsb, err := reviewedStoryboard(ctx, env, name)
	if err != nil {
		return err
	}
	refs, err := rendersOf(ctx, env.Client, vsb)
	if err != nil {
		return err
	}
	sheet := newContactSheet(ctx, env, vsb, refs)
	if file == "" && !open {
		return sheet.write(env.Out)
	}
	if file == "" {
		f, err := os.CreateTemp("", "kubectl-video-"+vsb.Name+"-*.html")
		if err != nil {
			return fmt.Errorf("creating a file for the contact sheet of vsb/%s: %w", vsb.Name, err)
		}
		file = f.Name()
		_ = f.Close()
	}
	if err := sheet.writeFile(file); err != nil {
		return fmt.Errorf("writing the contact sheet of vsb/%s: %w", vsb.Name, err)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	_, _ = fmt.Fprintf(env.Out, "Wrote the contact sheet of vsb/%s (%d scenes, %d thumbnails embedded) to %s\n",
		vsb.Name, len(sheet.Scenes), sheet.embedded(), abs)
	for _, n := range sheet.notes() {
		_, _ = fmt.Fprintf(env.ErrOut, "warning: %s\n", n)
	}
	if open {
		return env.Open(abs)
	}
	return nil
}

// visible names the control and format characters of s (U+001B, U+202E, U+200B...) instead of
// passing them to the reviewer's terminal or browser, where they could hide, reorder or conceal
// words: the render narrates the text as it is, so the reviewer must see all of it.
// Whitespace is kept (wrap folds it).
func visible(s string) string {
	var b strings.Builder
	for _, r := range s {
		if (unicode.IsControl(r) && !unicode.IsSpace(r)) || unicode.Is(unicode.Cf, r) {
			fmt.Fprintf(&b, "[%U]", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// wrap breaks text into lines of at most width characters, at spaces.
func wrap(s string, width int) []string {
	var lines []string
	var cur strings.Builder
	for _, w := range strings.Fields(s) {
		if cur.Len() > 0 && cur.Len()+1+len(w) > width {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}
