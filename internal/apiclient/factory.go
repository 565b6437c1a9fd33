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

// Factory makes a client for an API key. Controllers hold a Factory rather than a client, because
// the key comes from each resource's Secret; tests give them a FakeFactory.
type Factory interface {
	// ForKey returns a client authenticating with apiKey. The caller reads the key from the
	// Secret and trims whitespace; errors never contain the key.
	ForKey(apiKey string) (Interface, error)
}

// DefaultFactory makes real clients that share one HTTP connection pool and, per key, one
// token bucket, so that both controllers together respect one limit per key.
type DefaultFactory struct {
	opts     Options
	limiters LimiterSource
}

var _ Factory = (*DefaultFactory)(nil)

// NewFactory checks opts and returns a factory. opts.Limiter is ignored: each client gets
// limiters.ForKey(key); a nil limiters means no client-side limit. When opts.HTTPClient is nil,
// one is made here and shared by every client.
func NewFactory(opts Options, limiters LimiterSource) (*DefaultFactory, error) {
	if _, err := normaliseBaseURL(opts.BaseURL, opts.AllowInsecureHTTP); err != nil {
		return nil, err
	}
	if opts.HTTPClient == nil {
		timeout := opts.Timeout
		if timeout <= 0 {
			timeout = DefaultTimeout
		}
		opts.HTTPClient = NewHTTPClient(timeout)
	}
	opts.Limiter = nil
	return &DefaultFactory{opts: opts, limiters: limiters}, nil
}

// ForKey implements Factory. Making a client is cheap; callers need not cache it.
func (f *DefaultFactory) ForKey(apiKey string) (Interface, error) {
	o := f.opts
	if f.limiters != nil {
		o.Limiter = f.limiters.ForKey(apiKey)
	}
	c, err := New(apiKey, o)
	if err != nil {
		return nil, err
	}
	return c, nil
}
