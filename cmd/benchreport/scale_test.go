package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/pacesim"
)

// The scale section's headline judges the model's rows against the
// service's limiter only: a strict-bucket row's 429s are information, a
// sliding-log row short of 99% (with instances enough) is a miss named in
// the reason, and the report carries the table.
func TestScaleHeadlineJudgesTheSlidingLogRows(t *testing.T) {
	row := func(rate float64, n int, lim geosim.Limiter, shares ...float64) *pacesim.Row {
		w := &pacesim.Row{Config: pacesim.Config{Rate: rate, Instances: n, Workers: 4, Limiter: lim}}
		for i, share := range shares {
			c := w.Config
			c.Seed = uint64(i + 1)
			w.Runs = append(w.Runs, &pacesim.Result{Config: c, Share: share})
		}
		return w
	}
	bucket := row(600, 10, geosim.LimiterTokenBucket, 0.80)
	bucket.Runs[0].Refused = 40
	r := &results{Scale: &scaleResult{Rows: []*pacesim.Row{
		row(600, 10, geosim.LimiterSlidingLog, 0.992, 0.995),
		bucket,
	}}}
	h := r.scaleHeadline()
	if len(h) != 1 || h[0].verdict != "PASS" || !strings.Contains(h[0].measured, "largest rate met 600/min") {
		t.Fatalf("headline %+v, want a PASS up to 600/min (the strict row is information)", h)
	}
	// One seed of three short of the goal misses the row.
	r.Scale.Rows = append(r.Scale.Rows, row(6000, 100, geosim.LimiterSlidingLog, 0.995, 0.97, 0.993))
	h = r.scaleHeadline()
	if h[0].verdict != "MISS" || !strings.Contains(h[0].why, "R=6000 N=100: 97.0% of R (seed 2; 1 of 3 seeds miss)") {
		t.Errorf("headline %+v, want a MISS naming R=6000 N=100 and its seed", h[0])
	}
	var b strings.Builder
	r.scaleSection(func(f string, a ...any) { fmt.Fprintf(&b, f, a...) })
	if !strings.Contains(b.String(), "| 6,000 | 100 | 4 | sliding log | 3 | 97.0% (99.3%) |") {
		t.Errorf("section without the row:\n%s", b.String())
	}
}
