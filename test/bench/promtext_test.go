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

package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The manager's /metrics is read with a small parser of the Prometheus text format rather than
// prometheus/common's: the harness needs gauges and histograms only, and this keeps the module's
// dependencies as they are.

// sample is one line of the text format.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// parseText reads the samples of a text-format exposition; comments and malformed lines are
// skipped (a scrape is evidence, not input to trust).
func parseText(r io.Reader) ([]sample, error) {
	var out []sample
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if s, ok := parseLine(line); ok {
			out = append(out, s)
		}
	}
	return out, sc.Err()
}

// parseLine parses `name{a="x",b="y"} value [timestamp]`.
func parseLine(line string) (sample, bool) {
	s := sample{labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i <= 0 {
		return s, false
	}
	s.name, line = line[:i], line[i:]
	if line[0] == '{' {
		end, ok := parseLabels(line[1:], s.labels)
		if !ok {
			return s, false
		}
		line = line[1+end:]
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return s, false
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return s, false
	}
	s.value = v
	return s, true
}

// parseLabels reads `a="x",b="y"}` into into and returns the index just past the closing brace.
func parseLabels(in string, into map[string]string) (int, bool) {
	i := 0
	for {
		for i < len(in) && (in[i] == ',' || in[i] == ' ') {
			i++
		}
		if i < len(in) && in[i] == '}' {
			return i + 1, true
		}
		eq := strings.IndexByte(in[i:], '=')
		if eq < 0 || i+eq+1 >= len(in) || in[i+eq+1] != '"' {
			return 0, false
		}
		name := in[i : i+eq]
		i += eq + 2
		var val strings.Builder
		for ; i < len(in) && in[i] != '"'; i++ {
			if in[i] == '\\' && i+1 < len(in) {
				i++
				switch in[i] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(in[i])
				}
				continue
			}
			val.WriteByte(in[i])
		}
		if i >= len(in) {
			return 0, false
		}
		into[name] = val.String()
		i++ // the closing quote
	}
}

// histogram is one series of a histogram: cumulative bucket counts by upper bound.
type histogram struct {
	buckets map[float64]float64
	count   float64
	sum     float64
}

// histSummary is what the report keeps of a histogram series.
type histSummary struct {
	Count float64 `json:"count"`
	Sum   float64 `json:"sumSeconds"`
	Mean  float64 `json:"meanSeconds"`
	// P50 and P99 are interpolated inside buckets, as PromQL's histogram_quantile does: an
	// estimate whose precision is the bucket layout's.
	P50 float64 `json:"p50Seconds"`
	P99 float64 `json:"p99Seconds"`
	// P99Bucket is the bucket (lower, upper] the p99 lies in: all the histogram knows of it.
	P99Bucket [2]float64 `json:"p99BucketSeconds"`
	// MaxBucket is the upper bound of the highest non-empty bucket (+Inf is reported as the
	// largest finite bound, with Overflow set).
	MaxBucket float64 `json:"maxBucketSeconds"`
	Overflow  bool    `json:"overflow,omitempty"`
}

// quantile estimates the q-quantile like histogram_quantile, and returns the bucket it lies in.
func (h histogram) quantile(q float64) (estimate float64, bucket [2]float64) {
	bounds := h.bounds()
	if len(bounds) == 0 || h.count == 0 {
		return 0, bucket
	}
	rank := q * h.count
	prevBound, prevCount := 0.0, 0.0
	for _, b := range bounds {
		c := h.buckets[b]
		if c >= rank {
			if math.IsInf(b, 1) {
				return prevBound, [2]float64{prevBound, math.MaxFloat64}
			}
			if c == prevCount {
				return b, [2]float64{prevBound, b}
			}
			return prevBound + (b-prevBound)*(rank-prevCount)/(c-prevCount), [2]float64{prevBound, b}
		}
		prevBound, prevCount = b, c
	}
	return prevBound, [2]float64{prevBound, prevBound}
}

func (h histogram) bounds() []float64 {
	bounds := make([]float64, 0, len(h.buckets))
	for b := range h.buckets {
		bounds = append(bounds, b)
	}
	sort.Float64s(bounds)
	return bounds
}

func (h histogram) summary() histSummary {
	s := histSummary{Count: h.count, Sum: h.sum}
	s.P50, _ = h.quantile(0.5)
	s.P99, s.P99Bucket = h.quantile(0.99)
	if h.count > 0 {
		s.Mean = h.sum / h.count
	}
	prev := 0.0
	for _, b := range h.bounds() {
		if h.buckets[b] > prev {
			if math.IsInf(b, 1) {
				s.Overflow = true
			} else {
				s.MaxBucket = b
			}
		}
		prev = h.buckets[b]
	}
	return s
}

// histograms groups the _bucket, _sum and _count samples of the families whose name matches
// family into series, keyed by "family{labels without le}".
func histograms(samples []sample, family *regexp.Regexp) map[string]*histogram {
	out := map[string]*histogram{}
	get := func(base string, labels map[string]string) *histogram {
		key := seriesKey(base, labels, "le")
		h := out[key]
		if h == nil {
			h = &histogram{buckets: map[float64]float64{}}
			out[key] = h
		}
		return h
	}
	for _, s := range samples {
		switch {
		case strings.HasSuffix(s.name, "_bucket") && family.MatchString(strings.TrimSuffix(s.name, "_bucket")):
			le, err := strconv.ParseFloat(s.labels["le"], 64)
			if err == nil {
				get(strings.TrimSuffix(s.name, "_bucket"), s.labels).buckets[le] = s.value
			}
		case strings.HasSuffix(s.name, "_sum") && family.MatchString(strings.TrimSuffix(s.name, "_sum")):
			get(strings.TrimSuffix(s.name, "_sum"), s.labels).sum = s.value
		case strings.HasSuffix(s.name, "_count") && family.MatchString(strings.TrimSuffix(s.name, "_count")):
			get(strings.TrimSuffix(s.name, "_count"), s.labels).count = s.value
		}
	}
	return out
}

// values returns the samples of the families whose name matches, keyed like histograms.
func values(samples []sample, family *regexp.Regexp) map[string]float64 {
	out := map[string]float64{}
	for _, s := range samples {
		if family.MatchString(s.name) {
			out[seriesKey(s.name, s.labels, "")] = s.value
		}
	}
	return out
}

// seriesKey is name{a="x",b="y"} with the labels sorted and skip left out.
func seriesKey(name string, labels map[string]string, skip string) string {
	var parts []string
	for k, v := range labels {
		if k != skip {
			parts = append(parts, k+"="+strconv.Quote(v))
		}
	}
	if len(parts) == 0 {
		return name
	}
	slices.Sort(parts)
	return name + "{" + strings.Join(parts, ",") + "}"
}

// The families the report keeps: controller-runtime's workqueue metrics, and any
// video_operator_*_seconds histogram the manager exposes (which ones exist depends on the tree).
var (
	workqueueHistograms = regexp.MustCompile(`^workqueue_(queue|work)_duration_seconds$`)
	operatorHistograms  = regexp.MustCompile(`^video_operator_.*_seconds$`)
	workqueueGauges     = regexp.MustCompile(`^workqueue_(depth|adds_total|retries_total|unfinished_work_seconds|longest_running_processor_seconds)$`)
	// budgetWriteCounters say which changes of a render cost the VideoBudget writes (issue 30).
	budgetWriteCounters = regexp.MustCompile(`^video_operator_budget_(write(s|_changes)|grants)_total$`)
)

// scrape is what one read of /metrics kept.
type scrape struct {
	At         time.Time              `json:"at"`
	Histograms map[string]histSummary `json:"histograms"`
	Gauges     map[string]float64     `json:"gauges"`
}

// scrapeMetrics reads url and keeps the families above.
func scrapeMetrics(ctx context.Context, url string) (scrape, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return scrape{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return scrape{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return scrape{}, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	samples, err := parseText(resp.Body)
	if err != nil {
		return scrape{}, err
	}
	out := scrape{At: time.Now(), Histograms: map[string]histSummary{}, Gauges: values(samples, workqueueGauges)}
	maps.Copy(out.Gauges, values(samples, budgetWriteCounters))
	for _, family := range []*regexp.Regexp{workqueueHistograms, operatorHistograms} {
		for k, h := range histograms(samples, family) {
			out.Histograms[k] = h.summary()
		}
	}
	return out, nil
}
