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

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SecretKeyRef names one key of a Secret in the object's own namespace. There is deliberately no
// namespace field: a resource can only use the credentials of its own tenant.
type SecretKeyRef struct {
	// name of the Secret, in the same namespace as the object that refers to it.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// key in the Secret's data whose value is the raw API key (no "Bearer" prefix).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key,omitempty"`
}

// Phase is a one-word summary of where the job stands, for humans and print columns. Tools must
// read the conditions instead: the phase may gain values.
// +kubebuilder:validation:Enum=Pending;Submitting;InProgress;Completed;Failed
type Phase string

const (
	// PhasePending means nothing has been submitted for the current generation yet (for example, waiting
	// for a Secret, for a storyboard's preview, or for an older job to end).
	PhasePending Phase = "Pending"
	// PhaseSubmitting means a submission is in flight and its job id is not known yet.
	PhaseSubmitting Phase = "Submitting"
	// PhaseInProgress means the service accepted the job and is working on it.
	PhaseInProgress Phase = "InProgress"
	// PhaseCompleted means the job of the current generation completed; its outputs are in status.
	PhaseCompleted Phase = "Completed"
	// PhaseFailed means the job failed or cannot be submitted without a change by a human.
	PhaseFailed Phase = "Failed"
)

// ConditionType names a condition in status.conditions. The three types follow kstatus, so Flux,
// Argo CD and `kubectl wait` understand the resource without custom code.
type ConditionType string

const (
	// ConditionReady is True only when the job for the current spec generation completed.
	ConditionReady ConditionType = "Ready"
	// ConditionReconciling is True while work is under way (submitting, rendering, waiting).
	ConditionReconciling ConditionType = "Reconciling"
	// ConditionStalled is True when only a human can unblock the resource.
	ConditionStalled ConditionType = "Stalled"
)

// ConditionReason is the CamelCase reason of a condition, also used as the reason of events.
type ConditionReason string

// Reasons of the conditions and events. Ready, Reconciling and Stalled carry one of them; the
// controller picks the most specific.
const (
	// ReasonPending: nothing submitted yet for the current generation.
	ReasonPending ConditionReason = "Pending"
	// ReasonSubmitting: a submit call is in flight (see status.submission).
	ReasonSubmitting ConditionReason = "Submitting"
	// ReasonInProgress: the service is working on the job.
	ReasonInProgress ConditionReason = "InProgress"
	// ReasonCompleted: the job of the current generation completed.
	ReasonCompleted ConditionReason = "Completed"
	// ReasonJobFailed: the service reported the job failed (status.failure has its code).
	ReasonJobFailed ConditionReason = "JobFailed"
	// ReasonJobNotFound: the service no longer knows the job (JOB_NOT_FOUND).
	ReasonJobNotFound ConditionReason = "JobNotFound"
	// ReasonJobDeadlineExceeded: the job had not ended within the manager's --job-deadline; the
	// controller stopped waiting for it (status.failure.code JOB_DEADLINE_EXCEEDED).
	ReasonJobDeadlineExceeded ConditionReason = "JobDeadlineExceeded"
	// ReasonSecretNotFound: the apiKeySecretRef Secret does not exist in the namespace.
	ReasonSecretNotFound ConditionReason = "SecretNotFound"
	// ReasonSecretKeyMissing: the Secret exists but has no (non-empty) apiKeySecretRef key.
	ReasonSecretKeyMissing ConditionReason = "SecretKeyMissing"
	// ReasonUnauthorized: the service rejected the API key (401).
	ReasonUnauthorized ConditionReason = "Unauthorized"
	// ReasonSubmissionUnknown: a submission was interrupted and its job cannot be identified;
	// a human must confirm before the controller submits again.
	ReasonSubmissionUnknown ConditionReason = "SubmissionUnknown"
	// ReasonAdoptedJobNotFound: the job named by annotation video.videoops.io/job-id (a restored
	// object, or one a user points at an existing job) is not known to the service for the
	// object's key. Nothing is submitted until a human confirms with confirm-resubmit.
	ReasonAdoptedJobNotFound ConditionReason = "AdoptedJobNotFound"
	// ReasonAPIKeyChanged: the job was submitted with another API key than the one the object
	// names now, and the service does not show it to the new key (another account). The job
	// and its outputs are kept; putting the submitting key back resumes it.
	ReasonAPIKeyChanged ConditionReason = "APIKeyChanged"
	// ReasonEarlierSubmissionRendering: a project render confirmed after SubmissionUnknown was
	// answered 409 (project already being rendered): the earlier attempt did create a job.
	// Nothing more is sent.
	ReasonEarlierSubmissionRendering ConditionReason = "EarlierSubmissionRendering"
	// ReasonWaitingForPreview: a VideoRender waits for its storyboard's preview of the current
	// generation to complete.
	ReasonWaitingForPreview ConditionReason = "WaitingForPreview"
	// ReasonAwaitingApproval: a VideoRender waits for a person to approve the storyboard's
	// current preview (its digest is not the approved one); nothing is paid meanwhile.
	ReasonAwaitingApproval ConditionReason = "AwaitingApproval"
	// ReasonNarrationIncomplete: the approved brief-mode preview's narration is not whole in the
	// storyboard's status, so it cannot be narrated word for word; nothing is paid.
	ReasonNarrationIncomplete ConditionReason = "NarrationIncomplete"
	// ReasonBriefSettingsNotCarried: the approved brief-mode preview's brief scene sets more
	// than its brief (a scene-level voice-over, subtitles, background, elements), which the
	// narration pinned as one story scene per previewed scene would not carry; nothing is paid.
	ReasonBriefSettingsNotCarried ConditionReason = "BriefSettingsNotCarried"
	// ReasonWaitingForJob: a newer generation waits for the running job to end (the service has
	// no cancel).
	ReasonWaitingForJob ConditionReason = "WaitingForJob"
	// ReasonStoryboardNotFound: the VideoStoryboard named by storyboardRef does not exist.
	ReasonStoryboardNotFound ConditionReason = "StoryboardNotFound"
	// ReasonProjectNotFound: the service does not know projectId (404).
	ReasonProjectNotFound ConditionReason = "ProjectNotFound"
	// ReasonProjectBusy: the project is already being rendered (409).
	ReasonProjectBusy ConditionReason = "ProjectBusy"
	// ReasonBrandNotFound: brandName names no brand of the account.
	ReasonBrandNotFound ConditionReason = "BrandNotFound"
	// ReasonInvalidRequest: the service rejected the request body (400).
	ReasonInvalidRequest ConditionReason = "InvalidRequest"
	// ReasonRateLimited: the service answered 429; the controller backs off.
	ReasonRateLimited ConditionReason = "RateLimited"
	// ReasonCallBudget: the API key's call budget (the manager's --service-rate-limit) has no
	// slot for the submission yet; it goes, once, when its slot comes.
	ReasonCallBudget ConditionReason = "CallBudget"
	// ReasonServiceUnavailable: the service failed or could not be reached (5xx, timeouts).
	ReasonServiceUnavailable ConditionReason = "ServiceUnavailable"
	// ReasonUnexpectedResponse: the service answered with a status the interface document does
	// not give for that endpoint (for example a 404 from a wrong base URL); the controller backs
	// off and tries again.
	ReasonUnexpectedResponse ConditionReason = "UnexpectedResponse"
	// ReasonReconcileError: the reconcile failed (for example the API server could not be
	// read) and is retried; status.observedGeneration stays at the last decided generation.
	ReasonReconcileError ConditionReason = "ReconcileError"
)

// Default API key Secret, used when apiKeySecretRef is omitted. The CRD schema carries the same
// values as a default, so they appear in the stored object.
const (
	DefaultAPIKeySecretName = "video-api-key"
	DefaultAPIKeySecretKey  = "apiKey"
)

// JobStatus is the part of the status that both kinds share: one job of the service, its progress
// and the conditions. It is embedded inline in VideoStoryboardStatus and VideoRenderStatus.
type JobStatus struct {
	// conditions are Ready, Reconciling and Stalled, following kstatus.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the metadata.generation the controller last acted on.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// phase summarises the job for humans: Pending, Submitting, InProgress, Completed or Failed.
	// Automation should read conditions instead.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// jobId is the service's id of the job that belongs to jobGeneration.
	// +optional
	// +kubebuilder:validation:MaxLength=100
	JobID string `json:"jobId,omitempty"`

	// jobGeneration is the spec generation the job in jobId was submitted for. When it differs
	// from metadata.generation, the outputs in status describe an older spec.
	// +optional
	// +kubebuilder:validation:Minimum=0
	JobGeneration int64 `json:"jobGeneration,omitempty"`

	// callbackKeyId identifies, by a fingerprint (never the key), the key that signed the
	// operator's callback URL in the request of the job in jobId; empty when the request carried
	// none. While the operator signs with the same key, the job's callback is recognised: the
	// controller reads the job when it calls back and polls it only as a fallback. It is kept here,
	// not in memory, so that a restarted manager does not poll every such job at the normal pace,
	// nor wait for a callback it would refuse (a key that changed).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	CallbackKeyID string `json:"callbackKeyId,omitempty"`

	// requestDigest is the digest (sha256 of canonical JSON) of what the job in jobId was asked
	// to do: the request body sent (credentials and the operator's own callback excluded), the
	// project id of a project render, or the approved preview's digest and the narration choice of
	// a storyboardRef render. "Already submitted" compares it with the current spec's: an edit
	// that leaves the request unchanged pays nothing. It is also kept in annotation
	// video.videoops.io/request-digest, so that it survives a restore without status.
	// +optional
	// +kubebuilder:validation:MaxLength=71
	RequestDigest string `json:"requestDigest,omitempty"`

	// requestUnverified is true when the job in jobId was adopted from annotation
	// video.videoops.io/job-id written without video.videoops.io/request-digest (by hand): the
	// job is taken as this spec's, so nothing is paid for it again, but what it was asked to do is
	// not known. A VideoStoryboard's preview of such a job is shown and cannot be approved.
	// +optional
	RequestUnverified *bool `json:"requestUnverified,omitempty"`
	// digestVersion is the version of requestDigest's encoding (docs/backup-restore.md, "Digest
	// versions"). Absent means 1: the encoding of every digest written before versions existed,
	// which the operator still recognises. Also kept in annotation
	// video.videoops.io/request-digest-version.
	// +optional
	// +kubebuilder:validation:Minimum=0
	DigestVersion int32 `json:"digestVersion,omitempty"`

	// keyFingerprint identifies, by a fingerprint (never the key), the API key that submitted the
	// job in jobId. A job read with another key that the service does not show is not "not
	// found": the object stalls with reason APIKeyChanged.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	KeyFingerprint string `json:"keyFingerprint,omitempty"`

	// resubmitOf is the attempt of unknown outcome whose resubmission a human confirmed
	// (annotation confirm-resubmit), until the resubmission has a job or is refused for good: a
	// 409 to a project render meanwhile proves that attempt created a job.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	ResubmitOf string `json:"resubmitOf,omitempty"`

	// budgetEstimate is what the spend guard reserved for the render job in jobId before paying
	// for it (copied from its submission): a VideoBudget created or replaced while the job runs
	// rebuilds the job's reservation from it.
	// +optional
	BudgetEstimate *BudgetEstimate `json:"budgetEstimate,omitempty"`

	// submission records a submit call that was started but whose job id is not known yet. It is
	// written before the paid call so that a crash can never lead to a second, unseen submission.
	// +optional
	Submission *Submission `json:"submission,omitempty"`

	// progress is the job's progress in percent, 0 to 100.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Progress *int32 `json:"progress,omitempty"`

	// progressMessage is the service's progress text (renderProgressMessage).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	ProgressMessage string `json:"progressMessage,omitempty"`

	// renderState is the service's render state, for example RUNNING.
	// +optional
	// +kubebuilder:validation:MaxLength=100
	RenderState string `json:"renderState,omitempty"`

	// submittedAt is when the service accepted the job.
	// +optional
	SubmittedAt *metav1.Time `json:"submittedAt,omitempty"`

	// completedAt is when the controller saw the job end (completed or failed).
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`

	// chargeMark was written by earlier managers with a job's end, where the namespace's
	// VideoBudget's charges stood then. Deprecated: no longer written or read; the budget folds
	// the end recorded here (completedAt, videoDuration, aiCreditsUsed) while it holds the job's
	// reservation. Kept so that objects written by earlier managers stay valid.
	// +optional
	ChargeMark *ChargeMark `json:"chargeMark,omitempty"`

	// lastHandledRetry is the last value of the video.videoops.io/retry annotation the
	// controller acted on. Setting the annotation to any other value asks for one new job for the
	// current spec after a failed or refused one.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	LastHandledRetry string `json:"lastHandledRetry,omitempty"`

	// failure holds the service's error code and message when the job failed or was refused.
	// +optional
	Failure *JobFailure `json:"failure,omitempty"`

	// outputsOmitted names the outputs the service returned that were too long to record, with
	// their length. A URL or a clearance code is never cut: a shortened one would not work.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:items:MaxLength=200
	OutputsOmitted []string `json:"outputsOmitted,omitempty"`

	// callback is a job-result callback received for this object by a replica of the manager that
	// does not lead, until the leader acts on it. Writing it wakes the leader at once, whichever
	// replica the service reached; the leader trusts nothing in it and reads the job with the
	// object's key.
	// +optional
	Callback *CallbackReceipt `json:"callback,omitempty"`
}

// ChargeMark is where a namespace's VideoBudget's charges stood when an earlier manager wrote a
// render's end before its own charge. Deprecated: no longer written or read.
type ChargeMark struct {
	// count is the budget's status.chargeCount then.
	// +required
	// +kubebuilder:validation:Minimum=0
	Count int64 `json:"count"`

	// after is the job the budget had charged last then (the last of status.chargedJobs),
	// empty when it had charged none.
	// +optional
	// +kubebuilder:validation:MaxLength=100
	After string `json:"after,omitempty"`
}

// Submission is the "submission in flight" record: the controller writes it with an optimistic
// lock before calling the service, and replaces it with jobId right after the call.
type Submission struct {
	// generation is the spec generation being submitted.
	// +required
	// +kubebuilder:validation:Minimum=0
	Generation int64 `json:"generation"`

	// attemptId identifies this submit call. It travels to the service in webhookInput, so a
	// callback can prove which job an interrupted submission created.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	AttemptID string `json:"attemptId,omitempty"`

	// startedAt is when the submit call started.
	// +required
	StartedAt metav1.Time `json:"startedAt"`

	// deadline is when this attempt's budget ends: the manager's timeout of a call to the
	// service plus its status writes. A job this attempt created was created between startedAt
	// and deadline, the window to check at the service before confirming a resubmission.
	// +optional
	Deadline *metav1.Time `json:"deadline,omitempty"`

	// retry is the value of the video.videoops.io/retry annotation this attempt acts on. It moves
	// to lastHandledRetry only when a job is recorded or the service refuses the request for
	// good, so a retry answered by a 429 is not lost.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Retry string `json:"retry,omitempty"`

	// storyboardGeneration is, for a storyboardRef render, the VideoStoryboard generation this
	// attempt renders. It moves to status.storyboardGeneration only with the job (or a final
	// refusal), so a refused attempt never passes for a render of that generation.
	// +optional
	// +kubebuilder:validation:Minimum=0
	StoryboardGeneration int64 `json:"storyboardGeneration,omitempty"`

	// storyboardUID is the uid of that VideoStoryboard: one deleted and created again starts at
	// generation 1 anew.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	StoryboardUID string `json:"storyboardUID,omitempty"`

	// storyboardDigest is the digest of the approved preview this attempt renders.
	// +optional
	// +kubebuilder:validation:MaxLength=71
	StoryboardDigest string `json:"storyboardDigest,omitempty"`

	// narrationPinned is true when this attempt's request narrates the approved narration.
	// +optional
	NarrationPinned *bool `json:"narrationPinned,omitempty"`

	// approvedBy is the user who approved the preview this attempt renders, as the admission
	// policy stamped it on the render (annotation video.videoops.io/approved-by); empty when the
	// approval carries no stamp (written before the policies were installed).
	// +optional
	// +kubebuilder:validation:MaxLength=512
	ApprovedBy string `json:"approvedBy,omitempty"`

	// requestDigest is the digest of what this attempt asks for (see status.requestDigest).
	// +optional
	// +kubebuilder:validation:MaxLength=71
	RequestDigest string `json:"requestDigest,omitempty"`

	// digestVersion is the version of requestDigest's encoding; absent means 1.
	// +optional
	// +kubebuilder:validation:Minimum=0
	DigestVersion int32 `json:"digestVersion,omitempty"`

	// keyFingerprint identifies the API key this attempt is sent with.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	KeyFingerprint string `json:"keyFingerprint,omitempty"`

	// resubmitOf is the attempt whose outcome was unknown and whose resubmission a human
	// confirmed: a 409 to a project render of this attempt proves that attempt created a job.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	ResubmitOf string `json:"resubmitOf,omitempty"`

	// budgetEstimate is what the spend guard reserved for this attempt of a render: a VideoBudget
	// that rebuilds the attempt's reservation (after a replace) uses it, not a guess.
	// +optional
	BudgetEstimate *BudgetEstimate `json:"budgetEstimate,omitempty"`
}

// BudgetEstimate is what a render is expected to cost before it is paid (docs/spend-guard.md):
// the reservation's estimate and its flags.
type BudgetEstimate struct {
	// seconds is the estimated length of the video.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Seconds int64 `json:"seconds,omitempty"`

	// aiCredits is set when the request may consume AI credits (an aiVisual, veo-animated slides,
	// or a project whose content is unknown): such renders run one at a time under maxAICredits.
	// +optional
	AICredits bool `json:"aiCredits,omitempty"`

	// unbounded is set when no field of the request bounds the video's length (a blogUrl or
	// pptUrl scene, a brief without duration, an audio or video scene without transcript, a
	// slowed voice, a template or a project): such renders run one at a time under
	// maxRenderSeconds.
	// +optional
	Unbounded bool `json:"unbounded,omitempty"`

	// unreportedCredits is set when the request consumes AI credits that the job answer does not
	// report (slides animated with a veo model).
	// +optional
	UnreportedCredits bool `json:"unreportedCredits,omitempty"`
}

// CallbackReceipt is a job-result callback as a replica received it.
type CallbackReceipt struct {
	// attemptId is the submission attempt the callback URL was signed for.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	AttemptID string `json:"attemptId,omitempty"`

	// jobId is the job the callback's body named (not verified).
	// +optional
	// +kubebuilder:validation:MaxLength=100
	JobID string `json:"jobId,omitempty"`

	// receivedAt is when the replica received it.
	// +required
	ReceivedAt metav1.Time `json:"receivedAt"`
}

// JobFailure is the reason a job failed, as the service or the controller reported it.
type JobFailure struct {
	// code is the service's error code (for example TEXT_TO_VIDEO_FAILED or INVALID_REQUEST_BODY)
	// or a condition reason when the controller refused to submit.
	// +optional
	// +kubebuilder:validation:MaxLength=200
	Code string `json:"code,omitempty"`

	// message is the service's error message, truncated to 4096 characters.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Message string `json:"message,omitempty"`
}
