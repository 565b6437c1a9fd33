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

package requestdigest

// FROZEN: digest version 1. THIS FILE MUST NEVER CHANGE.
//
// Version 1 is the encoding of every request digest written before digests carried a version
// (status.requestDigest, status.submission.requestDigest and the request-digest annotation of
// objects, their backups and records in Git). The operator recognises such a record by
// computing the same value again, so any change here makes those records unrecognised, and an
// object whose record is not recognised may pay again. golden_test.go pins its values.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/videoops/video-operator/internal/previewdigest"
)

// OfV1 is the version 1 digest of body sent as kind: {"kind","request"} without a version
// member, encoded by previewdigest.CanonicalV1.
func OfV1(kind string, body any) (string, error) {
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
	b, err := previewdigest.CanonicalV1(map[string]any{"kind": kind, "request": v})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return previewdigest.Prefix + hex.EncodeToString(sum[:]), nil
}

// OfProjectV1 is the version 1 digest of a render of project id.
func OfProjectV1(id string) (string, error) {
	return OfV1(ProjectRender, map[string]string{"projectId": id})
}

// OfApprovedV1 is the version 1 digest of a render of the approved preview previewDigest (a
// version 1 preview digest: that is what version 1 records were computed over).
func OfApprovedV1(previewDigest string, narrationPinned bool) (string, error) {
	return OfV1(ApprovedRender, map[string]any{"previewDigest": previewDigest, "narrationPinned": narrationPinned})
}
