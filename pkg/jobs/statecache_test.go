package jobs

import (
	"context"
	"testing"
	"time"
)

type countingReader struct {
	states map[string]State
	reads  int
}

func (r *countingReader) State(_ context.Context, id string) (State, error) {
	r.reads++
	st, ok := r.states[id]
	if !ok {
		return "", ErrNotFound
	}
	return st, nil
}

func TestStateCacheReadsOncePerTTL(t *testing.T) {
	now := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	r := &countingReader{states: map[string]State{"j": StateRunning}}
	c := NewStateCache(r, 30*time.Second, func() time.Time { return now })
	ctx := context.Background()
	for range 5 {
		if st, err := c.State(ctx, "j"); err != nil || st != StateRunning {
			t.Fatal(st, err)
		}
	}
	if r.reads != 1 {
		t.Errorf("%d reads within the TTL, want 1", r.reads)
	}
	r.states["j"] = StatePaused
	now = now.Add(30 * time.Second)
	if st, _ := c.State(ctx, "j"); st != StatePaused || r.reads != 2 {
		t.Errorf("after the TTL: %s with %d reads, want paused read again", st, r.reads)
	}
	if st, err := c.State(ctx, "gone"); err != nil || st != StateCancelled {
		t.Errorf("a job that is gone reads %s, %v; want cancelled", st, err)
	}
}
