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

package previewdigest

// FROZEN: digest version 1. THIS FILE MUST NEVER CHANGE.
//
// Version 1 is the encoding of every digest written before digests carried a version (the
// operator up to and including the release that introduced version 2). Records of it live in
// clusters, backups and Git (status.preview.digest, spec.storyboardRef.approvedDigest,
// status.storyboardDigest, the request-digest annotation), and the operator recognises them by
// computing the same value again: any change here, even a "harmless" one, makes every such
// record unrecognised, and an object whose record is not recognised may pay again. The golden
// tests (golden_test.go here and in internal/requestdigest) pin its values.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// OfV1 is the version 1 digest of p: the document without a version member, encoded by
// CanonicalV1.
func OfV1(p Preview) (string, error) {
	doc := map[string]any{}
	scenes := make([]any, len(p.Scenes))
	for i, s := range p.Scenes {
		scenes[i] = map[string]any{"story": s.Story, "thumbnail": s.Thumbnail}
	}
	doc["scenes"] = scenes
	for name, raw := range map[string]json.RawMessage{"renderParameters": p.RenderParameters, "raw": p.Raw, "request": p.Request} {
		v, err := decodeV1(raw)
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", name, err)
		}
		if v != nil {
			doc[name] = v
		}
	}
	b, err := CanonicalV1(doc)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return Prefix + hex.EncodeToString(sum[:]), nil
}

// CanonicalV1 is the canonical JSON of version 1: encoding/json with object keys sorted (it
// sorts map keys), no insignificant whitespace, no HTML escaping, numbers as written
// (json.Number). It is not RFC 8785: numbers are not normalised and strings are escaped the
// encoding/json way.
func CanonicalV1(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding canonical JSON (digest version 1): %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// decodeV1 reads a JSON value keeping numbers as written (json.Number), so that re-encoding
// changes nothing but key order and whitespace. Empty or null gives nil.
func decodeV1(raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}
