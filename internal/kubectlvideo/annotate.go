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
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

func newRetryCommand(env *Env) *cobra.Command {
	var o RetryOptions
	cmd := &cobra.Command{
		Use:   "retry KIND/NAME [--force]",
		Short: "Ask for a new job for the current spec after a failed or refused one (" + videov1alpha1.AnnotationRetry + ")",
		Long: "Ask for a new job for the current spec after a failed or refused one (" + videov1alpha1.AnnotationRetry + ").\n" +
			"A failure the spec itself causes (an unknown voice, a request the service refused) would fail again\n" +
			"the same way, and a new job is paid for: retry refuses it unless --force. Change the spec instead;\n" +
			"a changed spec is submitted without a retry.",
		Example: "  kubectl video retry vr/meet-video-operator\n" +
			"  kubectl video retry vsb/meet-video-operator -n videos\n" +
			"  kubectl video retry vr/meet-video-operator --force   # the voice was added to the library since",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := parseJobTarget(args, "retry")
			if err != nil {
				return err
			}
			return Retry(cmd.Context(), env, t, o)
		},
	}
	cmd.Flags().BoolVar(&o.Force, "force", false, "retry even a failure the same spec would cause again (it may pay again for it)")
	return cmd
}

// RetryOptions are the flags of retry.
type RetryOptions struct {
	// Force retries a failure that the spec causes, which would otherwise be refused.
	Force bool
}

// Retry sets the retry annotation to a new value, on an object that failed: on one that is
// running or completed it would ask for a second, paid job, and on one whose spec caused the
// failure a job that fails again.
func Retry(ctx context.Context, env *Env, t Target, o RetryOptions) error {
	obj, err := get(ctx, env.Client, env.Namespace, t)
	if err != nil {
		return err
	}
	st := obj.jobStatus()
	stalled := meta.FindStatusCondition(st.Conditions, string(videov1alpha1.ConditionStalled))
	switch {
	case isStalledWith(st, videov1alpha1.ReasonSubmissionUnknown):
		return fmt.Errorf("%s has a submission whose outcome is unknown (attempt %s): a retry does not resolve it; use %s",
			t, submissionAttempt(st), hint("confirm-resubmit", t, obj.GetNamespace()))
	case st.Phase != videov1alpha1.PhaseFailed && (stalled == nil || stalled.Status != metav1.ConditionTrue):
		return fmt.Errorf("%s has not failed (phase %s, reason %s): nothing to retry", t, orDash(string(st.Phase)), orDash(headlineReason(st)))
	case stalled != nil && stalled.Status == metav1.ConditionTrue && resumesByItself[videov1alpha1.ConditionReason(stalled.Reason)]:
		return fmt.Errorf("%s is stalled on %s, which a retry does not fix: %s; the controller resumes by itself once it is fixed",
			t, stalled.Reason, oneLine(stalled.Message))
	}
	if why, again := failsAgain(st); again && !o.Force {
		return fmt.Errorf("%s: %s. Change the spec (a changed spec is submitted without a retry), "+
			"or, if what was missing has been fixed outside the spec since, retry with --force", t, why)
	}
	// A timestamp differs from every value handled before, and says when it was asked for.
	value := env.Now().UTC().Format(time.RFC3339Nano)
	if err := annotate(ctx, env, obj, videov1alpha1.AnnotationRetry, value); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(env.Out, "Asked for a retry of %s (generation %d): %s=%s\nThe controller submits a new, paid job. Follow it with: %s\n",
		t, obj.GetGeneration(), videov1alpha1.AnnotationRetry, value, hint("status", t, obj.GetNamespace()))
	return nil
}

// resumesByItself are the stalls the controller leaves when what it waits for is fixed (it
// watches Secrets and storyboards): no job was sent, and a retry would only say one will be.
var resumesByItself = map[videov1alpha1.ConditionReason]bool{
	videov1alpha1.ReasonSecretNotFound:     true,
	videov1alpha1.ReasonSecretKeyMissing:   true,
	videov1alpha1.ReasonStoryboardNotFound: true,
	// A budget wait ends at the period reset or when the budget is raised (issue 24).
	videov1alpha1.ReasonBudgetExhausted: true,
}

// ConfirmOptions are the flags of confirm-resubmit.
type ConfirmOptions struct {
	// Yes skips the confirmation, for scripts.
	Yes bool
}

func newConfirmResubmitCommand(env *Env) *cobra.Command {
	var o ConfirmOptions
	cmd := &cobra.Command{
		Use:   "confirm-resubmit KIND/NAME [--yes]",
		Short: "Confirm that a submission whose outcome is unknown may be sent again (it may pay twice)",
		Example: "  kubectl video confirm-resubmit vr/meet-video-operator\n" +
			"  kubectl video confirm-resubmit vr/meet-video-operator --yes",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := parseJobTarget(args, "confirm-resubmit")
			if err != nil {
				return err
			}
			return ConfirmResubmit(cmd.Context(), env, t, o)
		},
	}
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "confirm without asking")
	return cmd
}

// ConfirmResubmit sets the confirm-resubmit annotation to the attempt id of the submission whose
// outcome is unknown, after showing its time window: a job created by that attempt is paid
// again.
func ConfirmResubmit(ctx context.Context, env *Env, t Target, o ConfirmOptions) error {
	obj, err := get(ctx, env.Client, env.Namespace, t)
	if err != nil {
		return err
	}
	st := obj.jobStatus()
	if !isStalledWith(st, videov1alpha1.ReasonSubmissionUnknown) || st.Submission == nil {
		return fmt.Errorf("%s is not in SubmissionUnknown (phase %s, reason %s): there is no submission to confirm",
			t, orDash(string(st.Phase)), orDash(headlineReason(st)))
	}
	sub := st.Submission
	p := &printer{w: env.Out}
	p.line("The submission of %s below was interrupted; the service may or may not have created its job:", t)
	p.field("  Attempt", sub.AttemptID)
	p.field("  Generation", fmt.Sprintf("%d", sub.Generation))
	p.field("  Window", windowText(st))
	p.line("WARNING: if that attempt did create a job, submitting again pays twice. Check the service for a job")
	p.line("created in that window first.")
	if !o.Yes {
		ok, err := confirm(ctx, env, "Submit it again?")
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("not confirmed: nothing was changed")
		}
	}
	if err := annotate(ctx, env, obj, videov1alpha1.AnnotationConfirmResubmit, sub.AttemptID); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(env.Out, "Confirmed: %s=%s on %s. The controller submits again. Follow it with: %s\n",
		videov1alpha1.AnnotationConfirmResubmit, sub.AttemptID, t, hint("status", t, obj.GetNamespace()))
	return nil
}

func submissionAttempt(st *videov1alpha1.JobStatus) string {
	if st.Submission == nil {
		return "-"
	}
	return st.Submission.AttemptID
}

// annotate sets one annotation with a merge patch that is conditional on the resourceVersion the
// decision was taken from: the object must still be in the state that was shown.
func annotate(ctx context.Context, env *Env, obj object, key, value string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": obj.GetResourceVersion(),
		"annotations":     map[string]string{key: value},
	}})
	if err != nil {
		return fmt.Errorf("building the patch: %w", err)
	}
	if err := env.Client.Patch(ctx, obj.raw(), client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("setting annotation %s on %s/%s: %w (if it changed meanwhile, look again and retry)", key, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}
