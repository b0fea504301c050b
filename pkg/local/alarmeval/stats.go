package alarmeval

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Statistic is how a period's values become one datapoint: one of the
// standard statistics or a percentile (pNN).
type Statistic struct {
	name string
	// percentile is set for pNN, in (0, 100].
	percentile float64
}

// Standard statistics.
var (
	Sum         = Statistic{name: "Sum"}
	Average     = Statistic{name: "Average"}
	Minimum     = Statistic{name: "Minimum"}
	Maximum     = Statistic{name: "Maximum"}
	SampleCount = Statistic{name: "SampleCount"}
)

// ParseStatistic reads a statistic as CloudFormation writes it: Statistic
// ("Sum", ...) or ExtendedStatistic / MetricStat.Stat ("p90", "p99.9").
// Other extended statistics (trimmed means, TC, WM, IQM...) are refused.
func ParseStatistic(s string) (Statistic, error) {
	switch s {
	case "Sum", "Average", "Minimum", "Maximum", "SampleCount":
		return Statistic{name: s}, nil
	}
	if rest, ok := strings.CutPrefix(s, "p"); ok {
		p, err := strconv.ParseFloat(rest, 64)
		if err == nil && p > 0 && p <= 100 {
			return Statistic{name: s, percentile: p}, nil
		}
	}
	return Statistic{}, fmt.Errorf("statistic %q is not supported (Sum, Average, Minimum, Maximum, SampleCount, pNN)", s)
}

// String returns the statistic's name ("Sum", "p90").
func (s Statistic) String() string { return s.name }

// IsZero reports whether s is unset.
func (s Statistic) IsZero() bool { return s.name == "" }

// Compute returns the statistic of values; ok is false when there are none
// (a missing datapoint: CloudWatch has no datapoint, not a zero, for a
// period without data, even for Sum and SampleCount).
func (s Statistic) Compute(values []float64) (v float64, ok bool) {
	if len(values) == 0 {
		return 0, false
	}
	switch s.name {
	case "Sum":
		return sum(values), true
	case "Average":
		return sum(values) / float64(len(values)), true
	case "Minimum":
		return slices.Min(values), true
	case "Maximum":
		return slices.Max(values), true
	case "SampleCount":
		return float64(len(values)), true
	}
	if s.percentile > 0 {
		return percentile(values, s.percentile), true
	}
	return 0, false
}

func sum(values []float64) float64 {
	var t float64
	for _, v := range values {
		t += v
	}
	return t
}

// percentile is the nearest-rank percentile: the smallest value with at
// least p percent of the values at or below it. CloudWatch computes
// percentiles from its own value distribution, which for the few values a
// local run produces agrees with nearest rank to within one sample.
func percentile(values []float64, p float64) float64 {
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}
