package simclock

import (
	"sync"
	"testing"
	"time"
)

func TestAdvanceFromManyGoroutines(t *testing.T) {
	start := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	c := New(start)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { c.Advance(time.Minute); _ = c.Now() })
	}
	wg.Wait()
	if got := c.Now(); !got.Equal(start.Add(10 * time.Minute)) {
		t.Fatalf("Now = %s, want %s", got, start.Add(10*time.Minute))
	}
}
