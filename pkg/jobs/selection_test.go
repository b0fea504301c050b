package jobs

import (
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

func TestSelectionRoundTrip(t *testing.T) {
	for _, text := range []string{
		"status=succeeded",
		"status=",
		"status=failed reason=outcome_unknown since=7d",
		"status=succeeded prefix=holiday photos/2024 model-was=global_v0.2 radius-over=25.5 with-exif-only=true sample=100",
		"status=succeeded since=2026-11-01 until=2026-11-20 confidence-under=0.4",
	} {
		s, err := ParseSelection(text)
		if err != nil {
			t.Errorf("ParseSelection(%q): %v", text, err)
			continue
		}
		if got := s.String(); got != text {
			t.Errorf("ParseSelection(%q).String() = %q", text, got)
		}
	}
	s, err := ParseSelection("status=succeeded prefix=a b sample=3")
	if err != nil || s.Prefix != "a b" || s.Sample != 3 {
		t.Errorf("prefix with a space: %+v, %v", s, err)
	}
	for _, bad := range []string{"", "since=7d", "status=bogus", "status=succeeded sample=0", "status=succeeded since=soon",
		"status=succeeded radius-over=far", "status=succeeded sample=1 sample=2"} {
		if _, err := ParseSelection(bad); err == nil {
			t.Errorf("ParseSelection(%q) accepted it", bad)
		}
	}
}

func TestSelectionQueryResolvesAtCreation(t *testing.T) {
	created := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	s, _ := ParseSelection("status=succeeded since=2d prefix=p/")
	in := s.Query(created)
	if !in.Since.Equal(created.Add(-48*time.Hour)) || in.KeyPrefix != "p/" {
		t.Errorf("Query = %+v", in)
	}
	s, _ = ParseSelection("status=succeeded")
	if in := s.Query(created); !in.Since.Equal(created.Add(-30 * 24 * time.Hour)) {
		t.Errorf("no since: %v, want the 30 days geolocate reprocess defaults to", in.Since)
	}
}

func TestPlanRunSelectsLatestOutsideTheRun(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	far, near := 50.0, 5.0
	rec := func(key, run, status string, at time.Duration, radius *float64) ledger.Record {
		return ledger.Record{Bucket: "b", Key: key, VersionID: "v", Run: run, Status: status, UpdatedAt: t0.Add(at), RadiusKM: radius}
	}
	records := []ledger.Record{
		rec("a", "", ledger.StatusSucceeded, 0, &far),
		rec("a", "older", ledger.StatusSucceeded, time.Hour, &near), // latest: near, not selected
		rec("b", "", ledger.StatusSucceeded, 0, &far),
		rec("b", "r", ledger.StatusSucceeded, 2*time.Hour, &near), // done in the run
		rec("c", "", ledger.StatusSucceeded, 0, &far),
		rec("d", "", ledger.StatusFailed, 0, nil),
	}
	s, _ := ParseSelection("status=succeeded radius-over=10")
	plan := PlanRun(records, s, "r")
	if plan.Selected != 2 || plan.Done != 1 || len(plan.Todo) != 1 || plan.Todo[0].Key != "c" {
		t.Errorf("plan = %+v, want b (done) and c (to do) selected", plan)
	}
	s, _ = ParseSelection("status=succeeded sample=1")
	first := PlanRun(records, s, "r")
	if again := PlanRun(records, s, "r"); first.Selected != 1 || len(again.Todo) != len(first.Todo) ||
		len(first.Todo) == 1 && again.Todo[0].Key != first.Todo[0].Key {
		t.Errorf("a run's sample changed: %+v then %+v", first, again)
	}
}
