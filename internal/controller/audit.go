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
	"io"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// NewAuditLogger returns the logger of paid submissions: JSON lines on w, never sampled. The
// manager's production logger samples repeated messages (after 100 a second, one in 100), which
// would drop lines a platform team needs to reconcile the service's bill against.
func NewAuditLogger(w io.Writer) logr.Logger {
	// Sampling is only added outside development mode; development mode's other defaults are
	// set back to production's.
	return zap.New(zap.WriteTo(w), zap.UseDevMode(true), zap.JSONEncoder(),
		zap.Level(zapcore.InfoLevel), zap.StacktraceLevel(zapcore.PanicLevel)).WithName("audit")
}

// auditObject names the object of an audit line as controller-runtime's reconciler logs do: the
// kind as key of a klog.KObj reference ({"name","namespace"}), and flat namespace and name, which
// the bill reconciliations documented in docs/operating.md read and which therefore stay.
func auditObject(kind string, obj client.Object) []any {
	return []any{"kind", kind, kind, klog.KObj(obj), "namespace", obj.GetNamespace(), "name", obj.GetName()}
}

// auditSubmission records one paid submission and its outcome: accepted (with the job id),
// refused (certainly no job), unknown (maybe a job), or not-sent (its in-flight record could not
// be written, so the call was not made).
func (l *lifecycle[T]) auditSubmission(obj T, gen int64, attempt, outcome, jobID string, err error) {
	kv := auditObject(l.kind, obj)
	kv = append(kv, "generation", gen, "attempt", attempt, "outcome", outcome)
	if jobID != "" {
		kv = append(kv, "jobID", jobID)
	}
	// The approved preview the submission pays for: the paid call happens between the write of
	// the in-flight record and its consumption, so the record is there for every outcome.
	if sub := obj.Job().Submission; sub != nil && sub.StoryboardDigest != "" {
		kv = append(kv, "storyboardDigest", sub.StoryboardDigest, "narrationPinned", ptr.Deref(sub.NarrationPinned, false),
			"approvedBy", approverOrUnrecorded(sub.ApprovedBy))
	}
	if err != nil {
		kv = append(kv, "error", boundedError(err))
	}
	l.opts.Audit.Info("Paid submission", kv...)
}
