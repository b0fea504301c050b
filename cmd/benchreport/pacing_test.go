package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/pacer"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
)

// pacedRun is a pacing run's result whose figures say which run it is: N
// instances achieving achieved calls a minute of R = 120.
func pacedRun(n int, pacing string, achieved float64, cfg func(*throughputConfig)) *throughputResult {
	c := throughputConfig{RatePerMinute: 120, SimBurst: 1, Latency: 200 * time.Millisecond,
		Instances: n, Duration: time.Minute, Pacing: pacing}
	if cfg != nil {
		cfg(&c)
	}
	return &throughputResult{Config: c, Uploads: 120, Succeeded: 120, Calls: 120, AchievedPerMinute: achieved,
		Settled: settling{OK: true, After: 5 * time.Second, CallsTo: 12, PerMinute: achieved}}
}

func TestPacingSectionPutsEachRunInItsKindsTable(t *testing.T) {
	sliding := func(c *throughputConfig) {
		c.SlidingLog, c.RatePerMinute, c.ServiceOffset = true, 30, -1234*time.Millisecond
	}
	skew := func(c *throughputConfig) { c.Skew = lambdaSkew }
	wideSkew := func(c *throughputConfig) { c.Skew = 100 * time.Millisecond }
	shared, instance := predictor.PacingShared, predictor.PacingInstance
	r := &results{Pacing: []pacingRun{
		{"sliding", pacedRun(1, shared, 29.91, sliding)},
		{"sliding", pacedRun(2, shared, 29.52, sliding)},
		{"compare", pacedRun(2, instance, 60.1, nil)},
		{"compare", pacedRun(2, shared, 118.1, nil)},
		{"misconfigured", pacedRun(4, instance, 70.3, nil)},
		{"misconfigured", pacedRun(4, shared, 110.3, nil)},
		{"skew", pacedRun(2, shared, 78.4, skew)},
		{"skew-info", pacedRun(2, shared, 66.6, wideSkew)},
	}}
	// The first sliding run dropped the margin 9.5 s into the run, after
	// 5 slots; the second never did, and its 29.52/min misses the goal.
	start := time.Date(2026, 11, 27, 17, 0, 0, 0, time.UTC)
	r.Pacing[0].Result.Started = start
	r.Pacing[0].Result.Pacers = []pacer.Stats{{Slots: 100, AimedSlots: 97, FirstAimed: start.Add(9500 * time.Millisecond)}, {Slots: 50, AimedSlots: 48}}
	r.Pacing[1].Result.Pacers = []pacer.Stats{{Slots: 150}}
	// The per-instance run at twice the rate never settles, and the skewed
	// run misses its goal, which the headline must name.
	r.Pacing[4].Result.Settled = settling{}
	r.Pacing[6].Result.Status429 = 13
	var b strings.Builder
	r.pacingSection(func(format string, args ...any) { fmt.Fprintf(&b, format, args...) })
	out := b.String()

	sections := map[string][]string{
		"## Pacing against the service's limiter":   {"| -1.234 s | 29.91/min (99.7%) | 0 of 120 (0.0%) | 9.5 s, 5 slots |", "29.52/min (98.4%) | 0 of 120 (0.0%) | never |"},
		"## Pacing: one shared schedule":            {"60.1/min", "118.1/min"},
		"### Rate configured at twice the real one": {"| 4 | instance | never |", "110.3/min"},
		"### Clocks skewed":                         {"| ±5ms | 78.4/min (65.3%) | 13 of 120 (10.8%) | 0 / 0 ms | 0 | MISS |", "| ±100ms | 66.6/min (55.5%) | 0 of 120 (0.0%) | 0 / 0 ms | 0 | info |"},
	}
	order := []string{"## Pacing against the service's limiter", "## Pacing: one shared schedule",
		"### Rate configured at twice the real one", "### Clocks skewed"}
	for i, heading := range order {
		start := strings.Index(out, heading)
		if start < 0 {
			t.Fatalf("no section %q in:\n%s", heading, out)
		}
		end := len(out)
		if i+1 < len(order) {
			end = strings.Index(out, order[i+1])
		}
		if end < start {
			t.Fatalf("section %q comes after %q", order[i+1], heading)
		}
		section := out[start:end]
		last := -1
		for _, want := range sections[heading] {
			at := strings.Index(section, want)
			if at < 0 {
				t.Errorf("section %q lacks %q:\n%s", heading, want, section)
				continue
			}
			if at < last {
				t.Errorf("section %q lists %q out of run order", heading, want)
			}
			last = at
		}
		if got, want := strings.Count(section, "\n| "), len(sections[heading])+1; got != want {
			t.Errorf("section %q has %d table rows (header included), want %d:\n%s", heading, got, want, section)
		}
	}

	rows := r.pacingRows()
	if len(rows) != 4 {
		t.Fatalf("%d headline rows, want one per kind: %+v", len(rows), rows)
	}
	if slidingRow := rows[0]; slidingRow.verdict != "MISS" || !strings.Contains(slidingRow.measured, "N=2") || strings.Contains(slidingRow.measured, "N=1 ") {
		t.Errorf("headline for the sliding runs = %+v, want a MISS naming N=2 (98.4%% of R is under 99.5%%) only", slidingRow)
	}
	for _, row := range rows[1:3] {
		// The per-instance runs miss by design; only the shared ones count.
		if row.verdict != "PASS" {
			t.Errorf("headline %q = %s (%s), want PASS", row.figure, row.verdict, row.measured)
		}
	}
	// The ±100 ms run is information: no headline row of its own.
	if skewRow := rows[3]; skewRow.verdict != "MISS" || !strings.Contains(skewRow.measured, "N=2") || !strings.Contains(skewRow.figure, "10ms of each other") {
		t.Errorf("headline for the skewed run = %+v, want a MISS naming clocks 10ms apart and N=2", skewRow)
	}
	if why := rows[3].why; why != "see the pacing section" {
		t.Errorf("a miss with 13 429s is explained as %q, want the pacing section", why)
	}
	// A run that misses with a single 429 is told what that 429 cost.
	for _, run := range r.Pacing {
		if run.Kind == "skew" {
			run.Result.Status429 = 1
		}
	}
	if why := r.pacingRows()[3].why; !strings.Contains(why, "drew a single 429") || !strings.Contains(why, "97.7%, the guard's ceiling") {
		t.Errorf("a miss with one 429 is explained as %q", why)
	}
}
