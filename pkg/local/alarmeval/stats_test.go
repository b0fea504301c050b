package alarmeval

import (
	"strings"
	"testing"
)

func TestStatistics(t *testing.T) {
	values := []float64{5, 1, 4, 2, 3, 10, 6, 9, 7, 8}
	tests := []struct {
		stat string
		want float64
	}{
		{"Sum", 55},
		{"Average", 5.5},
		{"Minimum", 1},
		{"Maximum", 10},
		{"SampleCount", 10},
		{"p50", 5},
		{"p90", 9},
		{"p99", 10},
		{"p100", 10},
		{"p10", 1},
		{"p99.9", 10},
	}
	for _, tt := range tests {
		s, err := ParseStatistic(tt.stat)
		if err != nil {
			t.Fatalf("ParseStatistic(%q): %v", tt.stat, err)
		}
		got, ok := s.Compute(values)
		if !ok || got != tt.want {
			t.Errorf("%s = %v (%v), want %v", tt.stat, got, ok, tt.want)
		}
		if s.String() != tt.stat {
			t.Errorf("String() = %q, want %q", s, tt.stat)
		}
	}
}

// A period without values has no datapoint, even for Sum and SampleCount.
func TestStatisticOfNothingIsMissing(t *testing.T) {
	for _, s := range []Statistic{Sum, Average, Minimum, Maximum, SampleCount} {
		if v, ok := s.Compute(nil); ok {
			t.Errorf("%s of nothing = %v, want no datapoint", s, v)
		}
	}
}

func TestUnsupportedStatistics(t *testing.T) {
	for _, s := range []string{"", "sum", "tm99", "p0", "p101", "pxx", "IQM", "TC(10:90)"} {
		_, err := ParseStatistic(s)
		if err == nil || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("ParseStatistic(%q) = %v, want not supported", s, err)
		}
	}
}
