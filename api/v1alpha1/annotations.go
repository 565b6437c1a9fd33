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

package v1alpha1

// Annotations a user sets on a VideoStoryboard or a VideoRender to unblock it when only a human
// can. They are part of the API: the controller acts on them, and clients (kubectl video, GitOps
// repositories) set them.
const (
	// AnnotationRetry asks for a new job for the current spec after a failed or refused one. Any
	// new value triggers one retry (for example a timestamp): the value handled last is kept in
	// status.lastHandledRetry, so a GitOps tool re-applying the same value never pays twice.
	AnnotationRetry = "video.videoops.io/retry"

	// AnnotationConfirmResubmit confirms that a submission whose outcome is unknown (condition
	// Stalled, reason SubmissionUnknown) may be sent again. Its value must be the attempt id
	// quoted in the condition message, so a stale annotation can never confirm a later attempt.
	AnnotationConfirmResubmit = "video.videoops.io/confirm-resubmit"
)

// The record of an object's job, kept in its metadata as well as in its status
// (docs/architecture.md "The record travels with the object"): Velero restores without status by
// default, and `kubectl get -o yaml | kubectl apply` drops it, but annotations travel. The
// controller writes them, with an optimistic lock, once the job id is in status. An object that
// arrives with them and without status adopts the job instead of paying for it again; a user may
// write them (in Git) to adopt an existing job. The in-flight marker (status.submission) is
// deliberately not among them (see docs/backup-restore.md), except once the attempt's outcome is
// unknown: that stall lasts until a human confirms, so a backup may well hold it
// (AnnotationSubmissionUnknown).
const (
	// AnnotationJobID is the service's id of the object's current job (status.jobId).
	AnnotationJobID = "video.videoops.io/job-id"
	// AnnotationRequestDigest is the digest of that job's request (status.requestDigest). When
	// absent on adoption, the job is taken as the current spec's and the current digest recorded.
	AnnotationRequestDigest = "video.videoops.io/request-digest"
	// AnnotationRequestDigestVersion is the version of that digest's encoding
	// (status.digestVersion); absent means 1, the encoding before digests carried a version.
	AnnotationRequestDigestVersion = "video.videoops.io/request-digest-version"
	// AnnotationKeyFingerprint identifies the API key that submitted the job
	// (status.keyFingerprint); never the key itself.
	AnnotationKeyFingerprint = "video.videoops.io/key-fingerprint"
	// AnnotationSubmissionUnknown records a submission whose outcome is unknown (Stalled,
	// SubmissionUnknown): "<attemptId> <startedAt, RFC 3339>". An object restored without status
	// that carries it stalls again instead of paying: only confirm-resubmit set to that attempt id
	// submits again. It is removed once the object has a job.
	AnnotationSubmissionUnknown = "video.videoops.io/submission-unknown"
)

// Who approved, and who wrote what was approved (docs/approval.md): written by the admission
// policies of config/approval on the write that approves or changes a storyboard's spec, never by
// hand (the validating policies refuse a forged one). A render approved before they existed
// carries none and keeps rendering; its status says its approver is not recorded.
const (
	// AnnotationApprovedBy is the user who set or changed what the render pays for (its
	// approval, spec.storyboardRef.approvedDigest or approval Latest, and what it covers; an
	// inline storyboard; a projectId), as the API server authenticated them (stamped by the
	// MutatingAdmissionPolicy videorender-approval-stamp).
	AnnotationApprovedBy = "video.videoops.io/approved-by"
	// AnnotationApprovedDigest is the approval that stamp is for: the pinned digest, "Latest",
	// "Inline" or "Project".
	// A stamp whose digest is not the render's current approval says nothing about it.
	AnnotationApprovedDigest = "video.videoops.io/approved-digest"
	// AnnotationApprovedStoryboardAuthor is, on a render, the user who last changed its
	// storyboard's content when the approval was written (the storyboard's
	// AnnotationSpecChangedBy, copied by kubectl video approve). Only in a four-eyes namespace
	// (elsewhere the admission policy drops it): it must differ from the approver, and the
	// controller pays only while it names the storyboard's author.
	AnnotationApprovedStoryboardAuthor = "video.videoops.io/approved-storyboard-author"
	// AnnotationSpecChangedBy is, on a VideoStoryboard, the user who last changed its content,
	// the spec but apiKeySecretRef (stamped by the MutatingAdmissionPolicy videostoryboard-author-stamp).
	AnnotationSpecChangedBy = "video.videoops.io/spec-changed-by"
	// LabelFourEyes, "true" on a Namespace, asks that the approver of a render be another user than
	// the one who last changed its storyboard's spec.
	LabelFourEyes = "video.videoops.io/four-eyes"
	// ApprovedStoryboardAuthorRestored is AnnotationApprovedStoryboardAuthor of a render restored
	// (created with its job record) in a four-eyes namespace: no author, so its approval pays
	// nothing new until an approver approves it again.
	ApprovedStoryboardAuthorRestored = "(restored: approve again)"
	// ApprovedLatest is AnnotationApprovedDigest of an approval Latest.
	ApprovedLatest = "Latest"
	// ApprovedInline is AnnotationApprovedDigest of a render of an inline storyboard: writing it
	// is approving it.
	ApprovedInline = "Inline"
	// ApprovedProject is AnnotationApprovedDigest of a render of a saved project (projectId).
	ApprovedProject = "Project"
)

// StampedApprover is the user who wrote the render's current approval, as the admission policy
// videorender-approval-stamp recorded it (docs/approval.md): the stamp counts only when it is for
// this very approval (the pinned digest, Latest, or, for a render that pays without a review, its
// inline storyboard or project). "" when the approval carries no stamp of its own: written before
// the policies were installed, or on a cluster without them.
func (o *VideoRender) StampedApprover() string {
	var approval string
	switch spec := o.Spec; {
	case spec.StoryboardRef != nil && spec.StoryboardRef.ApprovedDigest != "":
		approval = spec.StoryboardRef.ApprovedDigest
	case spec.StoryboardRef != nil && spec.StoryboardRef.Approval == ApprovalLatest:
		approval = ApprovedLatest
	case spec.Storyboard != nil:
		approval = ApprovedInline
	case spec.ProjectID != nil:
		approval = ApprovedProject
	}
	ann := o.GetAnnotations()
	if approval == "" || ann[AnnotationApprovedDigest] != approval {
		return ""
	}
	return ann[AnnotationApprovedBy]
}
