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

package monitoring

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/annotations"
)

// scrapes is what Prometheus would have stored from scraping the manager: every sample series of
// every scrape, with the scrape's timestamp. It is a storage.Queryable for the PromQL engine, so
// the expressions run on exactly what the manager exposed.
type scrapes struct {
	series map[string]*promql.Series // by the series' label set
	times  []time.Time               // of every scrape
	last   time.Time
}

func newScrapes() *scrapes { return &scrapes{series: map[string]*promql.Series{}} }

// scrape reads the manager's /metrics once and adds its samples at the time of the scrape.
func (s *scrapes) scrape(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("scraping %s: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("scraping %s: %w", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("scraping %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return fmt.Errorf("parsing the scrape of %s: %w", url, err)
	}
	now := time.Now()
	for name, mf := range families {
		for _, m := range mf.GetMetric() {
			for _, smp := range flatten(name, mf.GetType(), m) {
				s.add(smp.lset, now, smp.value)
			}
		}
	}
	s.last = now
	s.times = append(s.times, now)
	return nil
}

type sample struct {
	lset  labels.Labels
	value float64
}

// flatten turns one metric into the series Prometheus stores for it: a histogram becomes its
// _bucket (with le), _sum and _count series, a summary its quantiles, _sum and _count.
func flatten(name string, typ dto.MetricType, m *dto.Metric) []sample {
	base := map[string]string{}
	for _, lp := range m.GetLabel() {
		base[lp.GetName()] = lp.GetValue()
	}
	with := func(metric string, extra map[string]string, v float64) sample {
		b := labels.NewBuilder(labels.FromMap(base))
		b.Set(model.MetricNameLabel, metric)
		for k, val := range extra {
			b.Set(k, val)
		}
		return sample{lset: b.Labels(), value: v}
	}
	switch typ {
	case dto.MetricType_COUNTER:
		return []sample{with(name, nil, m.GetCounter().GetValue())}
	case dto.MetricType_GAUGE:
		return []sample{with(name, nil, m.GetGauge().GetValue())}
	case dto.MetricType_HISTOGRAM:
		h := m.GetHistogram()
		out := []sample{with(name+"_sum", nil, h.GetSampleSum()), with(name+"_count", nil, float64(h.GetSampleCount()))}
		for _, b := range h.GetBucket() {
			out = append(out, with(name+"_bucket", map[string]string{"le": formatLE(b.GetUpperBound())}, float64(b.GetCumulativeCount())))
		}
		return append(out, with(name+"_bucket", map[string]string{"le": "+Inf"}, float64(h.GetSampleCount())))
	case dto.MetricType_SUMMARY:
		sm := m.GetSummary()
		out := []sample{with(name+"_sum", nil, sm.GetSampleSum()), with(name+"_count", nil, float64(sm.GetSampleCount()))}
		for _, q := range sm.GetQuantile() {
			out = append(out, with(name, map[string]string{"quantile": strconv.FormatFloat(q.GetQuantile(), 'f', -1, 64)}, q.GetValue()))
		}
		return out
	default:
		return []sample{with(name, nil, m.GetUntyped().GetValue())}
	}
}

func formatLE(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func (s *scrapes) add(lset labels.Labels, t time.Time, v float64) {
	k := lset.String()
	ser, ok := s.series[k]
	if !ok {
		ser = &promql.Series{Metric: lset}
		s.series[k] = ser
	}
	ser.Floats = append(ser.Floats, promql.FPoint{T: t.UnixMilli(), F: v})
}

// names returns every metric name stored, and for each the label names its series carry.
func (s *scrapes) names() map[string][]string {
	out := map[string][]string{}
	for _, ser := range s.series {
		name := ser.Metric.Get(model.MetricNameLabel)
		ser.Metric.Range(func(l labels.Label) {
			if l.Name != model.MetricNameLabel && !slices.Contains(out[name], l.Name) {
				out[name] = append(out[name], l.Name)
			}
		})
		if _, ok := out[name]; !ok {
			out[name] = nil
		}
	}
	return out
}

// queryable serves the stored series to the PromQL engine.
func (s *scrapes) queryable() storage.Queryable {
	return &storage.MockQueryable{MockQuerier: &storage.MockQuerier{
		SelectMockFunction: func(sortSeries bool, _ *storage.SelectHints, matchers ...*labels.Matcher) storage.SeriesSet {
			var out []storage.Series
			for _, ser := range s.series {
				if matchesAll(ser.Metric, matchers) {
					out = append(out, promql.NewStorageSeries(*ser))
				}
			}
			if sortSeries {
				slices.SortFunc(out, func(a, b storage.Series) int { return labels.Compare(a.Labels(), b.Labels()) })
			}
			return &seriesSet{series: out, i: -1}
		},
	}}
}

func matchesAll(lset labels.Labels, matchers []*labels.Matcher) bool {
	for _, m := range matchers {
		if !m.Matches(lset.Get(m.Name)) {
			return false
		}
	}
	return true
}

// seriesSet iterates over a slice of series.
type seriesSet struct {
	series []storage.Series
	i      int
}

func (ss *seriesSet) Next() bool                     { ss.i++; return ss.i < len(ss.series) }
func (ss *seriesSet) At() storage.Series             { return ss.series[ss.i] }
func (*seriesSet) Err() error                        { return nil }
func (*seriesSet) Warnings() annotations.Annotations { return nil }
func (s *scrapes) String() string                    { return strings.Join(s.sortedNames(), ", ") }
func (s *scrapes) sortedNames() []string {
	var names []string
	for n := range s.names() {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
