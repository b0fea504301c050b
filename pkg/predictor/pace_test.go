package predictor

import (
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// The client's retries take a token from the instance's limiter like any
// first attempt, so several instances' retries cannot bunch up.
func TestRetriesArePacedByTheInstanceLimiter(t *testing.T) {
	h := &Handler{limiter: rate.NewLimiter(rate.Every(time.Hour), 1), opts: Options{MinCallTime: 0}}
	inv := &invocation{h: h}
	ctx := context.Background()

	start := time.Now()
	if err := inv.paceRetry(ctx, 20*time.Millisecond); err != nil {
		t.Fatalf("first retry: %v (the burst token is free)", err)
	}
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Errorf("waited %v, want at least the client's backoff", waited)
	}

	// The next token is an hour away: a retry must not jump the queue; it
	// gives up at the deadline instead.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := inv.paceRetry(short, time.Millisecond); !errors.Is(err, errRateWait) {
		t.Errorf("err = %v, want errRateWait", err)
	}
}
