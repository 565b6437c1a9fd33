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

package controller

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/spendguard"
)

// budgetJobs reads, for the VideoBudget controller, the job of a render that is gone (deleted
// before its charge finalizer, or with it stripped): its reservation holds until the job's end is
// read, with the key the render named (docs/architecture.md "The record travels with the object"). The read goes
// through the render reconciler's key store, call budget and circuit of that key, as the
// render's own poll would.
type budgetJobs struct {
	render *lifecycle[*videov1alpha1.VideoRender]
}

var _ spendguard.JobEnds = budgetJobs{}

// JobEnd reads job jobID with the key in ref (nil: the default Secret) of namespace ns.
func (j budgetJobs) JobEnd(ctx context.Context, ns string, ref *videov1alpha1.SecretKeyRef, jobID string) (spendguard.JobEnd, error) {
	// The render is gone: a stand-in carries what a call needs, its namespace and key.
	gone := &videov1alpha1.VideoRender{ObjectMeta: metav1.ObjectMeta{Namespace: ns}, Spec: videov1alpha1.VideoRenderSpec{APIKeySecretRef: ref}}
	api, _, err := j.render.apiClient(ctx, gone)
	if err != nil {
		return spendguard.JobEnd{}, fmt.Errorf("reading the API key of job %s: %w", jobID, err)
	}
	callCtx, cancel := j.render.callContext(ctx)
	defer cancel()
	job, err := api.GetJob(callCtx, jobID)
	switch {
	case apiclient.IsJobNotFound(err):
		return spendguard.JobEnd{Unknown: true}, nil
	case err != nil:
		return spendguard.JobEnd{}, fmt.Errorf("reading job %s: %w", jobID, err)
	case !job.Status().IsCompleted() && !job.Status().IsFailed():
		return spendguard.JobEnd{Running: true}, nil
	}
	secs, credits := jobCost(job)
	return spendguard.JobEnd{Completed: job.Status().IsCompleted(), Seconds: secs, Credits: credits}, nil
}
