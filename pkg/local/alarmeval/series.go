package alarmeval

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// Series of datapoints over a time range, for what draws the local metrics
// (the dashboard page) rather than evaluates them: the same selection,
// period alignment, statistics and metric math as the alarms, so a graph
// shows exactly the datapoints an alarm on the same metric sees.

// Point is one datapoint of a series: a period's start and its value.
type Point struct {
	Time  time.Time
	Value float64
}

// StatSeries returns stat's metric aggregated with its statistic over its
// period, for every period that starts in [from, to), aligned as alarm
// periods are (from the Unix epoch, in UTC). A period without values has no
// point, as CloudWatch has no datapoint for it. opts.ResolveDimension and
// opts.MatchUnresolvedByKey select the local series as they do for alarms.
func (s *Store) StatSeries(stat MetricStat, from, to time.Time, opts Options) ([]Point, error) {
	if err := checkStat(&stat, stat.Period); err != nil {
		return nil, fmt.Errorf("alarmeval: %w", err)
	}
	sel := newSelector(&stat, opts)
	var out []Point
	for start := periodStart(from, stat.Period); start.Before(to); start = start.Add(stat.Period) {
		if v, ok := stat.Stat.Compute(s.values(sel, start, start.Add(stat.Period), to)); ok {
			out = append(out, Point{Time: start, Value: v})
		}
	}
	return out, nil
}

// MathSeries evaluates metric math over [from, to), one period at a time,
// with the language the alarms support (see ParseTemplate): each entry with
// a MetricStat reads the store, each Expression the other entries by id.
// Every MetricStat must have the given period. It returns the series of
// every entry with ReturnData, by id. An expression outside the supported
// language, or an unknown id, is an error naming the entry.
func (s *Store) MathSeries(queries []MetricDataQuery, period time.Duration, from, to time.Time, opts Options) (map[string][]Point, error) {
	// A copy, so that parsing leaves the caller's entries as they were.
	queries = slices.Clone(queries)
	byID := map[string]*MetricDataQuery{}
	sels := map[string]selector{}
	for i := range queries {
		q := &queries[i]
		if q.ID == "" {
			return nil, fmt.Errorf("alarmeval: metric math entry %d has no id", i)
		}
		byID[q.ID] = q
		switch {
		case q.MetricStat != nil:
			if err := checkStat(q.MetricStat, period); err != nil {
				return nil, fmt.Errorf("alarmeval: metric math entry %s: %w", q.ID, err)
			}
			sels[q.ID] = newSelector(q.MetricStat, opts)
		default:
			n, err := parseExpression(q.Expression)
			if err != nil {
				return nil, fmt.Errorf("alarmeval: metric math entry %s, expression %q: %w", q.ID, q.Expression, err)
			}
			q.expr = n
		}
	}
	for _, q := range queries {
		if q.expr == nil {
			continue
		}
		for _, ref := range q.expr.ids(nil) {
			if byID[ref] == nil {
				return nil, fmt.Errorf("alarmeval: metric math entry %s refers to unknown id %q", q.ID, ref)
			}
		}
	}
	if cycle := findCycle(queries); cycle != "" {
		return nil, fmt.Errorf("alarmeval: metric math expressions refer to each other in a cycle through %q", cycle)
	}

	out := map[string][]Point{}
	for start := periodStart(from, period); start.Before(to); start = start.Add(period) {
		cache := map[string]value{}
		var lookup func(id string) value
		lookup = func(id string) value {
			if v, ok := cache[id]; ok {
				return v
			}
			var v value
			if q := byID[id]; q.MetricStat != nil {
				v.v, v.ok = q.MetricStat.Stat.Compute(s.values(sels[id], start, start.Add(period), to))
			} else {
				v = q.expr.eval(lookup)
			}
			cache[id] = v
			return v
		}
		for _, q := range queries {
			if !q.ReturnData {
				continue
			}
			if v := lookup(q.ID); v.ok {
				out[q.ID] = append(out[q.ID], Point{Time: start, Value: v.v})
			}
		}
	}
	return out, nil
}

// DimensionSets returns the dimension sets of every series stored under
// namespace and name, in a stable order, as CloudWatch's ListMetrics and
// SEARCH see them.
func (s *Store) DimensionSets(namespace, name string) []map[string]string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []map[string]string
	for _, ser := range s.metrics[metricKey{namespace, name}] {
		out = append(out, maps.Clone(ser.dims))
	}
	slices.SortFunc(out, func(a, b map[string]string) int {
		return compareDims(a, b)
	})
	return out
}

// compareDims orders dimension sets by their sorted name=value pairs.
func compareDims(a, b map[string]string) int {
	flat := func(m map[string]string) []string {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			kv = append(kv, k, m[k])
		}
		return kv
	}
	return slices.Compare(flat(a), flat(b))
}
