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

package callback

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
)

// Indexes the callback handler uses to find the object a job result is about.
const (
	IndexJobID     = ".status.jobId"
	IndexAttemptID = ".status.submission.attemptId"
)

// Path is where the callback server receives job results: Path + token.
const Path = "/callbacks/"

// AttemptKey is the key of webhookInput under which the operator sends the attempt id,
// when the spec sets no webhookInput of its own; the service echoes it in the callback.
const AttemptKey = "videoOperatorAttemptId"

// ProofKey is the key of webhookInput under which the operator sends a second HMAC of
// the attempt id. It travels only in the request and the callback bodies, never in the URL, so
// whoever learned a callback URL (from a proxy's log, say) still cannot forge a callback body
// that names a job.
const ProofKey = "videoOperatorProof"

// maxBody bounds a callback's body: a job result is a few kilobytes.
const maxBody = 1 << 20

// Signer signs and checks callback URLs. A URL carries the submission's attempt id and an
// HMAC of it, so only the service, which received the URL, can call it, no object name appears
// in it, and it stays valid across restarts as long as the key does.
type Signer struct {
	baseURL string // public URL of the callback server, without Path
	key     []byte
}

// URL returns the callback URL for one submission.
func (c *Signer) URL(attemptID string) string {
	return strings.TrimRight(c.baseURL, "/") + Path + c.Token(attemptID)
}

// Token is the last segment of the attempt's callback URL: the attempt id and its HMAC.
func (c *Signer) Token(attemptID string) string {
	return attemptID + "." + base64.RawURLEncoding.EncodeToString(c.mac(attemptID))
}

func (c *Signer) mac(attemptID string) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte("video-operator callback\x00" + attemptID))
	return m.Sum(nil)
}

// Proof is the body-only secret of an attempt (see ProofKey).
func (c *Signer) Proof(attemptID string) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte("video-operator callback proof\x00" + attemptID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// KeyID fingerprints the signing key for status.callbackKeyId: an HMAC of a fixed label, so that
// the key itself cannot be recovered from it. Empty when callbacks are off.
func (c *Signer) KeyID() string {
	if c == nil {
		return ""
	}
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte("video-operator callback key id"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// Recognises reports whether a job whose request was signed with the key of id will have its
// callback recognised by this process: callbacks are on and the key is the same.
func (c *Signer) Recognises(id string) bool {
	return c != nil && id != "" && id == c.KeyID()
}

// Verify returns the attempt id of a valid token.
func (c *Signer) Verify(token string) (string, bool) {
	attempt, sig, ok := strings.Cut(token, ".")
	if !ok || attempt == "" || len(attempt) > 64 {
		return "", false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return "", false
	}
	return attempt, hmac.Equal(got, c.mac(attempt))
}

// WithCallback returns the request to send: the spec's own when it names a webhook, and otherwise
// a copy carrying the operator's callback URL and, when the spec has no webhookInput, the
// attempt id. Nothing else is added to what the user wrote.
func (c *Signer) WithCallback(req *videov1alpha1.StoryboardRequest, attemptID string) (*videov1alpha1.StoryboardRequest, bool) {
	if c == nil || req == nil || req.Webhook != nil {
		return req, false
	}
	out := req.DeepCopy()
	u := c.URL(attemptID)
	out.Webhook = &u
	if out.WebhookInput == nil {
		raw, _ := json.Marshal(map[string]string{AttemptKey: attemptID, ProofKey: c.Proof(attemptID)})
		out.WebhookInput = &apiextensionsv1.JSON{Raw: raw}
	}
	return out, true
}

// NewSigner returns the signer of callback URLs under baseURL, the public URL of the callback
// server without Path. Keep key stable across restarts (a Secret), so that a callback for a
// submission interrupted by a restart is still recognised.
func NewSigner(baseURL string, key []byte) *Signer {
	return &Signer{baseURL: baseURL, key: key}
}
