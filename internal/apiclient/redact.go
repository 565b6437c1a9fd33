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
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
)

const redacted = "[REDACTED]"

// secretKey holds the API key behind a closure. fmt prints struct fields by reflection without
// calling their methods when they are unexported, and prints what a pointer points to under some
// verbs, but it only ever prints a func as its address: so however a Client or a struct holding
// one is printed, the key cannot come out.
type secretKey struct{ value func() string }

func newSecretKey(k string) secretKey { return secretKey{value: func() string { return k }} }

// String, GoString, Format and MarshalText redact the key when it is printed directly.
func (k secretKey) String() string                  { return redacted }
func (k secretKey) GoString() string                { return redacted }
func (k secretKey) Format(f fmt.State, _ rune)      { _, _ = io.WriteString(f, redacted) }
func (k secretKey) MarshalText() ([]byte, error)    { return []byte(redacted), nil }
func (k secretKey) header() string                  { return k.value() }
func (k secretKey) redactIn(s string) string        { return redactKey(s, k.value()) }
func (k secretKey) redactFunc() func(string) string { return k.redactIn }

// redactKey removes every occurrence of key from s, in each of its spellings. Keys shorter than 4
// bytes are not looked for: replacing every "a" would mangle the message and such a key is
// rejected by New anyway.
func redactKey(s, key string) string {
	if len(key) < minKeyLen {
		return s
	}
	return redactForms(s, keySpellings(key))
}

// redactForms replaces every one of forms (a key's spellings) in s.
func redactForms(s string, forms []string) string {
	for _, k := range forms {
		if strings.Contains(s, k) {
			s = strings.ReplaceAll(s, k, redacted)
		}
	}
	return s
}

// keySpellings are the forms in which a text can carry key: itself, and percent-encoded as a URL
// query or path carries it, with upper- or lower-case hex digits. A proxy or gateway that logs
// the URL or form it was sent writes the key so into an error message.
func keySpellings(key string) []string {
	forms := []string{key}
	for _, e := range []string{url.QueryEscape(key), url.PathEscape(key)} {
		for _, f := range []string{e, lowerHex(e)} {
			if !slices.Contains(forms, f) {
				forms = append(forms, f)
			}
		}
	}
	return forms
}

// lowerHex writes the two hex digits of each percent escape of s in lower case.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerASCII(b[i+1]), lowerASCII(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// minKeyLen is the shortest key New accepts.
const minKeyLen = 4

// redactBody removes the key from a successful answer before anything reads it: a proxy or a
// WAF that reflects the Authorization header into a job's error_message or progress text would
// otherwise carry it into status, events and logs. The key is replaced where it appears as
// bytes; when the body has JSON escapes, which could spell the key differently, every string of
// the decoded document is looked at as well.
func redactBody(body []byte, key string) []byte {
	if len(key) < minKeyLen {
		return body
	}
	forms := keySpellings(key)
	for _, k := range forms {
		if bytes.Contains(body, []byte(k)) {
			body = bytes.ReplaceAll(body, []byte(k), []byte(redacted))
		}
	}
	if !bytes.Contains(body, []byte{'\\'}) {
		return body
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return body // not JSON: decoding fails later, with a redacted snippet
	}
	doc, changed := redactValue(doc, forms)
	if !changed {
		return body
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if enc.Encode(doc) != nil {
		return body
	}
	return bytes.TrimRight(out.Bytes(), "\n")
}

// redactValue replaces the key, in each of its spellings (forms), in every string (and object
// key) of a decoded JSON value.
func redactValue(v any, forms []string) (any, bool) {
	switch t := v.(type) {
	case string:
		if r := redactForms(t, forms); r != t {
			return r, true
		}
		return t, false
	case []any:
		changed := false
		for i := range t {
			var c bool
			t[i], c = redactValue(t[i], forms)
			changed = changed || c
		}
		return t, changed
	case map[string]any:
		changed := false
		for k, x := range t {
			nx, c := redactValue(x, forms)
			nk := k
			if r := redactForms(k, forms); r != k {
				nk, c = r, true
				delete(t, k)
			}
			t[nk] = nx
			changed = changed || c
		}
		return t, changed
	default:
		return v, false
	}
}
