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
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VideoBudgetName is the only name a VideoBudget may have: one budget per namespace, enforced
// at admission by a CEL rule on metadata.name.
const VideoBudgetName = "default"

// BudgetPeriod is the length of a budget period. Periods start at UTC boundaries: midnight
// (Daily), Monday midnight (Weekly) or the first of the month at midnight (Monthly).
// +kubebuilder:validation:Enum=Daily;Weekly;Monthly
type BudgetPeriod string

const (
	// BudgetPeriodDaily starts at 00:00 UTC every day.
	BudgetPeriodDaily BudgetPeriod = "Daily"
	// BudgetPeriodWeekly starts at 00:00 UTC every Monday.
	BudgetPeriodWeekly BudgetPeriod = "Weekly"
	// BudgetPeriodMonthly starts at 00:00 UTC on the first day of every month.
	BudgetPeriodMonthly BudgetPeriod = "Monthly"
)

// BudgetLimit names one limit of a VideoBudget, in conditions, messages and metric labels.
type BudgetLimit string

const (
	// BudgetLimitRenders is spec.maxRenders: paid renders submitted (counted at submission).
	BudgetLimitRenders BudgetLimit = "maxRenders"
	// BudgetLimitRenderSeconds is spec.maxRenderSeconds: seconds of rendered video (counted when
	// a render completes, from the job's videoDuration).
	BudgetLimitRenderSeconds BudgetLimit = "maxRenderSeconds"
	// BudgetLimitAICredits is spec.maxAICredits: AI credits (counted when a render completes, from
	// the job's aiCreditsUsed).
	BudgetLimitAICredits BudgetLimit = "maxAICredits"
	// BudgetLimitPreviews is spec.maxPreviews: VideoStoryboard previews submitted.
	BudgetLimitPreviews BudgetLimit = "maxPreviews"
)

// VideoBudget conditions and reasons.
const (
	// ConditionExhausted is True when at least one limit is reached: objects of the kinds it
	// limits wait instead of submitting.
	ConditionExhausted ConditionType = "Exhausted"

	// ReasonBudgetActive: the budget is evaluated and enforced.
	ReasonBudgetActive ConditionReason = "Active"
	// ReasonWithinBudget: no limit is reached.
	ReasonWithinBudget ConditionReason = "WithinBudget"
	// ReasonLedgerUnavailable: the namespace's usage cannot be written to its ledger (the
	// manager's namespace is missing, RBAC refuses, the API server fails), so the budget cannot
	// keep its promise across a replace or a restore: nothing more is paid in the namespace until
	// it can (Ready is False).
	ReasonLedgerUnavailable ConditionReason = "LedgerUnavailable"
	// ReasonMaxRendersReached, ReasonMaxRenderSecondsReached, ReasonMaxAICreditsReached and
	// ReasonMaxPreviewsReached name the limit reached (the first, when several are).
	ReasonMaxRendersReached       ConditionReason = "MaxRendersReached"
	ReasonMaxRenderSecondsReached ConditionReason = "MaxRenderSecondsReached"
	ReasonMaxAICreditsReached     ConditionReason = "MaxAICreditsReached"
	ReasonMaxPreviewsReached      ConditionReason = "MaxPreviewsReached"

	// ReasonBudgetExhausted: a VideoRender or VideoStoryboard waits because the namespace's
	// VideoBudget has no room for its submission; it submits by itself at the next period or
	// when the budget is raised.
	ReasonBudgetExhausted ConditionReason = "BudgetExhausted"

	// ConditionCreditsUnaccounted is True when renders of the period paid AI credits that no job
	// answer reports (pptSlideAnimation with a veo model): maxAICredits does not count them.
	ConditionCreditsUnaccounted ConditionType = "CreditsUnaccounted"
	// ReasonUnreportedCredits: at least one such render was paid this period.
	ReasonUnreportedCredits ConditionReason = "UnreportedCredits"
	// ReasonAllReported: every AI credit the period's renders consumed was reported.
	ReasonAllReported ConditionReason = "AllReported"

	// FinalizerCharge keeps a VideoRender of a namespace with a VideoBudget
	// until its job's end is read and charged, so that deleting it mid-job does not hide what
	// the job cost. It is given up at the job deadline (the reservation's estimate is charged
	// then). Removing it by hand lets the object go at once: the job is then charged its
	// estimate by the VideoBudget controller, not its real seconds and credits.
	FinalizerCharge = "video.videoops.io/charge"

	// LedgerConfigMapName is the ConfigMap in which managers released before issue 28 kept a
	// namespace's ledger, in the tenant's own namespace, where tenants can usually write. It is
	// no longer written; it is read only to migrate it, once (docs/spend-guard.md).
	LedgerConfigMapName = "video-operator-budget-ledger"

	// LedgerConfigMapPrefix names the ledgers, in the manager's own namespace: the ledger of
	// namespace NS, which keeps the period's usage apart from its VideoBudget so that deleting
	// and creating the budget again keeps it, is the ConfigMap LedgerConfigMapPrefix+NS.
	LedgerConfigMapPrefix = "video-operator-budget-ledger."

	// LabelLedgerNamespace labels a ledger with the namespace whose usage it keeps.
	LabelLedgerNamespace = "video.videoops.io/budget-namespace"
)

// VideoBudgetSpec sets the limits of the namespace's paid work per period. Each limit is
// optional; an absent limit does not limit.
type VideoBudgetSpec struct {
	// period is the length of a budget period; usage starts again from zero at each UTC boundary.
	// +optional
	// +default="Monthly"
	Period BudgetPeriod `json:"period,omitempty"`

	// maxRenders is the number of VideoRender jobs (any source) that may be submitted per period.
	// A render counts when it is submitted, whether it completes or not. Concurrent submissions
	// never go beyond it.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxRenders *int64 `json:"maxRenders,omitempty"`

	// maxRenderSeconds is the total length, in seconds, of the videos rendered per period (the
	// sum of the jobs' videoDuration, each rounded up to a whole second). A video's length is
	// known only when it completes, so each render reserves an estimate of it before it is paid
	// and the estimates of renders in flight or running count like used seconds; renders whose
	// length their request does not bound (a blog post, a deck, a brief without duration, a
	// template, a project, a slowed voice) run one at a time: a burst goes at most one render
	// beyond the limit.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxRenderSeconds *int64 `json:"maxRenderSeconds,omitempty"`

	// maxAICredits is the AI credits the renders (and previews, where their answers report
	// any) may use per period (the sum of the jobs' aiCreditsUsed). It stops new renders and
	// previews with an aiVisual once reached, and those that may consume credits run one at a
	// time while it is set, so a burst goes at most one job beyond it. Credits that job answers
	// do not report are not counted: see the CreditsUnaccounted condition.
	// +optional
	MaxAICredits *resource.Quantity `json:"maxAICredits,omitempty"`

	// maxPreviews is the number of VideoStoryboard previews that may be submitted per period.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MaxPreviews *int64 `json:"maxPreviews,omitempty"`
}

// BudgetWindow is the usage of one calendar window (a UTC day, an ISO week or a month).
type BudgetWindow struct {
	// period is the kind of window: Daily, Weekly or Monthly.
	// +required
	Period BudgetPeriod `json:"period"`

	// start is when the window began (UTC).
	// +required
	Start metav1.Time `json:"start"`

	// used is what was charged within the window.
	// +optional
	Used BudgetUsage `json:"used,omitzero"`
}

// BudgetUsage is what the current period used.
type BudgetUsage struct {
	// renders is the number of render jobs submitted.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +default=0
	Renders int64 `json:"renders,omitempty"`

	// renderSeconds is the total length of the completed renders, each rounded up to a second.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +default=0
	RenderSeconds int64 `json:"renderSeconds,omitempty"`

	// aiCredits is the total of AI credits the completed renders used.
	// +optional
	AICredits *resource.Quantity `json:"aiCredits,omitempty"`

	// previews is the number of preview jobs submitted.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +default=0
	Previews int64 `json:"previews,omitempty"`

	// unreportedCreditRenders is the number of renders paid this period whose request consumes
	// AI credits that the job answer does not report (pptSlideAnimation with veo3.1_fast or
	// veo3.1): aiCredits does not include them.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +default=0
	UnreportedCreditRenders int64 `json:"unreportedCreditRenders,omitempty"`
}

// BudgetReserved counts the reservations of submissions in flight.
type BudgetReserved struct {
	// renders is the number of render submissions in flight.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Renders int64 `json:"renders,omitempty"`

	// previews is the number of preview submissions in flight.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Previews int64 `json:"previews,omitempty"`

	// renderSeconds is the estimated seconds of the renders in flight or running whose real
	// length is not charged yet; they count against maxRenderSeconds like used ones.
	// +optional
	// +kubebuilder:validation:Minimum=0
	RenderSeconds int64 `json:"renderSeconds,omitempty"`

	// aiCreditRenders is the number of renders and previews in flight or running that may
	// consume AI credits; while one is, another such render or preview waits when maxAICredits
	// is set.
	// +optional
	// +kubebuilder:validation:Minimum=0
	AICreditRenders int64 `json:"aiCreditRenders,omitempty"`

	// unboundedRenders is the number of renders in flight or running whose length no field of
	// their request bounds; while one is, another such render waits when maxRenderSeconds is set.
	// +optional
	// +kubebuilder:validation:Minimum=0
	UnboundedRenders int64 `json:"unboundedRenders,omitempty"`
}

// BudgetReservation holds room in the budget for one submission in flight. The controller
// writes it before the object's in-flight record, and turns it into usage once the job id is
// recorded (or releases it when the attempt certainly created no job).
type BudgetReservation struct {
	// kind is VideoRender or VideoStoryboard.
	// +required
	// +kubebuilder:validation:Enum=VideoRender;VideoStoryboard
	Kind string `json:"kind,omitempty"`

	// name of the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name,omitempty"`

	// uid of the object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	UID string `json:"uid,omitempty"`

	// attemptId is the submission attempt the room is held for (status.submission.attemptId of
	// the object).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	AttemptID string `json:"attemptId,omitempty"`

	// reservedAt is when the room was reserved.
	// +required
	ReservedAt metav1.Time `json:"reservedAt"`

	// digest is, for a storyboardRef render, the digest of the approved preview the submission
	// pays for.
	// +optional
	// +kubebuilder:validation:MaxLength=71
	Digest string `json:"digest,omitempty"`

	// estimatedSeconds is the estimated length of the render (see the spend guard's docs); it
	// counts against maxRenderSeconds until the job's real length is charged.
	// +optional
	// +kubebuilder:validation:Minimum=0
	EstimatedSeconds int64 `json:"estimatedSeconds,omitempty"`

	// aiCredits is set when the request may consume AI credits (an aiVisual, or a project
	// whose content is unknown).
	// +optional
	AICredits bool `json:"aiCredits,omitempty"`

	// unbounded is set when no field of the request bounds the render's length (its estimate is
	// a guess): such renders run one at a time while maxRenderSeconds is set.
	// +optional
	Unbounded bool `json:"unbounded,omitempty"`

	// unreportedCredits is set when the request consumes AI credits that the job answer does
	// not report (an AI avatar, slides animated with a veo model): the job's charge counts it in
	// used.unreportedCreditRenders, whoever charges it.
	// +optional
	UnreportedCredits bool `json:"unreportedCredits,omitempty"`

	// jobId is set once the job is recorded: the reservation then stands for a running job whose
	// seconds and credits are charged when it ends.
	// +optional
	// +kubebuilder:validation:MaxLength=100
	JobID string `json:"jobId,omitempty"`

	// apiKeySecretRef is the render's spec.apiKeySecretRef when it names another Secret than the
	// default: a running job's end is read with this key by the VideoBudget controller once the
	// render is gone (deleted, even with its finalizer stripped), and only then is its reservation
	// ended.
	// +optional
	APIKeySecretRef *SecretKeyRef `json:"apiKeySecretRef,omitempty"`
}

// VideoBudgetStatus is the current period, its usage and the submissions in flight.
type VideoBudgetStatus struct {
	// conditions are Ready and Exhausted.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// observedGeneration is the metadata.generation the controller last acted on.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// period is the kind of the current period (spec.period when it started).
	// +optional
	Period BudgetPeriod `json:"period,omitempty"`

	// periodStart is when the current period began (UTC).
	// +optional
	PeriodStart *metav1.Time `json:"periodStart,omitempty"`

	// periodEnd is when the current period ends and usage starts again from zero.
	// +optional
	PeriodEnd *metav1.Time `json:"periodEnd,omitempty"`

	// used is what the current period used. Deleting a VideoRender gives nothing back, and
	// deleting the VideoBudget does not reset it (see ledgerBudgetUID).
	// Defaulted, with its counters, so that a budget shows 0 rather than nothing before its
	// first render.
	// +optional
	// +default={}
	Used BudgetUsage `json:"used,omitzero"`

	// windows are the usage of the current UTC day, ISO week and month, whatever the budget's
	// period: every charge is added to each, and each starts again from zero at its own
	// boundary. A change of period takes the new period's usage from its window, so that no change
	// of period, however often and in whatever order, lowers a period's usage below what was
	// charged in it.
	// +optional
	// +listType=map
	// +listMapKey=period
	// +kubebuilder:validation:MaxItems=3
	Windows []BudgetWindow `json:"windows,omitempty"`

	// reserved counts the submissions in flight (see reservations); they count against
	// maxRenders and maxPreviews like used ones.
	// +optional
	Reserved BudgetReserved `json:"reserved,omitempty"`

	// reservations are the submissions in flight, one per object, and the running renders whose
	// job's end is not charged yet (pending until then, whoever holds the render). At most 1000:
	// a namespace with that many waits for some to end before it submits more.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	Reservations []BudgetReservation `json:"reservations,omitempty"`

	// runningJobs are the reservations of running renders whose job's end is not charged yet,
	// each one line: "<name> <uid> <attemptId> <reservedAt, Unix seconds> <estimatedSeconds>
	// <flags> <jobId>", flags "-" or letters c (aiCredits), u (unbounded) and r (unreportedCredits). They are
	// reservations as the list above describes them, kept as text: the API server validates,
	// merges and encodes a list of objects field by field on every write of the budget, and a
	// namespace running a hundred renders made each write cost about seven times an empty
	// budget's (docs/architecture.md "Load on the cluster"). A running render whose calls use
	// another Secret than the default stays in reservations. reservations and runningJobs hold
	// at most 1000 in all.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MaxLength=600
	RunningJobs []string `json:"runningJobs,omitempty"`

	// chargedJobs are the ids of the most recent jobs whose seconds and credits were added to
	// used, whatever their period. A job is charged once because its reservation is removed in
	// the same write; the ids tell where no reservation can (a budget written by an older
	// manager; a preview's credits). Bounded: an older one seen again there is charged again,
	// the safe side. An item may be "counted:" and a job id, as written by earlier managers.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=108
	ChargedJobs []string `json:"chargedJobs,omitempty"`

	// chargeCount counts the jobs ever charged into this budget (each id added to chargedJobs).
	// It does not restart with a period, and a budget created again takes it from the
	// namespace's ledger, which orders its copies of the budget by it.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ChargeCount int64 `json:"chargeCount,omitempty"`

	// runningReserved is set once every running render's job holds a reservation (its estimate
	// counts against maxRenderSeconds and maxAICredits until its end is charged): a budget kept by
	// an older manager has its running jobs' reservations rebuilt from the renders first.
	// +optional
	RunningReserved bool `json:"runningReserved,omitempty"`

	// ledgerBudgetUID is the uid of the VideoBudget whose status shows the namespace's ledger
	// (ConfigMap video-operator-budget-ledger.<namespace> in the manager's namespace), the state
	// this status is a view of: a budget created again shows the same ledger, so the period's
	// usage survives its replacement.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	LedgerBudgetUID string `json:"ledgerBudgetUID,omitempty"`
}

// VideoBudget limits the paid work of its namespace per period: renders, seconds of video, AI
// credits and previews. A VideoRender or VideoStoryboard that would go beyond a limit waits
// (Stalled, reason BudgetExhausted, with the reset time) and submits by itself at the next period
// or when the budget is raised. There is at most one per namespace, named "default". Without one, the
// namespace is not limited.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=vb
// +kubebuilder:validation:XValidation:rule="self.metadata.name == 'default'",message="a namespace has one VideoBudget and it must be named default",fieldPath=".metadata.name"
// +kubebuilder:printcolumn:name="Period",type=string,JSONPath=`.spec.period`
// +kubebuilder:printcolumn:name="Renders",type=integer,JSONPath=`.status.used.renders`
// +kubebuilder:printcolumn:name="Max Renders",type=integer,JSONPath=`.spec.maxRenders`
// +kubebuilder:printcolumn:name="Seconds",type=integer,JSONPath=`.status.used.renderSeconds`,priority=1
// +kubebuilder:printcolumn:name="Credits",type=string,JSONPath=`.status.used.aiCredits`,priority=1
// +kubebuilder:printcolumn:name="Exhausted",type=string,JSONPath=`.status.conditions[?(@.type=="Exhausted")].status`
// +kubebuilder:printcolumn:name="Resets",type=string,JSONPath=`.status.periodEnd`,description="When the period ends and usage starts again from zero (UTC)"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type VideoBudget struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the object's metadata; its name must be default.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec sets the limits.
	// +optional
	Spec VideoBudgetSpec `json:"spec,omitempty"`

	// status is the current period and its usage.
	// +optional
	Status VideoBudgetStatus `json:"status,omitempty"`
}

// VideoBudgetList is a list of VideoBudget.
// +kubebuilder:object:root=true
type VideoBudgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VideoBudget `json:"items"`
}

func init() {
	knownTypes = append(knownTypes, &VideoBudget{}, &VideoBudgetList{})
}
