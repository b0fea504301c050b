package predictor

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/simclock"

	"github.com/geolocate-aws/geolocate/pkg/pacer"
)

// The client's retries take a token from the instance's limiter like any
// first attempt, so several instances' retries cannot bunch up.
func TestRetriesArePacedByTheInstanceLimiter(t *testing.T) {
	h := &Handler{deps: Deps{Pacer: pacer.NewInstance(1.0 / 60)}, // one an hour
		cfg:  Config{MaxServerDelay: DefaultMaxServerDelay},
		opts: Options{Clock: time.Now, Sleep: pacer.Sleep, MaxSlotWait: DefaultMaxSlotWait}}
	inv := &invocation{h: h, start: time.Now()}
	ctx := context.Background()

	start := time.Now()
	if err := inv.paceRetry(ctx, &object{}, 20*time.Millisecond); err != nil {
		t.Fatalf("first retry: %v (the burst token is free)", err)
	}
	if waited := time.Since(start); waited < 20*time.Millisecond {
		t.Errorf("waited %v, want at least the client's backoff", waited)
	}

	// The next token is an hour away: a retry must not jump the queue, nor
	// wait for it here: it stops with the token held, to return the message
	// until then.
	err := inv.paceRetry(ctx, &object{}, time.Millisecond)
	var ru *returnUntil
	if !errors.As(err, &ru) || !errors.Is(err, errRateWait) {
		t.Fatalf("err = %v, want a returnUntil", err)
	}
	if wait := time.Until(ru.slot); !ru.at.Equal(ru.slot) || wait < 59*time.Minute || wait > time.Hour {
		t.Errorf("returned until %v holding %v, want the token an hour away", ru.at, ru.slot)
	}
}

// A 429 moves the shared schedule: another instance (its own handler on the
// same table) does not call until the service's retry time, where an
// instance pacing alone calls and is refused too.
func TestA429HoldsBackEveryInstanceWhenPacingIsShared(t *testing.T) {
	for _, tt := range []struct {
		pacing    string
		wantCalls int
		wantCode  string
	}{
		{PacingShared, 2, CodeRateWait},
		{PacingInstance, 3, CodeRateLimited},
	} {
		t.Run(tt.pacing, func(t *testing.T) {
			// One call per two minutes: the second is refused with a retry
			// delay longer than the invocation has left.
			e := newTestEnv(t, func(c *Config) { c.Pacing = tt.pacing }, geosim.WithRateLimit(0.5, 1))
			first, second, third := e.put("first.jpg", testJPEG(t, 1)), e.put("second.jpg", testJPEG(t, 2)), e.put("third.jpg", testJPEG(t, 3))
			if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", first))); len(failed) != 0 {
				t.Fatalf("first upload: failures %v", failed)
			}
			if failed := e.invokeSQS(sqsBatch(uploadMessage("m2", second))); !slices.Equal(failed, []string{"m2"}) {
				t.Fatalf("second upload: failures %v, want [m2] (refused with 429)", failed)
			}
			e.h = e.newHandler(e.cfg) // another instance
			if failed := e.invokeSQS(sqsBatch(uploadMessage("m3", third))); !slices.Equal(failed, []string{"m3"}) {
				t.Fatalf("third upload: failures %v, want [m3]", failed)
			}
			if got := len(e.predictCalls()); got != tt.wantCalls {
				t.Errorf("%d prediction calls, want %d", got, tt.wantCalls)
			}
			if rec := e.record(third); rec == nil || rec.Status != ledger.StatusWaiting || rec.ErrorCode != tt.wantCode {
				t.Errorf("third upload's record = %+v, want waiting with %s", rec, tt.wantCode)
			}
		})
	}
}

// TestSlotWaitsRunOnTheHandlersClock: the wait for a call slot is read and
// slept on the handler's clock, the same one its pacer reads, so a fake
// clock covers it: the service (on that clock too) sees the calls a slot
// apart though no real time passed.
func TestSlotWaitsRunOnTheHandlersClock(t *testing.T) {
	clk := simclock.New(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
	e := newTestEnv(t, func(c *Config) { c.RatePerMinute = 120 }, geosim.WithClock(clk.Now))
	e.useFakeClock(clk)
	e.h.opts.Parallelism = 1
	first, second := e.put("first.jpg", testJPEG(t, 1)), e.put("second.jpg", testJPEG(t, 2))
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", first), uploadMessage("m2", second))); len(failed) != 0 {
		t.Fatalf("failures %v", failed)
	}
	calls := e.predictCalls()
	if len(calls) != 2 {
		t.Fatalf("%d calls, want 2", len(calls))
	}
	spacing := calls[1].Time.Sub(calls[0].Time)
	// A slot is 500 ms, plus the pacer's window margin's share (4.2 ms).
	if want := 500 * time.Millisecond; spacing < want || spacing > want+pacer.DefaultGuard {
		t.Errorf("calls %v apart on the handler's clock, want a slot (%v) apart", spacing, want)
	}
}
