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

package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"

	videov1alpha1 "github.com/videoops/video-operator/api/v1alpha1"
	"github.com/videoops/video-operator/internal/apiclient"
	"github.com/videoops/video-operator/internal/credentials"
)

// brandCache keeps each account's video brands for a few minutes, keyed by a fingerprint of the
// API key (never the key), so a brand is checked before every paid render without listing
// brands for each one.
type brandCache struct {
	clock clock.PassiveClock
	ttl   time.Duration

	mu      sync.Mutex
	entries map[string]brandEntry
}

type brandEntry struct {
	brands  []apiclient.Brand
	fetched time.Time
}

func newBrandCache(c clock.PassiveClock, ttl time.Duration) *brandCache {
	return &brandCache{clock: c, ttl: ttl, entries: map[string]brandEntry{}}
}

// cached reports whether list would answer keyID without a call.
func (c *brandCache) cached(keyID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[keyID]
	return ok && c.clock.Since(e.fetched) < c.ttl
}

func (c *brandCache) list(ctx context.Context, keyID string, api apiclient.Interface) ([]apiclient.Brand, error) {
	c.mu.Lock()
	e, ok := c.entries[keyID]
	c.mu.Unlock()
	if ok && c.clock.Since(e.fetched) < c.ttl {
		return e.brands, nil
	}
	brands, err := api.ListVideoBrands(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	c.entries[keyID] = brandEntry{brands: brands, fetched: now}
	// Expired lists are dropped when another is stored: keys that are no longer used do not
	// stay in memory.
	for id, e := range c.entries {
		if now.Sub(e.fetched) >= c.ttl {
			delete(c.entries, id)
		}
	}
	return brands, nil
}

// checkBrand is submit's gate that refuses to pay for a render whose brandId or brandName the
// account does not have. The brand list is cached per API key (its fingerprint, s.keyID).
func (l *lifecycle[T]) checkBrand(ctx context.Context, s *scope[T]) *stop {
	tx, keyID, req := s.tx, s.keyID, s.target.render
	if req == nil || (req.BrandID == nil && req.BrandName == nil) {
		return nil
	}
	if !l.brands.cached(keyID) {
		if wait := l.budgets.Urgent(keyID, l.budgetKey(objectKey(tx.Obj))); wait > 0 {
			return stopWith(later(tx, wait))
		}
	}
	callCtx, cancel := l.callContext(ctx)
	brands, err := l.brands.list(callCtx, keyID, s.api)
	cancel()
	if err != nil {
		return l.callFailed(ctx, tx, err)
	}
	known := slices.ContainsFunc(brands, func(b apiclient.Brand) bool {
		return (req.BrandID != nil && b.ID == *req.BrandID) || (req.BrandName != nil && b.Name == *req.BrandName)
	})
	if known {
		return nil
	}
	names := make([]string, 0, len(brands))
	for _, b := range brands {
		names = append(names, fmt.Sprintf("%q", b.Name))
	}
	field, value := "brandName", ptrValue(req.BrandName)
	if req.BrandID != nil {
		field, value = "brandId", *req.BrandID
	}
	st := tx.Obj.Job()
	st.Phase = videov1alpha1.PhaseFailed
	l.stall(tx, videov1alpha1.ReasonBrandNotFound, fmt.Sprintf(
		"%s %q is not a video brand of this account; known brands: %s. Nothing was submitted",
		field, value, orNone(strings.Join(names, ", "))))
	// The account's brands may change: look again when the cache expires.
	return stopAfter(l.opts.BrandCacheTTL)
}

func ptrValue(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// fingerprints identifies API keys by their keyed fingerprint, in records and in memory (the
// call budgets, the circuits, the brand cache), never by the key. setDefaults checked the secret.
func (l *lifecycle[T]) fingerprints() *credentials.Fingerprinter {
	f, _ := credentials.NewFingerprinter(l.opts.FingerprintKey)
	return f
}
