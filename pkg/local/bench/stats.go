package bench

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Stats summarises a set of durations.
type Stats struct {
	N      int
	Min    time.Duration
	Median time.Duration
	Mean   time.Duration
	P90    time.Duration
	P99    time.Duration
	Max    time.Duration
	Total  time.Duration
}

// Summarize computes Stats of ds. It does not modify ds. An empty input
// gives the zero Stats.
func Summarize(ds []time.Duration) Stats {
	if len(ds) == 0 {
		return Stats{}
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	var total time.Duration
	for _, d := range sorted {
		total += d
	}
	return Stats{
		N:      len(sorted),
		Min:    sorted[0],
		Median: Percentile(sorted, 50),
		Mean:   total / time.Duration(len(sorted)),
		P90:    Percentile(sorted, 90),
		P99:    Percentile(sorted, 99),
		Max:    sorted[len(sorted)-1],
		Total:  total,
	}
}

// Percentile returns the p-th percentile (0 < p <= 100) of sorted by the
// nearest-rank method: the smallest value with at least p% of the values at
// or below it. The median of an even count is the lower middle value, so
// every figure reported is one that was actually measured.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted)) + 0.999999999)
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// Ms formats d in milliseconds with two decimals, the unit of the report.
func Ms(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// Thousands writes n with a comma between each group of three digits
// (1,000,000), as the report's tables give counts.
func Thousands(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}
