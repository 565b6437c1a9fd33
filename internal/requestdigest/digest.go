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

// Package requestdigest computes the digest of what a paid job is asked to do (docs/architecture.md
// "The record travels with the object"): "already submitted" is decided by comparing it, never by
// metadata.generation or uids, which a restore does not keep.
//
// The digest covers the endpoint and the request as sent, as canonical JSON hashed with
// SHA-256. It leaves out what differs from one attempt to the next without changing the video:
// the credentials (never in a body) and the operator's own callback (webhook and webhookInput
// are added to the body after the digest is taken).
//
// Digests carry a version (docs/architecture.md "Records that outlive a version"), the same as
// preview digests: version 2 (Of) is RFC 8785 canonical JSON of
// {"digestVersion":2,"kind","request"}; version 1 (v1.go, frozen) is the encoding of every record
// written before versions existed. Recognised says whether a record names the request, in whichever
// version it was written.
package requestdigest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/videoops/video-operator/internal/previewdigest"
)

// Kinds of request: the endpoint a job is created with. The same body sent to another endpoint
// is another job.
const (
	Preview       = "preview"
	Render        = "render"
	ProjectRender = "projectRender"
	// ApprovedRender is a render of an approved preview (storyboardRef): what is paid for is the
	// approved preview and the narration choice, not the storyboard's spec as it is now.
	ApprovedRender = "approvedRender"
)

// Version is the digest version Of computes: one version for request and preview digests,
// which share their canonical JSON.
const Version = previewdigest.Version

// Of returns the current version's digest of body sent as kind. body is anything encoding/json encodes; it is
// decoded and encoded again so that the order of struct fields plays no part.
func Of(kind string, body any) (string, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return "", fmt.Errorf("encoding the %s request: %w", kind, err)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "", fmt.Errorf("decoding the %s request: %w", kind, err)
	}
	return previewdigest.Sum(map[string]any{"digestVersion": Version, "kind": kind, "request": v})
}

// OfProject is the digest of a render of project id.
func OfProject(id string) (string, error) {
	return Of(ProjectRender, map[string]string{"projectId": id})
}

// OfApproved is the digest of a render of the approved preview previewDigest, narrating its
// narration word for word or not.
func OfApproved(previewDigest string, narrationPinned bool) (string, error) {
	return Of(ApprovedRender, map[string]any{"previewDigest": previewDigest, "narrationPinned": narrationPinned})
}

// Digests is a request's digest in the current version and in version 1. V1 is empty when it
// cannot be known (a render of a preview whose version 1 digest was never recorded).
type Digests struct {
	Current, V1 string
}

// Recognised reports whether recorded, a digest written with version (0 when the record says
// none), is the digest of the request d describes. A record without a version is version 1, but
// may also be a current digest copied by hand without its version: both are compared, which is
// safe because each version's document carries its version, so the values of two versions never
// name the same bytes. A record of the current version is compared with the current digest only.
func (d Digests) Recognised(recorded string, version int) bool {
	if recorded == "" {
		return false
	}
	if recorded == d.Current {
		return true
	}
	return version < Version && d.V1 != "" && recorded == d.V1
}

// ParseVersion reads a version as an annotation holds it; "" (no version) is 0, which
// Recognised takes as version 1. A value that is not a positive number is 0 too: a record whose
// version cannot be read is compared as one without a version.
func ParseVersion(s string) int {
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// FormatVersion writes a version as an annotation holds it, "" for 0.
func FormatVersion(v int) string {
	if v <= 0 {
		return ""
	}
	return strconv.Itoa(v)
}
