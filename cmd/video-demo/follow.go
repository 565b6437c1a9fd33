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

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

const (
	kindStoryboard = "VideoStoryboard"
	kindRender     = "VideoRender"
)

// objectState is what the demo shows of one object; render and storyboard hold the object itself
// for the outputs at the end.
type objectState struct {
	objectRef
	found      bool
	generation int64
	job        videov1alpha1.JobStatus
	render     *videov1alpha1.VideoRender
	storyboard *videov1alpha1.VideoStoryboard
}

func (s objectState) condition(t videov1alpha1.ConditionType) *metav1.Condition {
	return meta.FindStatusCondition(s.job.Conditions, string(t))
}

// current is true when the status describes the current spec.
func (s objectState) current() bool {
	return s.found && s.job.ObservedGeneration == s.generation
}

// completed is true when the job of the current spec completed: Ready, as kubectl wait sees it.
func (s objectState) completed() bool {
	c := s.condition(videov1alpha1.ConditionReady)
	return s.current() && c != nil && c.Status == metav1.ConditionTrue
}

// stalled is true when only a human can move the object on.
func (s objectState) stalled() bool {
	c := s.condition(videov1alpha1.ConditionStalled)
	return s.current() && c != nil && c.Status == metav1.ConditionTrue
}

// final is true when the object will not change any more without a human.
func (s objectState) final() bool { return s.completed() || s.stalled() }

func allFinal(states []objectState) bool {
	for _, s := range states {
		if !s.final() {
			return false
		}
	}
	return len(states) > 0
}

// snapshot reads the demo objects from the API server, in the order they were applied.
func (d *demo) snapshot(ctx context.Context, refs []objectRef) ([]objectState, error) {
	var out []objectState
	for _, ref := range refs {
		s := objectState{objectRef: ref}
		key := client.ObjectKey{Namespace: d.cfg.namespace, Name: ref.Name}
		var err error
		switch ref.Kind {
		case kindStoryboard:
			var o videov1alpha1.VideoStoryboard
			if err = d.client.Get(ctx, key, &o); err == nil {
				s.found, s.generation, s.job, s.storyboard = true, o.Generation, o.Status.JobStatus, &o
			}
		case kindRender:
			var o videov1alpha1.VideoRender
			if err = d.client.Get(ctx, key, &o); err == nil {
				s.found, s.generation, s.job, s.render = true, o.Generation, o.Status.JobStatus, &o
			}
		default:
			return nil, fmt.Errorf("unknown kind %q", ref.Kind)
		}
		if client.IgnoreNotFound(err) != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// table renders the states the way `kubectl get videos -o wide` would, plus the condition
// message, which tells a newcomer what each object waits for.
func table(states []objectState) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	_, _ = fmt.Fprintln(w, "NAME\tKIND\tPHASE\tPROGRESS\tREASON\tMESSAGE")
	for _, s := range states {
		phase, progress, reason, message := "-", "-", "-", ""
		if !s.found {
			phase = "(deleted)"
		}
		if s.job.Phase != "" {
			phase = string(s.job.Phase)
		}
		if s.job.Progress != nil {
			progress = fmt.Sprintf("%d%%", *s.job.Progress)
		}
		if c := s.condition(videov1alpha1.ConditionReady); c != nil {
			reason, message = c.Reason, c.Message
		}
		if s.job.ProgressMessage != "" && !s.final() {
			message = s.job.ProgressMessage
		}
		_, _ = fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Kind, phase, progress, reason, truncate(message, 60))
	}
	_ = w.Flush()
	return b.String()
}

func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// terminalWidth returns the width of w when it is a terminal that understands cursor movement,
// so that the table can be redrawn in place, and 0 otherwise: logs (CI) get a new table only
// when something changed.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil || width < 20 {
		return 80
	}
	return width
}

// clip cuts every line of s to width-1 columns: a line that wrapped would throw off the count of
// lines to move back over when the table is redrawn.
func clip(s string, width int) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		body := strings.TrimSuffix(l, "\n")
		if r := []rune(body); len(r) > width-1 {
			lines[i] = string(r[:width-1]) + strings.TrimPrefix(l, body)
		}
	}
	return strings.Join(lines, "")
}

// follow shows the objects' progress every second until all of them reached a final phase or ctx
// ends, and returns their last states.
func (d *demo) follow(ctx context.Context, refs []objectRef) ([]objectState, error) {
	d.say("Watching the objects move through their phases (Pending, Submitting, InProgress, then")
	d.say("Completed or Failed). The render of the preview waits until the preview completed and")
	d.say("was approved; the demo approves it as soon as it completed, as a reviewer would.")
	d.say("")
	width := terminalWidth(d.out)
	tty := width > 0
	start := time.Now()
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	var last string
	lastLines := 0
	for {
		states, err := d.snapshot(ctx, refs)
		if err != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("reading the demo objects: %w", err)
		}
		if err == nil {
			t := table(states)
			elapsed := time.Since(start).Round(time.Second)
			switch {
			case tty:
				// Move the cursor back over the previous table and clear it: a refreshing table.
				if lastLines > 0 {
					_, _ = fmt.Fprintf(d.out, "\x1b[%dA\x1b[J", lastLines)
				}
				_, _ = fmt.Fprintf(d.out, "%s(%s so far)\n", clip(t, width), elapsed)
				lastLines = strings.Count(t, "\n") + 1
			case t != last:
				_, _ = fmt.Fprintf(d.out, "after %s:\n%s\n", elapsed, t)
			}
			last = t
			if msg := d.approvePreviews(ctx, states); msg != "" {
				d.say("%s", msg)
				lastLines = 0
			}
			if allFinal(states) {
				if tty {
					d.say("")
				}
				return states, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ticker.C:
		}
	}
}

// approvePreviews does what the person reviewing the demo's preview would do with `kubectl video
// approve`: once a storyboard's preview completed, it pins that preview's digest in the renders of
// it that wait for an approval (the render was applied with its storyboard, before the preview
// existed, so the default approval policy waits). It returns what it did, or "".
func (d *demo) approvePreviews(ctx context.Context, states []objectState) string {
	var done []string
	for _, sb := range states {
		if sb.storyboard == nil || sb.storyboard.Status.Preview == nil || sb.storyboard.Status.Preview.Digest == "" {
			continue
		}
		digest := sb.storyboard.Status.Preview.Digest
		for _, r := range states {
			ref := (*videov1alpha1.StoryboardReference)(nil)
			if r.render != nil {
				ref = r.render.Spec.StoryboardRef
			}
			if ref == nil || ref.Name != sb.Name || ref.ApprovedDigest != "" {
				continue
			}
			base := r.render.DeepCopy()
			r.render.Spec.StoryboardRef.ApprovedDigest = digest
			if err := d.client.Patch(ctx, r.render, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
				continue // read again at the next tick
			}
			done = append(done, fmt.Sprintf("Approved preview %s of VideoStoryboard %s for VideoRender %s, as a reviewer would with:\n"+
				"  kubectl video approve vr/%s -n %s --digest %s\nThe render starts now, and pays for that preview only.",
				digest, sb.Name, r.render.Name, r.render.Name, d.cfg.namespace, digest))
		}
	}
	return strings.Join(done, "\n")
}

// printOutputs prints what each finished object produced: the preview's scenes, the videos'
// URLs and clearance codes.
func (d *demo) printOutputs(states []objectState) {
	d.say("What the service produced:")
	for _, s := range states {
		d.say("")
		switch {
		case s.storyboard != nil:
			d.say("VideoStoryboard %s: %s", s.Name, phaseSentence(s))
			if p := s.storyboard.Status.Preview; p != nil && s.completed() {
				d.say("  a preview of %d scene(s) to review before paying for the render:", len(p.Scenes))
				for i, sc := range p.Scenes {
					d.say("  %d. %q", i+1, truncate(sc.Story, 100))
					if sc.Thumbnail != "" {
						d.say("     thumbnail: %s", sc.Thumbnail)
					}
				}
			}
		case s.render != nil:
			d.say("VideoRender %s: %s", s.Name, phaseSentence(s))
			st := s.render.Status
			if o := st.Outputs; o != nil && s.completed() {
				d.say("  video:      %s", o.VideoURL)
				if o.VideoShareURL != "" {
					d.say("  share link: %s", o.VideoShareURL)
				}
				if o.VTTFile != "" {
					d.say("  captions:   %s", o.VTTFile)
				}
				if st.VideoDuration != nil {
					d.say("  duration:   %s", st.VideoDuration.Duration)
				}
				switch c := st.Clearance; {
				case c != nil && c.Code != "" && c.ExpiresAt != nil:
					d.say("  clearance code for the licensed music: %s (expires %s)", c.Code, c.ExpiresAt.Format(time.RFC3339))
				case c != nil && c.Code != "":
					d.say("  clearance code for the licensed music: %s", c.Code)
				default:
					d.say("  no clearance code: this video uses no music from the service's library")
				}
			}
		}
		if s.job.Failure != nil {
			d.say("  failure: %s: %s", s.job.Failure.Code, s.job.Failure.Message)
		}
	}
	d.say("")
	d.say("The same as kubectl get videos -o wide shows it:")
	d.say("")
	d.printWide(states)
	d.say("")
}

// printWide prints the objects with the columns the CRDs declare for `kubectl get -o wide`.
func (d *demo) printWide(states []objectState) {
	w := tabwriter.NewWriter(d.out, 0, 0, 3, ' ', 0)
	_, _ = fmt.Fprintln(w, "NAME\tPHASE\tPROGRESS\tVIDEO OR PREVIEW\tJOB ID\tREASON")
	for _, s := range states {
		name := strings.ToLower(s.Kind) + ".video.videoops.io/" + s.Name
		progress, output, reason := "", "", ""
		if s.job.Progress != nil {
			progress = fmt.Sprint(*s.job.Progress)
		}
		if s.render != nil && s.render.Status.Outputs != nil {
			output = s.render.Status.Outputs.VideoURL
		}
		if s.storyboard != nil && s.storyboard.Status.Preview != nil && len(s.storyboard.Status.Preview.Scenes) > 0 {
			output = s.storyboard.Status.Preview.Scenes[0].Thumbnail
		}
		if c := s.condition(videov1alpha1.ConditionReady); c != nil {
			reason = c.Reason
		}
		_, _ = fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", name, s.job.Phase, progress, output, s.job.JobID, reason)
	}
	_ = w.Flush()
}

func phaseSentence(s objectState) string {
	switch {
	case s.completed():
		return "completed"
	case s.stalled():
		c := s.condition(videov1alpha1.ConditionStalled)
		return fmt.Sprintf("stopped (%s): %s", c.Reason, c.Message)
	case !s.found:
		return "deleted"
	default:
		return "not finished (" + string(s.job.Phase) + ")"
	}
}

// verdict lists what did not go as the demo expects: every object completed, and the invalid
// one refused by the API server.
func verdict(states []objectState, rejected string) []string {
	var problems []string
	for _, s := range states {
		if !s.completed() {
			problems = append(problems, fmt.Sprintf("%s %s did not complete: %s", s.Kind, s.Name, phaseSentence(s)))
		}
	}
	if rejected == "" {
		problems = append(problems, "the invalid VideoRender in hack/demo/"+invalidFile+" was accepted by the API server")
	}
	return problems
}
