package predictor

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
)

// TestHeldMessagesComeBackBeforeTheirSlots: a backlog waits in the queue,
// not in the invocation, with every delivery taking a while after the
// message turns visible (a poll, a busy instance, an invoke). A message
// whose slot is further than MaxSlotWait away goes back to the queue
// holding it, and a held message turns visible HeldSlotLead before its slot,
// rounded down to whole seconds, so each comes back in time to call on its
// slot: none is given up (two receives at most), none refused, and no
// invocation waits more than MaxSlotWait plus the lead. Against a strict
// token bucket (burst 1) a call made late would crowd the next one: calls
// are a slot apart. Hidden until the slot itself (rounded down), a message
// whose slot's fraction of a second is under the delivery comes back late.
func TestHeldMessagesComeBackBeforeTheirSlots(t *testing.T) {
	for _, tt := range []struct {
		name     string
		delivery time.Duration
		limiter  func(*geosim.Config)
		pacer    func(*pacer.Options)
	}{
		{"strict token bucket, at once", 0, geosim.WithRateLimit(30, 1), func(*pacer.Options) {}},
		// The local rig measures 50 to 150 ms when an instance is free.
		{"sliding log", 150 * time.Millisecond, geosim.WithSlidingLog(30), func(*pacer.Options) {}},
		// Up to 430 ms measured at 120 a minute against busy instances. A
		// token bucket counts no whole seconds: the pacer does not aim.
		{"strict token bucket", 400 * time.Millisecond, geosim.WithRateLimit(30, 1),
			func(o *pacer.Options) { o.IgnoreServiceClock = true }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := simclock.New(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
			e := newTestEnv(t, func(c *Config) { c.RatePerMinute = 30 }, geosim.WithClock(clk.Now), tt.limiter)
			e.pacerOpts = append(e.pacerOpts, tt.pacer)
			e.useQueue(clk)
			ups := e.enqueue("lead", 10, 700)
			run := e.runQueue(clk.Now().Add(time.Hour), 5, func(time.Time) { clk.Advance(tt.delivery) })

			e.assertSucceeded(ups)
			if most := DefaultMaxSlotWait + DefaultHeldSlotLead; run.longest > most {
				t.Errorf("an invocation lasted %v on the handler's clock, want at most %v", run.longest, most)
			}
			for id, n := range run.receives {
				if n > 2 {
					t.Errorf("message %s received %d times, want at most 2: a held slot was given up", id, n)
				}
			}
			calls := e.predictCalls()
			if len(calls) != len(ups) {
				t.Fatalf("%d calls, want %d", len(calls), len(ups))
			}
			for i, c := range calls {
				if c.Status != http.StatusOK {
					t.Errorf("call %d answered %d", i, c.Status)
				}
				if i > 0 && c.Time.Sub(calls[i-1].Time) < 2*time.Second {
					t.Errorf("calls %d and %d %v apart, want a slot (2 s)", i-1, i, c.Time.Sub(calls[i-1].Time))
				}
			}
			if n := len(e.queue.DeadLetters()); n != 0 {
				t.Errorf("%d dead letters", n)
			}
			t.Logf("%d invocations for %d uploads, the longest %v", run.invocations, len(ups), run.longest)
		})
	}
}

// heldPacer grants every new slot in an hour and tells a late allowance
// when tells is set.
type heldPacer struct {
	allowance time.Duration
	tells     bool
}

func (heldPacer) Reserve(context.Context, time.Duration) (time.Duration, error) {
	return time.Hour, nil
}
func (heldPacer) Throttled(context.Context, time.Duration)       {}
func (heldPacer) Valid(context.Context, time.Time) (bool, error) { return true, nil }
func (p heldPacer) LateAllowance() (time.Duration, bool)         { return p.allowance, p.tells }

// TestALateHeldSlotIsUsedOnlyWithinWhatThePacerAllows: a message that comes
// back after its held slot calls in it when it is at most HeldSlotLateness
// late and the pacer tells no tighter bound (the sliding log's case); when
// the pacer tells one (a strict token bucket: the room above the floor,
// none at rest), a call later than that would crowd the next slot's, and
// the slot is given up for a new one.
func TestALateHeldSlotIsUsedOnlyWithinWhatThePacerAllows(t *testing.T) {
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name     string
		pacer    heldPacer
		late     time.Duration
		wantHeld bool
	}{
		{"no bound told, within the lateness", heldPacer{}, 200 * time.Millisecond, true},
		{"no bound told, beyond the lateness", heldPacer{}, 300 * time.Millisecond, false},
		{"none allowed, on time", heldPacer{tells: true}, 0, true},
		{"none allowed, a millisecond late", heldPacer{tells: true}, time.Millisecond, false},
		{"a widening's room, within it", heldPacer{allowance: 30 * time.Millisecond, tells: true}, 20 * time.Millisecond, true},
		{"a bound above the lateness", heldPacer{allowance: time.Second, tells: true}, 300 * time.Millisecond, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := &Handler{deps: Deps{Pacer: tt.pacer}, opts: Options{Clock: func() time.Time { return now },
				MaxSlotWait: DefaultMaxSlotWait, HeldSlotLead: DefaultHeldSlotLead, HeldSlotLateness: DefaultHeldSlotLateness}}
			inv := &invocation{h: h, start: now}
			held := now.Add(-tt.late)
			claim := &ledger.Claim{Record: &ledger.Record{SlotAt: held}}
			slot, isHeld, err := inv.slotFor(t.Context(), &object{logger: slog.New(slog.DiscardHandler)}, claim)
			if err != nil {
				t.Fatal(err)
			}
			if isHeld != tt.wantHeld || slot.Equal(held) != tt.wantHeld {
				t.Errorf("slot %v (held %v), want the held slot %v: %v", slot.Sub(now), isHeld, -tt.late, tt.wantHeld)
			}
		})
	}
}

// TestAHeldSlotIsWaitedForUpToTheLead: a held message is made visible
// HeldSlotLead before its slot at the least, plus up to a second of
// rounding, and then waits for it: up to MaxSlotWait plus the lead, where
// a new slot is waited for only MaxSlotWait. It is hidden until the lead
// before the slot.
func TestAHeldSlotIsWaitedForUpToTheLead(t *testing.T) {
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	h := &Handler{opts: Options{Clock: func() time.Time { return now },
		MaxSlotWait: DefaultMaxSlotWait, HeldSlotLead: DefaultHeldSlotLead}}
	inv := &invocation{h: h, start: now}
	obj := &object{}
	in := now.Add(DefaultMaxSlotWait + DefaultHeldSlotLead)
	if !inv.soonEnough(obj, in, true) {
		t.Errorf("a held slot %v away not waited for", in.Sub(now))
	}
	if inv.soonEnough(obj, in, false) {
		t.Errorf("a new slot %v away waited for, want at most %v", in.Sub(now), DefaultMaxSlotWait)
	}
	if inv.soonEnough(obj, in.Add(time.Millisecond), true) {
		t.Errorf("a held slot %v away waited for", in.Add(time.Millisecond).Sub(now))
	}
	for _, away := range []time.Duration{3200 * time.Millisecond, 1200 * time.Millisecond, 300 * time.Millisecond} {
		o := inv.heldFor(retryRateWait, now.Add(away))
		if want := max(away-DefaultHeldSlotLead, 0); !o.delayed || o.delay != want {
			t.Errorf("slot %v away: hidden for %v (delayed %v), want %v", away, o.delay, o.delayed, want)
		}
	}
}
