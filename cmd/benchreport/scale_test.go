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
	row := func(rate float64, n int, lim geosim.Limiter, share float64, refused int) *pacesim.Result {
		return &pacesim.Result{Config: pacesim.Config{Rate: rate, Instances: n, Workers: 4, Limiter: lim}, Share: share, Refused: refused}
	}
	r := &results{Scale: &scaleResult{Rows: []*pacesim.Result{
		row(600, 10, geosim.LimiterSlidingLog, 0.992, 0),
		row(600, 10, geosim.LimiterTokenBucket, 0.80, 40),
	}}}
	h := r.scaleHeadline()
	if len(h) != 1 || h[0].verdict != "PASS" || !strings.Contains(h[0].measured, "largest rate met 600/min") {
		t.Fatalf("headline %+v, want a PASS up to 600/min (the strict row is information)", h)
	}
	r.Scale.Rows = append(r.Scale.Rows, row(6000, 100, geosim.LimiterSlidingLog, 0.97, 0))
	h = r.scaleHeadline()
	if h[0].verdict != "MISS" || !strings.Contains(h[0].why, "R=6000 N=100: 97.0% of R") {
		t.Errorf("headline %+v, want a MISS naming R=6000 N=100", h[0])
	}
	var b strings.Builder
	r.scaleSection(func(f string, a ...any) { fmt.Fprintf(&b, f, a...) })
	if !strings.Contains(b.String(), "| 6,000 | 100 | sliding log | 97.0% |") {
		t.Errorf("section without the row:\n%s", b.String())
	}
}
