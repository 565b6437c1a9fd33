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
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/credentials"
	"github.com/videoops/video-operator/internal/requestdigest"
	"github.com/videoops/video-operator/internal/statustxn"
)

// The record of a paid job and where it lives (docs/architecture.md "The record travels with the
// object"). Status is not a backup: Velero restores without it by default and `kubectl get -o yaml
// | kubectl apply` drops it; a restored object also starts again at generation 1 with a new uid.
// So "already paid" is decided by the digest of the request (what was sent), and the job id, that
// digest and the submitting key's fingerprint are copied into the object's annotations once the
// job id is in status. An object that arrives with that record and without status adopts the
// job instead of paying for it again.
//
// The in-flight marker (status.submission) is not copied there, unlike crossplane's
// external-create-pending: a backup is a snapshot, and one taken in the seconds of a paid call
// is no different from one taken a second before the call started, which no marker can
// cover either; copying it would cost one more write before every paid call, on another
// endpoint than the status it would have to agree with.

// jobRecord is the record of an object's job in its annotations.
type jobRecord struct {
	jobID, requestDigest, keyFingerprint string
	// digestVersion is the version of requestDigest's encoding, "" for version 1.
	digestVersion string
	// unknown is the attempt whose outcome is unknown, with its start: "<attemptId> <startedAt>".
	unknown string
}

func recordOf(obj client.Object) jobRecord {
	a := obj.GetAnnotations()
	return jobRecord{jobID: a[videov1alpha1.AnnotationJobID], requestDigest: a[videov1alpha1.AnnotationRequestDigest],
		digestVersion:  a[videov1alpha1.AnnotationRequestDigestVersion],
		keyFingerprint: a[videov1alpha1.AnnotationKeyFingerprint], unknown: a[videov1alpha1.AnnotationSubmissionUnknown]}
}

// statusRecord is the record status holds for its current job.
func statusRecord(st *videov1alpha1.JobStatus) jobRecord {
	rec := jobRecord{jobID: st.JobID, requestDigest: st.RequestDigest, keyFingerprint: st.KeyFingerprint}
	if st.RequestDigest != "" {
		rec.digestVersion = requestdigest.FormatVersion(int(st.DigestVersion))
	}
	if sub := st.Submission; sub != nil && isStalledWith(st, videov1alpha1.ReasonSubmissionUnknown) {
		rec.unknown = sub.AttemptID + " " + sub.StartedAt.UTC().Format(time.RFC3339)
	}
	return rec
}

// restoredUnknown is the in-flight record of an attempt whose outcome was unknown when the
// object was backed up, from its annotation, for an object whose status has neither a job nor a
// submission (a restore without status): the object stalls on it again instead of paying.
func restoredUnknown(obj client.Object, st *videov1alpha1.JobStatus) *videov1alpha1.Submission {
	if st.Submission != nil || st.JobID != "" {
		return nil
	}
	attempt, started, ok := strings.Cut(recordOf(obj).unknown, " ")
	if !ok || attempt == "" {
		return nil
	}
	at, err := time.Parse(time.RFC3339, started)
	if err != nil {
		return nil
	}
	return &videov1alpha1.Submission{Generation: obj.GetGeneration(), AttemptID: attempt, StartedAt: metav1.NewTime(at)}
}

// requestDigestOf is the digest of what t asks the service for: the body sent (before the
// operator's callback is added), the project id, or, for a storyboardRef render, the approved
// preview and the narration choice.
func requestDigestOf(t *target) (string, error) {
	switch {
	case t.preview != nil:
		return requestdigest.Of(requestdigest.Preview, t.preview)
	case t.render != nil && t.sourceDigest != "":
		return requestdigest.OfApproved(t.sourceDigest, t.narrationPinned)
	case t.render != nil:
		return requestdigest.Of(requestdigest.Render, t.render)
	default:
		return requestdigest.OfProject(t.projectID)
	}
}

// requestDigestV1Of is the same digest in version 1, the encoding of records written before
// digests carried a version (docs/architecture.md "Records that outlive a version"); "" for a
// render of a preview whose version 1 digest is unknown, which no such record can name.
func requestDigestV1Of(t *target) (string, error) {
	switch {
	case t.preview != nil:
		return requestdigest.OfV1(requestdigest.Preview, t.preview)
	case t.render != nil && t.sourceDigest != "":
		if t.sourceDigestV1 == "" {
			return "", nil
		}
		return requestdigest.OfApprovedV1(t.sourceDigestV1, t.narrationPinned)
	case t.render != nil:
		return requestdigest.OfV1(requestdigest.Render, t.render)
	default:
		return requestdigest.OfProjectV1(t.projectID)
	}
}

// setDigests computes t's request digest in every version a record may hold.
func (t *target) setDigests() error {
	var err error
	if t.digest, err = requestDigestOf(t); err != nil {
		return err
	}
	t.digestV1, err = requestDigestV1Of(t)
	return err
}

// recognises reports whether a recorded request digest of version (0: the record says none) is
// t's request, in whichever version the record was written.
func (t *target) recognises(recorded string, version int32) bool {
	return requestdigest.Digests{Current: t.digest, V1: t.digestV1}.Recognised(recorded, int(version))
}

// recognisesRecord is recognises for a record in the annotations.
func (t *target) recognisesRecord(rec jobRecord) bool {
	return requestdigest.Digests{Current: t.digest, V1: t.digestV1}.Recognised(rec.requestDigest, requestdigest.ParseVersion(rec.digestVersion))
}

// alreadySent reports whether status holds the job (or the final refusal) of the request t
// describes. An edit that leaves the request unchanged pays nothing: the job becomes the current
// generation's, and an event says so.
func (l *lifecycle[T]) alreadySent(tx *statustxn.Txn[T], t *target) bool {
	obj := tx.Obj
	st := obj.Job()
	gen := obj.GetGeneration()
	if st.JobID == "" && st.CompletedAt == nil {
		return false
	}
	// A record of an earlier digest version is recognised as it is, and not rewritten: a
	// manager rolled back to that version still recognises it.
	sent := t.recognises(st.RequestDigest, st.DigestVersion)
	if st.RequestDigest == "" {
		// Recorded by a version of the operator before request digests: its rule, and the
		// digest is recorded from now on.
		sent = st.JobGeneration == gen && l.sameSource(obj, t)
		if sent {
			st.RequestDigest, st.DigestVersion = t.digest, requestdigest.Version
		}
	}
	if !sent {
		return false
	}
	if st.JobGeneration != gen {
		from, jobID := st.JobGeneration, st.JobID
		st.JobGeneration = gen
		l.adapter.carryOutputs(obj, from, gen)
		what := "job " + jobID
		if jobID == "" {
			what = "the refused submission"
		}
		tx.After(func() {
			l.opts.Recorder.Eventf(obj, nil, "Normal", eventRequestUnchanged, "Submit",
				"Generation %d changed the spec but not the request: it is identical to that of %s (generation %d, request %s); not submitted again",
				gen, what, from, t.digest)
		})
	}
	return true
}

// adoptable reports whether the annotations name a job that the object takes as its own instead
// of paying again: status has no job of its own (a restore without status, or a record written
// in Git), or it has an ended job of another request while the annotations name the current
// request's job (status restored from an older job). t is the current target, nil when it
// cannot be known yet.
func (l *lifecycle[T]) adoptable(obj T, rec jobRecord, t *target) bool {
	st := obj.Job()
	switch {
	case rec.jobID == "" || rec.jobID == st.JobID || st.Submission != nil:
		return false
	case obj.GetAnnotations()[videov1alpha1.AnnotationConfirmResubmit] == rec.jobID:
		// A human confirmed that the job is gone: the current spec is submitted anew.
		return false
	case st.JobID == "" && st.CompletedAt == nil:
		return true
	case st.JobID == "" && st.Failure != nil && st.Failure.Code == codeEarlierSubmissionRendering:
		// The job a 409 proved, once a human names it; not the record of an older request.
		return rec.requestDigest == "" || rec.requestDigest == st.RequestDigest
	}
	return t != nil && t.recognisesRecord(rec) && !t.recognises(st.RequestDigest, st.DigestVersion) && st.CompletedAt != nil
}

// adopt takes the job the annotations name as the object's current job: it reads it with the
// object's key and records it as a job of the current generation, without paying. t is the
// current target, nil when the spec cannot be resolved yet (then the annotation's digest is
// taken). A job the service does not know for this key stalls: nothing is submitted on its own.
// It lets the reconcile go on once the adopted job has ended (the spec is decided next), and ends
// it while the job runs or when it could not be read.
func (l *lifecycle[T]) adopt(ctx context.Context, s *scope[T], rec jobRecord, t *target) *stop {
	obj, st, tx := s.obj, s.st, s.tx
	gen := obj.GetGeneration()
	if end := l.useKey(ctx, s); end != nil {
		return end
	}
	keyID := s.keyID
	if wait := l.budgets.Urgent(keyID, l.budgetKey(objectKey(obj))); wait > 0 {
		return stopWith(later(tx, wait))
	}
	callCtx, cancel := l.callContext(ctx)
	job, err := s.api.GetJob(callCtx, rec.jobID)
	cancel()
	if err != nil {
		if t != nil && rec.requestDigest != "" && !t.recognisesRecord(rec) && unknownToKey(err) {
			// A record of another request (annotations copied onto an object with another
			// spec): nothing was paid for this request, so there is nothing to pay twice and
			// no reason to stall. It is submitted as any new request is.
			logf.FromContext(ctx).Info("The job the annotations name is of another request and unknown to this key; not adopted",
				"jobID", rec.jobID, "answer", describeAnswer(err))
			return nil
		}
		if l.keyChanged(ctx, tx, rec.keyFingerprint, keyID, rec.jobID, err) {
			return stopHere()
		}
		if apiclient.IsJobNotFound(err) || apiclient.IsNotFound(err) {
			st.Phase = videov1alpha1.PhasePending
			ref := secretRef(obj)
			l.stall(tx, videov1alpha1.ReasonAdoptedJobNotFound, fmt.Sprintf(
				"Annotation %s names job %s, which the service does not know for the API key in key %q of Secret %q (%s). "+
					"To avoid paying twice nothing is submitted on its own: put the key that submitted the job into the Secret, or fix the annotation; "+
					"to submit the current spec as a new, paid job, run: kubectl annotate %s %s -n %s %s=%s",
				videov1alpha1.AnnotationJobID, rec.jobID, ref.Key, ref.Name, describeAnswer(err),
				strings.ToLower(l.kind), obj.GetName(), obj.GetNamespace(), videov1alpha1.AnnotationConfirmResubmit, rec.jobID))
			return stopHere()
		}
		return l.callFailed(ctx, tx, err)
	}

	digest, version := rec.requestDigest, recordedVersion(rec)
	var unverified *bool
	if digest == "" && t != nil {
		// A record written by hand names only the job: it is taken as the current spec's, so
		// nothing is paid for it again, but what it was asked to do is not known (a preview of
		// it is shown, not approvable).
		digest, version, unverified = t.digest, requestdigest.Version, ptr.To(true)
	}
	logf.FromContext(ctx).Info("Adopting the job named by the object's annotations; nothing is paid", "jobID", rec.jobID)
	l.auditSubmission(obj, gen, "", "adopted", rec.jobID, nil)
	previous := l.replaceJob(tx)
	st.JobID = rec.jobID
	st.JobGeneration = gen
	st.RequestDigest, st.DigestVersion = digest, version
	st.RequestUnverified = unverified
	st.KeyFingerprint = cmp.Or(rec.keyFingerprint, keyID)
	st.CallbackKeyID = ""
	now := metav1.NewTime(l.opts.Clock.Now())
	st.SubmittedAt = &now
	if t != nil && t.recognises(digest, version) {
		// Who approved the adopted job is not known: the object was created with its record (a
		// restore without status, an adoption by hand), and its approval stamps name whoever
		// created it, who paid nothing (docs/approval.md "A restore is an approval too").
		obj.SetJobSource(&videov1alpha1.Submission{StoryboardGeneration: t.sourceGeneration,
			StoryboardUID: string(t.sourceUID), StoryboardDigest: t.recordedSourceDigest(), NarrationPinned: narrationPinned(t)})
	}
	st.Phase = videov1alpha1.PhaseInProgress
	setOutcome(st, gen, outcomeReconciling, videov1alpha1.ReasonInProgress,
		fmt.Sprintf("Job %s adopted from annotation %s", rec.jobID, videov1alpha1.AnnotationJobID))
	l.recordPending(s)
	tx.After(func() {
		note := ""
		if previous != "" {
			note = "; " + previous
		}
		l.opts.Recorder.Eventf(obj, nil, "Normal", eventAdopted, "Adopt",
			"Adopted job %s named by annotation %s (request %s); nothing was paid%s", rec.jobID, videov1alpha1.AnnotationJobID, digestOrNone(digest), note)
	})
	// A job that ended was charged where it was submitted; one still running is held by the
	// namespace's budget until its end is folded, as any other.
	if ended := l.recordJob(ctx, tx, job); ended {
		return nil
	}
	if l.guard != nil {
		if err := l.guard.Adopt(ctx, obj); err != nil {
			return stopOn(fmt.Errorf("holding adopted job %s in the namespace's VideoBudget: %w", rec.jobID, err))
		}
	}
	return stopAfter(l.pollDelay(keyID, obj))
}

// keyChanged stalls the object when a job submitted with another key than the one it names now
// is answered as unknown (JOB_NOT_FOUND, 404 or 401): that is a key of another account, not a
// job that is gone. The job and its outputs are kept, and the message offers no remedy that pays
// again. It reports whether it stalled. A fingerprint an earlier version recorded (the bare hash,
// credentials.BareFingerprint) of the key in the Secret is the same key, not a key change.
func (l *lifecycle[T]) keyChanged(ctx context.Context, tx *statustxn.Txn[T], submittedBy, keyID, jobID string, err error) bool {
	if submittedBy == "" || submittedBy == keyID || !unknownToKey(err) {
		return false
	}
	ref := secretRef(tx.Obj)
	if !strings.HasPrefix(submittedBy, credentials.FingerprintPrefix) {
		// Read again only on this rare path: keyID was made from the same read of the Secret.
		if key, kerr := l.keys.APIKey(ctx, tx.Obj.GetNamespace(), ref); kerr == nil && l.fingerprints().Recognises(submittedBy, key) {
			return false
		}
	}
	l.stall(tx, videov1alpha1.ReasonAPIKeyChanged, fmt.Sprintf(
		"Job %s was submitted with another API key (fingerprint %s) than the one in key %q of Secret %q (fingerprint %s), "+
			"and the service does not show the job to this key (it answered %s). The job is kept and nothing is submitted again: "+
			"put the submitting key, or another key of its account, back into the Secret to follow the job",
		jobID, shortFingerprint(submittedBy), ref.Key, ref.Name, shortFingerprint(keyID), describeAnswer(err)))
	return true
}

// unknownToKey reports whether the service answered that the key cannot see the job.
func unknownToKey(err error) bool {
	return apiclient.IsJobNotFound(err) || apiclient.IsNotFound(err) || apiclient.IsUnauthorized(err)
}

// recordPending asks for the record in status to be copied into the annotations once the
// status is written (Reconcile's commit, writeRecordIfDue).
func (l *lifecycle[T]) recordPending(s *scope[T]) {
	s.tx.After(func() { s.recordDue = true })
}

// writeRecord copies the job record of the written status into the object's annotations, with
// an optimistic lock: written is the object as the status write left it. It is one write of the
// object's metadata per job, the price of a record that survives a restore without status.
func (l *lifecycle[T]) writeRecord(ctx context.Context, written T) error {
	st := written.Job()
	want := statusRecord(st)
	if (want.jobID == "" && want.unknown == "") || (st.Submission != nil && want.unknown == "") || recordOf(written) == want {
		return nil
	}
	base := written.DeepCopyObject().(T)
	patched := written.DeepCopyObject().(T)
	ann := patched.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	for k, v := range map[string]string{videov1alpha1.AnnotationJobID: want.jobID,
		videov1alpha1.AnnotationRequestDigest: want.requestDigest, videov1alpha1.AnnotationRequestDigestVersion: want.digestVersion,
		videov1alpha1.AnnotationKeyFingerprint: want.keyFingerprint, videov1alpha1.AnnotationSubmissionUnknown: want.unknown} {
		if v == "" {
			delete(ann, k)
		} else {
			ann[k] = v
		}
	}
	patched.SetAnnotations(ann)
	l.holdForCharge(ctx, patched, want.jobID)
	if err := l.client.Patch(ctx, patched, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("recording job %s in the annotations of %s %s: %w", want.jobID, l.kind, objectKey(written), err)
	}
	return nil
}

// codeEarlierSubmissionRendering is the failure code of a confirmed project resubmission that was
// answered 409: the earlier, unknown attempt created a render of the project.
const codeEarlierSubmissionRendering = "EARLIER_SUBMISSION_RENDERING"

// shortFingerprint is enough of a key's fingerprint for a human to tell two keys apart (the
// digits, not the prefix of a keyed one).
func shortFingerprint(f string) string {
	f = strings.TrimPrefix(f, credentials.FingerprintPrefix)
	if len(f) > 8 {
		return f[:8]
	}
	return f
}

// restoredStatus passes the status write of a restore (Velero writes the backed-up status after
// creating the object): a status whose observedGeneration is ahead of metadata.generation was
// written for another life of the object, since the generation started again at 1. Other status
// writes do not wake the reconciler; the controller's own never look like this.
func restoredStatus() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			st := videov1alpha1.JobStatusOf(e.ObjectNew)
			return st != nil && st.ObservedGeneration > e.ObjectNew.GetGeneration()
		},
	}
}

// annotationsChanged passes a change of the annotations (retry, confirm-resubmit, a record a
// user writes), except the controller's own write of the job record: that write follows a status
// write the reconciler already acted on, and waking it again would read a running job early.
func annotationsChanged() predicate.Funcs {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			before, after := e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations()
			if maps.Equal(before, after) {
				return false
			}
			st := videov1alpha1.JobStatusOf(e.ObjectNew)
			if st == nil || recordOf(e.ObjectNew) != statusRecord(st) {
				return true
			}
			// The record now says what status says: only its own keys may have changed.
			for _, k := range []string{videov1alpha1.AnnotationJobID, videov1alpha1.AnnotationRequestDigest, videov1alpha1.AnnotationRequestDigestVersion,
				videov1alpha1.AnnotationKeyFingerprint, videov1alpha1.AnnotationSubmissionUnknown} {
				before, after = withoutKey(before, k), withoutKey(after, k)
			}
			return !maps.Equal(before, after)
		},
	}
}

// withoutKey returns m without k, copying only when k is there.
func withoutKey(m map[string]string, k string) map[string]string {
	if _, ok := m[k]; !ok {
		return m
	}
	out := maps.Clone(m)
	delete(out, k)
	return out
}

// recordedVersion is the digest version a record in the annotations says, 0 for none; a value
// too large for status is taken as none, and compared as such.
func recordedVersion(rec jobRecord) int32 {
	v := requestdigest.ParseVersion(rec.digestVersion)
	if v > math.MaxInt32 {
		return 0
	}
	return int32(v) //nolint:gosec // bounded above

}
