package pacer

import (
	"context"
	"errors"
	"math"
	"time"
)

// ErrNoSlot is returned by Reserve when no slot is free within the time the
// caller has: the work goes back untouched, and no slot is taken.
var ErrNoSlot = errors.New("pacer: no call slot free in time")

// Pacer grants call slots. Reserve takes the next free slot that starts
// within the given time from now (Unbounded: any) and returns how long until
// it starts; the caller waits that long and then calls. Durations keep the
// pacer's clock (which may be skewed, or simulated) out of the caller's.
// Throttled reports a 429 and the delay the service asked for. Valid tells
// whether a slot taken earlier and held since may still be used.
type Pacer interface {
	Reserve(ctx context.Context, within time.Duration) (time.Duration, error)
	Throttled(ctx context.Context, retryAfter time.Duration)
	Valid(ctx context.Context, slot time.Time) (bool, error)
}

// Unbounded is the within of a caller with no deadline.
const Unbounded = time.Duration(math.MaxInt64)

// Sleep waits d, or until ctx is done.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
