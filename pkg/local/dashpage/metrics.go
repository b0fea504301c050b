package dashpage

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
)

// metricProperties are the properties of a "metric" widget that the page
// draws.
type metricProperties struct {
	View    string  `json:"view"`
	Title   string  `json:"title"`
	Stat    string  `json:"stat"`
	Period  int     `json:"period"`
	Stacked bool    `json:"stacked"`
	Metrics [][]any `json:"metrics"`
	YAxis   struct {
		Left  axisProperties `json:"left"`
		Right axisProperties `json:"right"`
	} `json:"yAxis"`
	Annotations struct {
		Horizontal []struct {
			Value float64 `json:"value"`
			Label string  `json:"label"`
			Color string  `json:"color"`
		} `json:"horizontal"`
		// Alarms are alarm ARNs, opaque references in a synthesized
		// template ("GetAtt:<id>.Arn").
		Alarms []string `json:"alarms"`
	} `json:"annotations"`
}

type axisProperties struct {
	Min   *float64 `json:"min"`
	Max   *float64 `json:"max"`
	Label string   `json:"label"`
}

// row is one entry of a metric widget's "metrics": a metric, or a metric
// math expression (which may be SEARCH).
type row struct {
	Metric     alarmeval.Metric
	Expression string
	ID         string
	Label      string
	Stat       string
	Period     time.Duration
	// Right is true for a metric on the right axis.
	Right   bool
	Visible bool
	Color   string
}

func (r row) isMetric() bool { return r.Expression == "" }

// name is how the page names the row: its label, else the metric or the
// expression.
func (r row) name() string {
	switch {
	case r.Label != "":
		return r.Label
	case r.isMetric():
		return r.Metric.MetricName
	}
	return r.Expression
}

// rowOptions is the rendering options object a metrics entry may end with.
type rowOptions struct {
	Expression string `json:"expression"`
	ID         string `json:"id"`
	Label      string `json:"label"`
	Stat       string `json:"stat"`
	Period     int    `json:"period"`
	YAxis      string `json:"yAxis"`
	Visible    *bool  `json:"visible"`
	Color      string `json:"color"`
}

// parseRows reads a metric widget's "metrics" in CloudWatch's array form:
// [Namespace, MetricName, DimName, DimValue, ..., {options}], where "."
// repeats the previous entry's value at the same position and a leading
// "..." repeats the previous entry's values up to the ones that follow it.
// Entries without an id get CloudWatch's m1, m2, ... by position.
func parseRows(p metricProperties) ([]row, error) {
	defaultStat := p.Stat
	if defaultStat == "" {
		defaultStat = "Average"
	}
	defaultPeriod := p.Period
	if defaultPeriod <= 0 {
		defaultPeriod = 300
	}
	var rows []row
	var previous []string
	for i, entry := range p.Metrics {
		var names []string
		var o rowOptions
		for j, el := range entry {
			switch v := el.(type) {
			case string:
				names = append(names, v)
			case map[string]any:
				if j != len(entry)-1 {
					return nil, fmt.Errorf("metrics[%d]: options object before the end", i)
				}
				raw, _ := json.Marshal(v)
				if err := json.Unmarshal(raw, &o); err != nil {
					return nil, fmt.Errorf("metrics[%d] options: %w", i, err)
				}
			default:
				return nil, fmt.Errorf("metrics[%d][%d]: %v is neither a string nor options", i, j, el)
			}
		}
		if len(names) > 0 && names[0] == "..." {
			rest := names[1:]
			if len(rest) > len(previous) {
				return nil, fmt.Errorf("metrics[%d]: \"...\" with more values than the previous entry", i)
			}
			names = append(slices.Clone(previous[:len(previous)-len(rest)]), rest...)
		}
		for j, n := range names {
			if n == "." {
				if j >= len(previous) {
					return nil, fmt.Errorf("metrics[%d][%d]: \".\" without a previous value", i, j)
				}
				names[j] = previous[j]
			}
		}

		r := row{ID: o.ID, Label: o.Label, Stat: o.Stat, Right: o.YAxis == "right", Visible: o.Visible == nil || *o.Visible, Color: o.Color}
		if r.Stat == "" {
			r.Stat = defaultStat
		}
		period := o.Period
		if period <= 0 {
			period = defaultPeriod
		}
		r.Period = time.Duration(period) * time.Second
		switch {
		case o.Expression != "":
			r.Expression = o.Expression
		case len(names) >= 2 && len(names)%2 == 0:
			r.Metric = alarmeval.Metric{Namespace: names[0], MetricName: names[1]}
			for k := 2; k < len(names); k += 2 {
				r.Metric.Dimensions = append(r.Metric.Dimensions, alarmeval.Dimension{Name: names[k], Value: names[k+1]})
			}
			previous = names
		default:
			return nil, fmt.Errorf("metrics[%d]: %q is not Namespace, MetricName and dimension pairs", i, strings.Join(names, ", "))
		}
		if r.ID == "" {
			r.ID = fmt.Sprintf("m%d", i+1)
		}
		rows = append(rows, r)
	}
	return rows, nil
}
