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
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

func newStatusCommand(env *Env) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "status [KIND/NAME ... | KIND [NAME ...]] [-o json|yaml]",
		Short: "One screen with phase, conditions, job, submission, progress, outputs and recent events",
		Example: "  kubectl video status vr/meet-video-operator\n" +
			"  kubectl video status vsb meet-video-operator -n videos\n" +
			"  kubectl video status vr/meet vsb/meet vb/default\n" +
			"  kubectl video status vb                      # the namespace's VideoBudget\n" +
			"  kubectl video status vr/meet -o yaml        # the object, as kubectl get -o yaml\n" +
			"  kubectl video status -A                     # every video, one line each",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStatus(cmd.Context(), env, args, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: json or yaml (default: the status screen)")
	return cmd
}

// List prints one line per video of the namespace (or of all namespaces with -A).
func List(ctx context.Context, env *Env) error {
	var opts []client.ListOption
	if !env.AllNamespaces {
		opts = append(opts, client.InNamespace(env.Namespace))
	}
	var vsbs videov1alpha1.VideoStoryboardList
	if err := env.Client.List(ctx, &vsbs, opts...); err != nil {
		return fmt.Errorf("listing VideoStoryboards: %w", err)
	}
	var vrs videov1alpha1.VideoRenderList
	if err := env.Client.List(ctx, &vrs, opts...); err != nil {
		return fmt.Errorf("listing VideoRenders: %w", err)
	}
	w := tabwriter.NewWriter(env.Out, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(w, "NAMESPACE\tNAME\tPHASE\tPROGRESS\tREASON\tAGE")
	row := func(t Target, o client.Object, st *videov1alpha1.JobStatus) {
		_, _ = fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", o.GetNamespace(), t, orDash(string(st.Phase)),
			progressText(st.Progress), orDash(headlineReason(st)), age(env.Now(), o.GetCreationTimestamp().Time))
	}
	for i := range vsbs.Items {
		o := &vsbs.Items[i]
		row(Target{KindStoryboard, o.Name}, o, &o.Status.JobStatus)
	}
	for i := range vrs.Items {
		o := &vrs.Items[i]
		row(Target{KindRender, o.Name}, o, &o.Status.JobStatus)
	}
	if len(vsbs.Items)+len(vrs.Items) == 0 {
		where := fmt.Sprintf("namespace %q", env.Namespace)
		if env.AllNamespaces {
			where = "any namespace"
		}
		_, _ = fmt.Fprintf(env.Out, "No VideoStoryboard or VideoRender in %s.\n", where)
		return nil
	}
	return w.Flush()
}

// Status prints everything a human needs to know about one object on one screen.
func Status(ctx context.Context, env *Env, t Target) error {
	obj, err := get(ctx, env.Client, env.Namespace, t)
	if err != nil {
		return err
	}
	st := obj.jobStatus()
	p := &printer{w: env.Out}
	p.line("%s %s/%s  (generation %d, observed %d)", t.Kind, obj.GetNamespace(), obj.GetName(), obj.GetGeneration(), st.ObservedGeneration)
	p.field("Phase", orDash(string(st.Phase)))
	printConditions(p, st)
	printJob(p, st, obj.GetGeneration())
	printSubmission(p, t, obj.GetNamespace(), st, env.Now())
	if st.Failure != nil {
		p.field("Failure", fmt.Sprintf("%s: %s", st.Failure.Code, st.Failure.Message))
	}
	switch o := obj.(type) {
	case storyboard:
		printStoryboardSummary(ctx, p, env, o.VideoStoryboard)
	case render:
		if err := printRenderDetails(ctx, p, env, o.VideoRender); err != nil {
			return err
		}
	}
	if len(st.OutputsOmitted) > 0 {
		p.field("Omitted", strings.Join(st.OutputsOmitted, ", "))
	}
	return printEvents(ctx, p, env, t, obj)
}

func printConditions(p *printer, st *videov1alpha1.JobStatus) {
	if len(st.Conditions) == 0 {
		p.field("Conditions", "none yet (the controller has not acted on it)")
		return
	}
	p.line("Conditions:")
	w := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	for _, c := range st.Conditions {
		_, _ = fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, oneLine(c.Message))
	}
	_ = w.Flush()
}

func printJob(p *printer, st *videov1alpha1.JobStatus, generation int64) {
	if st.JobID == "" {
		p.field("Job", "none")
	} else {
		note := ""
		if st.JobGeneration != generation {
			note = fmt.Sprintf("; the spec is at generation %d", generation)
		}
		p.field("Job", fmt.Sprintf("%s (generation %d%s)", st.JobID, st.JobGeneration, note))
	}
	if st.Progress != nil || st.ProgressMessage != "" {
		p.field("Progress", strings.TrimSpace(fmt.Sprintf("%s %s %s", progressText(st.Progress), st.ProgressMessage, parens(st.RenderState))))
	}
	if st.SubmittedAt != nil {
		p.field("Submitted", st.SubmittedAt.UTC().Format(time.RFC3339))
	}
	if st.CompletedAt != nil {
		p.field("Ended", st.CompletedAt.UTC().Format(time.RFC3339))
	}
	if st.LastHandledRetry != "" {
		p.field("Last retry", st.LastHandledRetry)
	}
}

// printSubmission shows a submission in flight, or one whose outcome is unknown, with the command
// that resolves it.
func printSubmission(p *printer, t Target, ns string, st *videov1alpha1.JobStatus, now time.Time) {
	sub := st.Submission
	if sub == nil {
		return
	}
	state := "in flight"
	if isStalledWith(st, videov1alpha1.ReasonSubmissionUnknown) {
		state = "OUTCOME UNKNOWN"
	}
	p.field("Submission", fmt.Sprintf("%s: attempt %s, generation %d, started %s ago", state, sub.AttemptID, sub.Generation, age(now, sub.StartedAt.Time)))
	window := windowText(st)
	_, to, ok := attemptWindow(st)
	if ok {
		window += " (when the call may have reached the service)"
	}
	p.field("  window", window)
	if state != "in flight" {
		p.field("  resolve", hint("confirm-resubmit", t, ns)+"   (may pay twice: check the service first)")
	} else if ok && now.After(to) {
		// A running manager records the outcome within the window; one that stopped records it
		// (the job, or SubmissionUnknown) when it runs again.
		p.field("  note", fmt.Sprintf("past its window by %s and no outcome recorded: is the manager running?", duration.HumanDuration(now.Sub(to))))
	}
}

// windowInMessage reads the attempt window the controller wrote into the SubmissionUnknown
// message, for a submission recorded without its deadline.
var windowInMessage = regexp.MustCompile(`sent from (\S+) to (\S+?)\)`)

// attemptWindow is when the attempt's call may have reached the service: from its start to its
// deadline as the controller recorded it (only the manager knows its --service-timeout), or to
// the end the controller wrote into the SubmissionUnknown message. ok is false when neither says
// where the window ends.
func attemptWindow(st *videov1alpha1.JobStatus) (from, to time.Time, ok bool) {
	sub := st.Submission
	from = sub.StartedAt.UTC()
	if sub.Deadline != nil {
		return from, sub.Deadline.UTC(), true
	}
	if c := meta.FindStatusCondition(st.Conditions, string(videov1alpha1.ConditionStalled)); c != nil {
		if m := windowInMessage.FindStringSubmatch(c.Message); m != nil {
			f, err1 := time.Parse(time.RFC3339, m[1])
			t, err2 := time.Parse(time.RFC3339, m[2])
			if err1 == nil && err2 == nil {
				return f, t, true
			}
		}
	}
	return from, time.Time{}, false
}

// windowText is the attempt window for people.
func windowText(st *videov1alpha1.JobStatus) string {
	from, to, ok := attemptWindow(st)
	if !ok {
		return fmt.Sprintf("from %s on (the controller recorded no end: check the service from then)", from.Format(time.RFC3339))
	}
	return fmt.Sprintf("%s to %s", from.Format(time.RFC3339), to.Format(time.RFC3339))
}

func printStoryboardSummary(ctx context.Context, p *printer, env *Env, vsb *videov1alpha1.VideoStoryboard) {
	p.field("Video name", orDash(vsb.Spec.VideoName))
	switch {
	case vsb.Status.Preview == nil:
		p.field("Preview", "not yet")
	case vsb.Status.PreviewedGeneration != vsb.Generation:
		p.field("Preview", fmt.Sprintf("%d scenes, of generation %d (the spec changed since: a new preview is due)", len(vsb.Status.Preview.Scenes), vsb.Status.PreviewedGeneration))
	default:
		p.field("Preview", fmt.Sprintf("%d scenes: %s", len(vsb.Status.Preview.Scenes), hint("preview", Target{KindStoryboard, vsb.Name}, vsb.Namespace)))
	}
	refs, err := rendersOf(ctx, env.Client, vsb)
	switch {
	case err != nil:
		p.field("Rendered by", "unknown: "+err.Error())
	case len(refs) == 0:
		p.field("Rendered by", "no VideoRender yet: "+hint("render", Target{KindStoryboard, vsb.Name}, vsb.Namespace))
	default:
		p.field("Rendered by", strings.Join(renderSummaries(refs), ", "))
	}
}

func printRenderDetails(ctx context.Context, p *printer, env *Env, vr *videov1alpha1.VideoRender) error {
	switch {
	case vr.Spec.StoryboardRef != nil:
		ref := vr.Spec.StoryboardRef.Name
		vsb, err := getStoryboard(ctx, env.Client, vr.Namespace, ref)
		switch {
		case err != nil:
			p.field("Storyboard", fmt.Sprintf("vsb/%s: %v", ref, err))
		default:
			rendered := "none yet"
			if vr.Status.StoryboardGeneration > 0 {
				rendered = fmt.Sprintf("%d", vr.Status.StoryboardGeneration)
			}
			p.field("Storyboard", fmt.Sprintf("vsb/%s (phase %s, generation %d, previewed %d, rendered %s)",
				ref, orDash(string(vsb.Status.Phase)), vsb.Generation, vsb.Status.PreviewedGeneration, rendered))
			printApproval(p, vr, vsb)
		}
	case vr.Spec.ProjectID != nil:
		p.field("Project", *vr.Spec.ProjectID)
	case vr.Spec.Storyboard != nil:
		p.field("Storyboard", fmt.Sprintf("inline (%q, %d scenes)", vr.Spec.Storyboard.VideoName, len(vr.Spec.Storyboard.Scenes)))
	}
	printOutputs(p, vr.Status.Outputs)
	if d := vr.Status.VideoDuration; d != nil {
		p.field("Duration", d.Duration.String())
	}
	if vr.Status.AICreditsUsed != "" {
		p.field("AI credits", vr.Status.AICreditsUsed)
	}
	if c := vr.Status.Clearance; c != nil && c.Code != "" {
		exp := "no expiry given"
		if c.ExpiresAt != nil {
			left := c.ExpiresAt.Sub(env.Now())
			if left > 0 {
				exp = fmt.Sprintf("expires %s, in %s", c.ExpiresAt.UTC().Format(time.RFC3339), duration.HumanDuration(left))
			} else {
				exp = fmt.Sprintf("EXPIRED %s (the controller reads a fresh one)", c.ExpiresAt.UTC().Format(time.RFC3339))
			}
		}
		p.field("Clearance", fmt.Sprintf("%s (%s)", c.Code, exp))
	}
	if prev := vr.Status.Previous; prev != nil && prev.Outputs != nil {
		p.field("Previous", fmt.Sprintf("job %s (generation %d): %s", prev.JobID, prev.JobGeneration, orDash(prev.Outputs.VideoURL)))
	}
	return nil
}

func printOutputs(p *printer, o *videov1alpha1.RenderOutputs) {
	outs := outputList(o)
	if len(outs) == 0 {
		return
	}
	p.line("Outputs:")
	w := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	for _, out := range outs {
		_, _ = fmt.Fprintf(w, "  %s\t%s\n", out.Name, out.URL)
	}
	_ = w.Flush()
}

// maxEvents is how many of the most recent events status shows.
const maxEvents = 10

// printEvents shows the recent events about the object, newest last, as kubectl describe does.
func printEvents(ctx context.Context, p *printer, env *Env, t Target, obj client.Object) error {
	var list eventsv1.EventList
	switch err := env.Client.List(ctx, &list, client.InNamespace(obj.GetNamespace())); {
	case apierrors.IsForbidden(err):
		// As kubectl describe: the rest of the screen is still worth having.
		p.field("Events", fmt.Sprintf("not shown: you may not list events in namespace %q", obj.GetNamespace()))
		return nil
	case err != nil:
		return fmt.Errorf("listing the events of %s: %w", t, err)
	}
	var evs []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == string(t.Kind) && e.Regarding.Name == obj.GetName() && (e.Regarding.UID == "" || e.Regarding.UID == obj.GetUID()) {
			evs = append(evs, e)
		}
	}
	if len(evs) == 0 {
		p.field("Events", "none")
		return nil
	}
	sort.SliceStable(evs, func(i, j int) bool { return eventTime(evs[i]).Before(eventTime(evs[j])) })
	if len(evs) > maxEvents {
		evs = evs[len(evs)-maxEvents:]
	}
	p.line("Events:")
	w := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	for _, e := range evs {
		_, _ = fmt.Fprintf(w, "  %s ago\t%s\t%s\t%s\n", age(env.Now(), eventTime(e)), e.Type, e.Reason, oneLine(e.Note))
	}
	return w.Flush()
}

// eventTime is when an event last happened.
func eventTime(e eventsv1.Event) time.Time {
	switch {
	case e.Series != nil:
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case !e.DeprecatedLastTimestamp.IsZero():
		return e.DeprecatedLastTimestamp.Time
	}
	return e.CreationTimestamp.Time
}

// printer writes "Label: value" lines aligned on one column.
type printer struct{ w io.Writer }

func (p *printer) line(format string, args ...any) { _, _ = fmt.Fprintf(p.w, format+"\n", args...) }
func (p *printer) field(label, value string)       { _, _ = fmt.Fprintf(p.w, "%-13s %s\n", label+":", value) }

func isStalledWith(st *videov1alpha1.JobStatus, reason videov1alpha1.ConditionReason) bool {
	c := meta.FindStatusCondition(st.Conditions, string(videov1alpha1.ConditionStalled))
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == string(reason)
}

// headlineReason is the reason of the condition that is True (exactly one is).
func headlineReason(st *videov1alpha1.JobStatus) string {
	for _, c := range st.Conditions {
		if c.Status == metav1.ConditionTrue {
			return c.Reason
		}
	}
	return ""
}

func progressText(p *int32) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%d%%", *p)
}

func age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return duration.HumanDuration(now.Sub(t))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func parens(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}

// oneLine keeps a message on its table row.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
