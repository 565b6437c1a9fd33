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

// Package requestdigest computes the digest of what a paid job is asked to do (DESIGN.md "The
// record travels with the object"): "already submitted" is decided by comparing it, never by
// metadata.generation or uids, which a restore does not keep.
//
// The digest covers the endpoint and the request as sent, as canonical JSON (keys sorted, no
// insignificant whitespace) hashed with SHA-256. It leaves out what differs from one attempt to
// the next without changing the video: the credentials (never in a body) and the operator's own
// callback (webhook and webhookInput are added to the body after the digest is taken).
package requestdigest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

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

// Of returns the digest of body sent as kind. body is anything encoding/json encodes; it is
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
	b, err := previewdigest.Canonical(map[string]any{"kind": kind, "request": v})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return previewdigest.Prefix + hex.EncodeToString(sum[:]), nil
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
