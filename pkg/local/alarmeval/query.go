package alarmeval

import (
	"fmt"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/cfntemplate"
)

// compiled is an alarm ready to evaluate: its metrics resolved to store
// selectors and its math parsed.
type compiled struct {
	alarm *Alarm
	// sels by query id; "" for a single-metric alarm.
	sels    map[string]selector
	queries map[string]*MetricDataQuery
	result  string
}

// compile checks an alarm (which may have been built by hand rather than
// parsed) and resolves its metrics' dimensions with opts.
func compile(a *Alarm, opts Options) (*compiled, error) {
	fail := func(format string, args ...any) (*compiled, error) {
		return nil, fmt.Errorf("alarm %s: %s", a.Name, fmt.Sprintf(format, args...))
	}
	switch {
	case a.Name == "":
		return nil, fmt.Errorf("alarm %s: no name", a.LogicalID)
	case a.EvaluationPeriods < 1:
		return fail("EvaluationPeriods %d, want at least 1", a.EvaluationPeriods)
	case a.DatapointsToAlarm < 1 || a.DatapointsToAlarm > a.EvaluationPeriods:
		return fail("DatapointsToAlarm %d, want 1 to EvaluationPeriods (%d)", a.DatapointsToAlarm, a.EvaluationPeriods)
	case a.ComparisonOperator.symbol() == "":
		return fail("ComparisonOperator %q is not supported", a.ComparisonOperator)
	case (a.MetricStat == nil) == (len(a.Metrics) == 0):
		return fail("exactly one of MetricStat and Metrics must be set")
	}
	switch a.TreatMissingData {
	case TreatMissing, TreatNotBreaching, TreatBreaching, TreatIgnore:
	default:
		return fail("TreatMissingData %q is not supported", a.TreatMissingData)
	}

	c := &compiled{alarm: a, sels: map[string]selector{}, queries: map[string]*MetricDataQuery{}}
	if a.MetricStat != nil {
		if err := checkStat(a.MetricStat, a.Period); err != nil {
			return fail("%v", err)
		}
		c.sels[""] = newSelector(a.MetricStat, opts)
		return c, nil
	}
	for i := range a.Metrics {
		q := &a.Metrics[i]
		c.queries[q.ID] = q
		switch {
		case q.MetricStat != nil:
			if err := checkStat(q.MetricStat, a.Period); err != nil {
				return fail("Metrics[%s]: %v", q.ID, err)
			}
			c.sels[q.ID] = newSelector(q.MetricStat, opts)
		case q.expr == nil:
			n, err := parseExpression(q.Expression)
			if err != nil {
				return fail("Metrics[%s].Expression %q: %v", q.ID, q.Expression, err)
			}
			q.expr = n
		}
		if q.ReturnData {
			if c.result != "" {
				return fail("both %s and %s return data", c.result, q.ID)
			}
			c.result = q.ID
		}
	}
	if c.result == "" {
		return fail("no entry of Metrics returns data")
	}
	for _, q := range c.queries {
		if q.expr == nil {
			continue
		}
		for _, id := range q.expr.ids(nil) {
			if c.queries[id] == nil {
				return fail("Metrics[%s].Expression refers to unknown id %q", q.ID, id)
			}
		}
	}
	if cycle := findCycle(a.Metrics); cycle != "" {
		return fail("expressions refer to each other in a cycle through %q", cycle)
	}
	return c, nil
}

func checkStat(s *MetricStat, period time.Duration) error {
	switch {
	case s.Stat.IsZero():
		return fmt.Errorf("%s: no statistic", s.Metric)
	case period <= 0 || period%time.Minute != 0:
		return fmt.Errorf("alarm period %s: want a positive multiple of a minute", period)
	case s.Period != period:
		return fmt.Errorf("%s: period %s differs from the alarm's %s", s.Metric, s.Period, period)
	}
	return nil
}

// newSelector resolves a metric's dimensions: opts.ResolveDimension may
// map any value (typically an opaque reference to a local name); an opaque
// reference it leaves alone matches any value of that dimension when
// opts.MatchUnresolvedByKey is set, and only itself otherwise.
func newSelector(s *MetricStat, opts Options) selector {
	sel := selector{key: metricKey{s.Metric.Namespace, s.Metric.MetricName}, dims: map[string]string{}, unit: s.Unit}
	for _, d := range s.Metric.Dimensions {
		v := d.Value
		if opts.ResolveDimension != nil {
			if mapped, ok := opts.ResolveDimension(d); ok {
				sel.dims[d.Name] = mapped
				continue
			}
		}
		if _, ref := cfntemplate.ParseReference(v); ref && opts.MatchUnresolvedByKey {
			if sel.anyValue == nil {
				sel.anyValue = map[string]bool{}
			}
			sel.anyValue[d.Name] = true
			continue
		}
		sel.dims[d.Name] = v
	}
	return sel
}

// datapoint is the alarm's datapoint for the period beginning at start,
// from the values published by asOf.
func (c *compiled) datapoint(store *Store, start, asOf time.Time) value {
	end := start.Add(c.alarm.Period)
	stat := func(s *MetricStat, sel selector) value {
		v, ok := s.Stat.Compute(store.values(sel, start, end, asOf))
		return value{v: v, ok: ok}
	}
	if c.alarm.MetricStat != nil {
		return stat(c.alarm.MetricStat, c.sels[""])
	}
	cache := map[string]value{}
	var lookup func(id string) value
	lookup = func(id string) value {
		if v, ok := cache[id]; ok {
			return v
		}
		q := c.queries[id]
		var v value
		if q.MetricStat != nil {
			v = stat(q.MetricStat, c.sels[id])
		} else {
			v = q.expr.eval(lookup)
		}
		cache[id] = v
		return v
	}
	return lookup(c.result)
}
