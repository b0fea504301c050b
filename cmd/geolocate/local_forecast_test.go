package main

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/monitor"
)

// TestLocalMonitorReportForecastLine: the local run's report prints the
// forecast in words: the runway when two readings give one, and "not
// enough readings yet (N of M)" instead of 0 days when they do not.
func TestLocalMonitorReportForecastLine(t *testing.T) {
	start := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	oneReading, _ := monitor.Forecast([]monitor.Reading{{At: start, Remaining: 1000}}, start)
	twoReadings, _ := monitor.Forecast([]monitor.Reading{{At: start, Remaining: 1000}, {At: start.Add(time.Hour), Remaining: 990}}, start.Add(time.Hour))
	for _, tc := range []struct {
		name     string
		forecast monitor.ForecastResult
		want     *regexp.Regexp
	}{
		{"one reading", oneReading, regexp.MustCompile(`(?m)^forecast +not enough readings yet \(1 of 2\)$`)},
		{"two readings", twoReadings, regexp.MustCompile(`(?m)^forecast +240\.0 credits a day, 4\.1 days left$`)},
	} {
		var out strings.Builder
		writeMonitorReport(&out, &monitor.Report{Healthy: true, Forecast: &tc.forecast}, "")
		if !tc.want.MatchString(out.String()) {
			t.Errorf("%s: report lacks %s:\n%s", tc.name, tc.want, out.String())
		}
	}
}
