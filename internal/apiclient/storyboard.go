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

package apiclient

import (
	"bytes"
	"encoding/json"
)

// The interface document ("Job status response") says a completed preview returns scene
// thumbnails and render parameters, and a brief-mode preview its narration in
// storyboard.scenes[].story, but never gives the shape of "storyboard". A strict decoding would
// make a completed job unreadable, for good, the first time the service sends another shape, so
// the functions here take what they recognise and never fail on a valid JSON value. Their inputs
// are valid JSON: encoding/json checks the whole body before calling UnmarshalJSON.
//
// The wire structs below hold json.RawMessage fields so that decoding them cannot fail on a
// field's type, while keeping encoding/json's case-insensitive key matching used everywhere else.

// decodeStoryboard reads a storyboard value of any JSON type. null gives the zero Storyboard, as
// the strict decoding did.
func decodeStoryboard(b []byte) Storyboard {
	if isJSONNull(b) {
		return Storyboard{}
	}
	sb := Storyboard{Raw: append(json.RawMessage(nil), b...)}
	switch jsonKind(b) {
	case '{':
		var w struct {
			Scenes       json.RawMessage `json:"scenes"`
			RenderParams json.RawMessage `json:"renderParams"`
		}
		if json.Unmarshal(b, &w) == nil {
			sb.Scenes = decodeScenes(w.Scenes)
			sb.RenderParams = w.RenderParams
		}
	case '[':
		// Without an enclosing object, the likeliest meaning of an array is the scene list.
		sb.Scenes = decodeScenes(b)
	}
	return sb
}

// decodeScenes reads a scene list; anything but an array gives no scenes. Every element gives a
// scene, recognised or not, so that scene positions match the service's.
func decodeScenes(b []byte) []StoryboardScene {
	if jsonKind(b) != '[' {
		return nil
	}
	var elems []json.RawMessage
	if json.Unmarshal(b, &elems) != nil {
		return nil
	}
	scenes := make([]StoryboardScene, len(elems))
	for i, e := range elems {
		scenes[i] = decodeScene(e)
	}
	return scenes
}

// decodeScene reads one scene; a value that is not an object keeps only Raw, and null, as before,
// not even that.
func decodeScene(b []byte) StoryboardScene {
	if isJSONNull(b) {
		return StoryboardScene{}
	}
	s := StoryboardScene{Raw: append(json.RawMessage(nil), b...)}
	if jsonKind(b) != '{' {
		return s
	}
	var w struct {
		Thumbnail json.RawMessage `json:"thumbnail"`
		Story     json.RawMessage `json:"story"`
	}
	if json.Unmarshal(b, &w) != nil {
		return s
	}
	s.Thumbnail = thumbnailURL(w.Thumbnail)
	s.Story, _ = jsonString(w.Story)
	return s
}

// thumbnailURL reads a thumbnail given as a URL string or as an object holding one (for example
// {"url": "...", "width": 320}). An empty string in an object is passed over, since it cannot be
// the address the caller wants while a later field may be.
func thumbnailURL(b []byte) string {
	if s, ok := jsonString(b); ok {
		return s
	}
	if jsonKind(b) != '{' {
		return ""
	}
	var w struct {
		URL       json.RawMessage `json:"url"`
		Src       json.RawMessage `json:"src"`
		Href      json.RawMessage `json:"href"`
		Thumbnail json.RawMessage `json:"thumbnail"`
	}
	if json.Unmarshal(b, &w) != nil {
		return ""
	}
	// In order of preference: the names media objects most often give their address.
	for _, v := range []json.RawMessage{w.URL, w.Src, w.Href, w.Thumbnail} {
		if s, ok := jsonString(v); ok && s != "" {
			return s
		}
	}
	return ""
}

// jsonString returns b's value when b is a JSON string.
func jsonString(b []byte) (string, bool) {
	if jsonKind(b) != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(b, &s) != nil {
		return "", false
	}
	return s, true
}

// jsonKind returns the first byte of the JSON value in b, which tells its type ('{', '[', '"',
// 'n', 't', 'f', or a number's first character), or 0 when b is empty.
func jsonKind(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}
