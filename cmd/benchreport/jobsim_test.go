package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/jobsim"
)

// The jobsim stage's rows reach the report: one headline row per run with
// its verdict, and the section's table.
func TestTheJobsimStageReports(t *testing.T) {
	rows, err := jobsim.RunAll([]jobsim.Config{{Objects: 2000, Rate: 600, Concurrency: 20, Seed: 1, Baseline: time.Hour}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &results{Jobsim: &jobsimResult{Rows: rows}}
	head := r.jobsimRows()
	if len(head) != 1 || !strings.Contains(head[0].figure, "2000 objects at 600/min") {
		t.Fatalf("headline rows %+v", head)
	}
	if ok, _ := rows[0].Met(); head[0].verdict != verdict(ok) {
		t.Errorf("verdict %s, the run's Met says %v", head[0].verdict, ok)
	}
	var b strings.Builder
	r.jobsimSection(func(f string, args ...any) { fmt.Fprintf(&b, f, args...) })
	if !strings.Contains(b.String(), "## Jobs at a million objects (issue 47)") || !strings.Contains(b.String(), "| 2,000 | 600 | 20 |") {
		t.Errorf("section:\n%s", b.String())
	}
}
