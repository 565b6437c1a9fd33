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
	"strconv"
	"text/tabwriter"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// getBudget reads the VideoBudget, saying that a namespace without one is not limited.
func getBudget(ctx context.Context, c client.Client, ns, name string) (*videov1alpha1.VideoBudget, error) {
	vb := &videov1alpha1.VideoBudget{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, vb); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("VideoBudget %q not found in namespace %q (without one, the namespace's paid work is not limited)", name, ns)
		}
		return nil, fmt.Errorf("reading vb/%s in namespace %q: %w", name, ns, err)
	}
	return vb, nil
}

// BudgetStatus prints a VideoBudget on one screen: its period, what it used and holds against
// each limit, the submissions in flight and its events.
func BudgetStatus(ctx context.Context, env *Env, name string) error {
	vb, err := getBudget(ctx, env.Client, env.Namespace, name)
	if err != nil {
		return err
	}
	st := &vb.Status
	p := &printer{w: env.Out}
	p.line("%s %s/%s  (generation %d, observed %d)", KindBudget, vb.Namespace, vb.Name, vb.Generation, st.ObservedGeneration)
	p.field("Period", budgetPeriod(vb, env.Now()))
	printConditionList(p, st.Conditions)
	p.field("Renders", usage(st.Used.Renders, st.Reserved.Renders, vb.Spec.MaxRenders))
	p.field("Seconds", usage(st.Used.RenderSeconds, 0, vb.Spec.MaxRenderSeconds))
	credits := "0"
	if st.Used.AICredits != nil {
		credits = decimal(st.Used.AICredits)
	}
	limit := "no limit"
	if vb.Spec.MaxAICredits != nil {
		limit = "of " + decimal(vb.Spec.MaxAICredits)
	}
	p.field("AI credits", credits+" used, "+limit)
	p.field("Previews", usage(st.Used.Previews, st.Reserved.Previews, vb.Spec.MaxPreviews))
	if res := st.AllReservations(); len(res) > 0 {
		p.line("Reservations: (submissions in flight, and running jobs until their end is charged)")
		w := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
		for _, r := range res {
			what := "attempt " + r.AttemptID
			if r.JobID != "" {
				what = "job " + r.JobID
			}
			_, _ = fmt.Fprintf(w, "  %s\t%s\tsince %s\n", Target{Kind: Kind(r.Kind), Name: r.Name}, what, age(env.Now(), r.ReservedAt.Time))
		}
		_ = w.Flush()
	}
	return printEvents(ctx, p, env, Target{Kind: KindBudget, Name: vb.Name}, vb)
}

func budgetPeriod(vb *videov1alpha1.VideoBudget, now time.Time) string {
	st := &vb.Status
	if st.PeriodStart == nil || st.PeriodEnd == nil {
		return fmt.Sprintf("%s (no period started yet)", orDash(string(vb.Spec.Period)))
	}
	s := fmt.Sprintf("%s, %s to %s", st.Period, st.PeriodStart.UTC().Format(time.RFC3339), st.PeriodEnd.UTC().Format(time.RFC3339))
	if left := st.PeriodEnd.Sub(now); left > 0 {
		s += fmt.Sprintf(" (resets in %s)", duration.HumanDuration(left))
	}
	if vb.Spec.Period != "" && vb.Spec.Period != st.Period {
		s += fmt.Sprintf("; %s from the next period", vb.Spec.Period)
	}
	return s
}

// decimal shows credits as people write them: 12.5, not the API's canonical 12500m.
func decimal(q *resource.Quantity) string {
	return strconv.FormatFloat(q.AsApproximateFloat64(), 'f', -1, 64)
}

// usage is "3 used, 1 reserved, of 10".
func usage(used, reserved int64, limit *int64) string {
	s := fmt.Sprintf("%d used", used)
	if reserved > 0 {
		s += fmt.Sprintf(", %d reserved", reserved)
	}
	if limit == nil {
		return s + ", no limit"
	}
	return s + fmt.Sprintf(", of %d", *limit)
}

// printConditionList prints conditions as status does for the video kinds.
func printConditionList(p *printer, conds []metav1.Condition) {
	if len(conds) == 0 {
		p.field("Conditions", "none yet (the controller has not acted on it)")
		return
	}
	p.line("Conditions:")
	w := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
	for _, c := range conds {
		_, _ = fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, oneLine(c.Message))
	}
	_ = w.Flush()
}
