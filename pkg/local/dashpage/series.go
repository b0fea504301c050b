package dashpage

import (
	"fmt"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
)

// line is one drawn series of a graph.
type line struct {
	Name   string
	Right  bool
	Color  string
	Points []alarmeval.Point
}

// widgetLines computes the lines of a metric widget's rows over [from, to),
// and notes for the rows that cannot be drawn: no local data, a statistic
// or an expression the local evaluation does not model.
func (b *builder) widgetLines(rows []row) (lines []line, notes []string) {
	var math []row
	for _, r := range rows {
		if !r.isMetric() && !isSearch(r.Expression) {
			math = append(math, r)
		}
	}
	results := map[string][]alarmeval.Point{}
	if len(math) > 0 {
		var err error
		if results, err = b.mathSeries(rows, math[0].Period); err != nil {
			notes = append(notes, fmt.Sprintf("metric math is not evaluated locally: %v", err))
			results = map[string][]alarmeval.Point{}
		}
	}

	for _, r := range rows {
		if !r.Visible {
			continue
		}
		switch {
		case !r.isMetric() && isSearch(r.Expression):
			found, note := b.searchLines(r)
			lines = append(lines, found...)
			if note != "" {
				notes = append(notes, note)
			}
			continue
		case len(math) == 0:
			stat, err := alarmeval.ParseStatistic(r.Stat)
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s: %v", r.name(), err))
				continue
			}
			points, err := b.store.StatSeries(alarmeval.MetricStat{Metric: r.Metric, Stat: stat, Period: r.Period}, b.from, b.to, b.evalOptions())
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s: %v", r.name(), err))
				continue
			}
			results[r.ID] = points
		}
		switch points := results[r.ID]; {
		case len(points) > 0:
			lines = append(lines, line{Name: r.name(), Right: r.Right, Color: r.Color, Points: points})
		case r.isMetric():
			notes = append(notes, fmt.Sprintf("%s: no local data for %s", r.name(), b.metricString(r.Metric)))
		default:
			notes = append(notes, fmt.Sprintf("%s: no local data for %s", r.name(), r.Expression))
		}
	}
	return lines, notes
}

// mathSeries evaluates a widget's metric math, every metric and
// non-SEARCH expression row as one query set.
func (b *builder) mathSeries(rows []row, period time.Duration) (map[string][]alarmeval.Point, error) {
	var queries []alarmeval.MetricDataQuery
	for _, r := range rows {
		q := alarmeval.MetricDataQuery{ID: r.ID, Label: r.Label, ReturnData: r.Visible}
		switch {
		case r.isMetric():
			stat, err := alarmeval.ParseStatistic(r.Stat)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.ID, err)
			}
			q.MetricStat = &alarmeval.MetricStat{Metric: r.Metric, Stat: stat, Period: r.Period}
		case isSearch(r.Expression):
			continue
		default:
			q.Expression = r.Expression
		}
		queries = append(queries, q)
	}
	return b.store.MathSeries(queries, period, b.from, b.to, b.evalOptions())
}

// searchLines draws one line per metric a SEARCH row finds.
func (b *builder) searchLines(r row) ([]line, string) {
	s, err := parseSearch(r.Expression)
	if err != nil {
		return nil, fmt.Sprintf("%s: not evaluated locally: %v", r.Expression, err)
	}
	// The terms name the stack's dimension values; map them to local ones
	// as the widget's metrics are.
	for k, v := range s.Terms {
		s.Terms[k] = b.dimensionValue(alarmeval.Dimension{Name: k, Value: v})
	}
	var lines []line
	for _, m := range s.metrics(b.store) {
		// The search found these series by their stored values, so they
		// need no dimension mapping.
		points, err := b.store.StatSeries(alarmeval.MetricStat{Metric: m, Stat: s.Stat, Period: s.Period}, b.from, b.to, alarmeval.Options{})
		if err != nil {
			return nil, fmt.Sprintf("%s: %v", r.Expression, err)
		}
		if len(points) > 0 {
			lines = append(lines, line{Name: searchLabel(r.Label, m), Right: r.Right, Points: points})
		}
	}
	if len(lines) == 0 {
		// In words, not the query: "no local data for SEARCH('{Geolocation,
		// Pipeline,Reason} ...')" read as a broken widget.
		return nil, searchNote(s)
	}
	return lines, ""
}

// searchNote says why a SEARCH row drew nothing: one line is drawn per
// value of the dimension it splits by, and this run published none.
func searchNote(s search) string {
	var by []string
	for _, d := range s.SchemaDims {
		if _, fixed := s.Terms[d]; !fixed {
			by = append(by, d)
		}
	}
	split := "value"
	if len(by) > 0 {
		split = strings.Join(by, " and ")
	}
	return fmt.Sprintf("No %s published in this run: a line appears for each %s that gets one.", s.MetricName, split)
}
