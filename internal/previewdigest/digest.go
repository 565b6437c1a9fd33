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

// Package previewdigest computes the digest of a completed storyboard preview: what a reviewer
// sees (every scene's narration and thumbnail, in order, and the render parameters) and the
// request that was previewed, as canonical JSON hashed with SHA-256. A render approved for a
// digest pays only for the preview with that digest (docs/architecture.md "What is paid for is what
// was approved"), and the render sends the previewed request: the request is covered because a
// preview shows only part of it (a voice-over, music or destinations are not in the answer), so
// two requests could otherwise share one digest and an approval of one would pay for the other.
//
// The digest is a function of the service's answer and the previewed request only: the same
// answer read again, by another process or after a restart, gives the same digest; any change of
// a narration, a thumbnail URL, a render parameter or the request gives another one.
//
// Digests carry a version (docs/architecture.md "Records that outlive a version"). Version 2, the
// current one, is the SHA-256 of the RFC 8785 (JSON Canonicalization Scheme) form of the document,
// with the member "digestVersion": 2 in it, so that a value of one version is never the value of
// another version's document. Version 1 (v1.go, frozen) is the encoding of every digest written
// before versions existed: it has no version member and its own canonical JSON. A digest keeps
// the visible form sha256:<64 hex> in every version; records say their version beside it, and a
// record that says none is version 1.
package previewdigest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/gowebpki/jcs"
)

// Prefix starts every digest: the algorithm, as in OCI digests.
const Prefix = "sha256:"

// Pattern matches a digest; the CRD validates approvedDigest with the same expression.
const Pattern = `^sha256:[0-9a-f]{64}$`

var patternRe = regexp.MustCompile(Pattern)

// Valid reports whether d has the form of a digest.
func Valid(d string) bool { return patternRe.MatchString(d) }

// Scene is what a reviewer sees of one scene.
type Scene struct {
	Story     string
	Thumbnail string
}

// Preview is what a reviewer sees of a preview. Raw is the storyboard as the service returned
// it, included only when its shape is not the documented one (then scenes alone would not say
// what was shown). Request is the previewed request as JSON: what the render will send.
type Preview struct {
	Scenes           []Scene
	RenderParameters json.RawMessage
	Raw              json.RawMessage
	Request          json.RawMessage
}

// Version is the digest version that Of computes.
const Version = 2

// Of returns the current version's digest of p. It fails only on render parameters, raw values
// or a request that are not valid JSON, or whose numbers RFC 8785 cannot represent (beyond the
// range of an IEEE 754 double).
func Of(p Preview) (string, error) {
	doc := map[string]any{"digestVersion": Version}
	scenes := make([]any, len(p.Scenes))
	for i, s := range p.Scenes {
		scenes[i] = map[string]any{"story": s.Story, "thumbnail": s.Thumbnail}
	}
	doc["scenes"] = scenes
	for name, raw := range map[string]json.RawMessage{"renderParameters": p.RenderParameters, "raw": p.Raw, "request": p.Request} {
		v, err := decode(raw)
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", name, err)
		}
		if v != nil {
			doc[name] = v
		}
	}
	return Sum(doc)
}

// Digests is a preview's digest in the current version and in version 1, which a record written
// before versions existed (an approvedDigest in Git, a status of an older manager) holds.
type Digests struct {
	Current, V1 string
}

// OfAll returns p's digest in every version the operator recognises.
func OfAll(p Preview) (Digests, error) {
	cur, err := Of(p)
	if err != nil {
		return Digests{}, err
	}
	v1, err := OfV1(p)
	if err != nil {
		return Digests{}, err
	}
	return Digests{Current: cur, V1: v1}, nil
}

// Sum is the current version's digest of a document: SHA-256 of its canonical JSON. The
// document must carry its version itself (as Of's does): Sum adds nothing.
func Sum(doc any) (string, error) {
	b, err := Canonical(doc)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return Prefix + hex.EncodeToString(sum[:]), nil
}

// decode reads a JSON value keeping numbers as written (json.Number), so that re-encoding changes
// nothing but key order and whitespace. Empty or null gives nil.
func decode(raw json.RawMessage) (any, error) {
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

// Canonical encodes v (anything encoding/json encodes) as RFC 8785 canonical JSON: object
// members sorted by their UTF-16 code units, no insignificant whitespace, strings with the
// minimal escapes, numbers in their ECMAScript form (1.50 is 1.5, 1e3 is 1000). Numbers are
// IEEE 754 doubles there: integers beyond 2^53 lose precision, which no request field reaches.
func Canonical(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding JSON: %w", err)
	}
	b, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("canonicalising JSON (RFC 8785): %w", err)
	}
	return b, nil
}
