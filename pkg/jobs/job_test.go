package jobs

import (
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/pacer"
)

func TestRemainingAndETA(t *testing.T) {
	now := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	j := Job{State: StateRunning, Listed: 1000, Done: 300, Failed: 50, Skipped: 50, FeedRate: 30, Spec: Spec{RatePerMinute: 60}}
	if got := j.Remaining(); got != 600 {
		t.Errorf("Remaining = %d, want 600", got)
	}
	if got := j.ETA(now); !got.Equal(now.Add(20 * time.Minute)) {
		t.Errorf("ETA = %v, want 20 minutes on", got)
	}
	j.FeedRate = 0 // not fed yet: at Rate of the stack's
	if got, want := j.ETA(now), now.Add(time.Duration(600/Rate(60)*float64(time.Minute))); got.Sub(want).Abs() > time.Second {
		t.Errorf("ETA before feeding = %v, want %v", got, want)
	}
	j.Done = 2000 // redeliveries ended twice
	if got := j.Remaining(); got != 0 {
		t.Errorf("Remaining below zero: %d", got)
	}
	j.State = StatePaused
	if got := j.ETA(now); !got.IsZero() {
		t.Errorf("a paused job has an ETA: %v", got)
	}
	j.State, j.Updated = StateDone, now.Add(-time.Hour)
	if got := j.ETA(now); !got.Equal(j.Updated) {
		t.Errorf("a done job's ETA %v, want its end %v", got, j.Updated)
	}
}

func TestNewIDIsValid(t *testing.T) {
	now := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	for range 50 {
		id, err := newID(now)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(id, "j-20261202-") || ValidateID(id) != nil {
			t.Fatalf("id %q: %v", id, ValidateID(id))
		}
		seen[id] = true
	}
	if len(seen) < 50 {
		t.Errorf("%d distinct ids of 50", len(seen))
	}
	for _, bad := range []string{"", "j-2026120-abcdef", "j-20261202-ABCDEF", "x-20261202-abcdef", "j-20261202-abcde1"} {
		if ValidateID(bad) == nil {
			t.Errorf("ValidateID(%q) accepted it", bad)
		}
	}
}

func TestRateLeavesRoomForUploads(t *testing.T) {
	for _, c := range []struct {
		rate, share float64
	}{{30, SlowShare}, {60, SlowShare}, {120, BusyShare}, {600, BusyShare}} {
		pr := pacer.Rate(c.rate)
		if got := Rate(c.rate); got != c.share*pr {
			t.Errorf("Rate(%v) = %v, want %v of %v", c.rate, got, c.share, pr)
		}
		if got := Rate(c.rate, 5); got != c.share*pr-5 {
			t.Errorf("Rate(%v, 5 uploads) = %v, want %v", c.rate, got, c.share*pr-5)
		}
		if got := Rate(c.rate, 1e6); got != minShare*pr {
			t.Errorf("Rate(%v, a flood of uploads) = %v, want the floor %v", c.rate, got, minShare*pr)
		}
	}
}

func TestSpecCheck(t *testing.T) {
	good := []Spec{
		{Kind: KindBackfill, Bucket: "b"},
		{Kind: KindBackfill, Bucket: "b", Prefix: "p/", Requeue: true},
		{Kind: KindReprocess, Run: "r", Selection: "status=succeeded", Price: 1},
	}
	for _, s := range good {
		if err := s.Check(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
	bad := []Spec{
		{Kind: "copy", Bucket: "b"},
		{Kind: KindBackfill},
		{Kind: KindBackfill, Bucket: "b", Run: "r"},
		{Kind: KindReprocess, Selection: "status=succeeded"},
		{Kind: KindReprocess, Run: "r", Selection: "since=7d"},
		{Kind: KindReprocess, Run: "r", Selection: "status=succeeded", Requeue: true},
	}
	for _, s := range bad {
		if s.Check() == nil {
			t.Errorf("%+v accepted", s)
		}
	}
}
