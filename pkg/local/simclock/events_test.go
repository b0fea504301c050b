package simclock_test

import (
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
)

// TestEventsTakeTheEarliestThenTheFirstAdded: equal times keep the order
// they were added in, whatever the heap does, so a seeded run repeats.
func TestEventsTakeTheEarliestThenTheFirstAdded(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var q simclock.Events[string]
	for _, name := range []string{"b1", "a", "b2", "c", "b3", "b4"} {
		at := t0.Add(time.Second)
		switch name {
		case "a":
			at = t0
		case "c":
			at = t0.Add(2 * time.Second)
		}
		q.Push(at, name)
	}
	if q.Next() != t0 {
		t.Fatalf("next at %v, want %v", q.Next(), t0)
	}
	var got []string
	for q.Len() > 0 {
		_, v := q.Pop()
		got = append(got, v)
	}
	want := []string{"a", "b1", "b2", "b3", "b4", "c"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}
