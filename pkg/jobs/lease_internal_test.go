package jobs

import (
	"context"
	"testing"
	"time"
)

// A run's lease outlasts the run: its budget and margin without a
// deadline, its Lambda deadline and the margin with one further away.
func TestLeaseOutlastsTheRun(t *testing.T) {
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	if got, want := leaseUntil(context.Background(), now, DefaultRunBudget), now.Add(DefaultRunBudget+leaseMargin); !got.Equal(want) {
		t.Errorf("no deadline: lease until %v, want %v", got, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if got := leaseUntil(ctx, now, DefaultRunBudget); got.Before(now.Add(119*time.Second + leaseMargin)) {
		t.Errorf("a 120 s deadline: lease until %v, want past %v", got, now.Add(120*time.Second+leaseMargin))
	}
	short, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	if got, want := leaseUntil(short, now, DefaultRunBudget), now.Add(DefaultRunBudget+leaseMargin); !got.Equal(want) {
		t.Errorf("a deadline before the budget: lease until %v, want %v", got, want)
	}
}
