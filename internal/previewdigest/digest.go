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
// digest pays only for the preview with that digest (DESIGN.md "What is paid for is what was
// approved"), and the render sends the previewed request: the request is covered because a
// preview shows only part of it (a voice-over, music or destinations are not in the answer), so
// two requests could otherwise share one digest and an approval of one would pay for the other.
//
// The digest is a function of the service's answer and the previewed request only: the same
// answer read again, by another process or after a restart, gives the same digest; any change of
// a narration, a thumbnail URL, a render parameter or the request gives another one.
package previewdigest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
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

// Of returns the digest of p. It fails only on render parameters or raw values that are not
// valid JSON.
func Of(p Preview) (string, error) {
	doc := map[string]any{}
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

// Canonical encodes v as canonical JSON: object keys sorted (encoding/json sorts map keys), no
// insignificant whitespace, no HTML escaping, numbers as written.
func Canonical(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding canonical JSON: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
