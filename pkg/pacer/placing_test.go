package pacer

import (
	"math/rand/v2"
	"testing"
)

// stampLog is the service's sliding log of whole-second stamps: a call is
// refused when limit stamps greater than its own minus window are logged.
type stampLog struct {
	limit, window int64
	log           []int64
}

func (l *stampLog) call(stamp int64) bool {
	for len(l.log) > 0 && l.log[0] <= stamp-l.window {
		l.log = l.log[1:]
	}
	if int64(len(l.log)) >= l.limit {
		return false
	}
	l.log = append(l.log, stamp)
	return true
}

// placingRun places calls slots of a schedule at perMinute the way Reserve
// does, on the service's clock (offset off), each with an estimate of a
// random width up to DefaultPhaseTolerance, granted idle or ahead at
// random, and counted with an error drawn at the edges of its budget
// (early, late, or held late) as often as inside it. follow is the rule
// for the next slot. It returns the calls refused by the sliding log,
// the calls counted outside the seconds placing allows, and the slots
// moved.
func placingRun(seed uint64, perMinute, calls int64, follow func(placing, int64) int64) (refused, uncertain, moved int) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	interval := ceilDiv(60*second, perMinute)
	svc := stampLog{limit: perMinute, window: 60}
	off := rng.Int64N(4*second) - 2*second
	next, backlog := int64(0), 0
	for range calls {
		// Backlogs of up to 2R calls, each granted the next slot, between
		// idle arrivals, each granted at once: up to 3 s after the next
		// slot, often just after it (uploads at 29.5/min).
		idle := backlog == 0
		x := next
		if idle {
			backlog = rng.IntN(int(2*perMinute) + 1)
			x = next + rng.Int64N([]int64{1, 50_000, 3 * second}[rng.IntN(3)])
		} else {
			backlog--
		}
		a := aim{phase: phase{known: true, hi: 150_000 + rng.Int64N(int64(DefaultPhaseTolerance/1000)-150_000+1)}, exact: true}
		pl := a.placing(off, interval, idle)
		z := pl.placed(x) + off
		if z != x+off {
			moved++
		}
		half := (a.phase.width() + 1) / 2
		late := aimLate
		if !idle {
			late += AimedHeldLateness.Microseconds()
		}
		var e int64
		switch rng.IntN(4) {
		case 0:
			e = -(half + aimEarly)
		case 1:
			e = half + late
		default:
			e = rng.Int64N(2*half+aimEarly+late+1) - half - aimEarly
		}
		// The stamp is certain, or, for a slot past its window sent at
		// the next tick, between the slot's second and the one follow
		// starts.
		stamp := floorDiv(z+e, second)
		if pl.floorRule && (stamp < floorDiv(x+off, second) || stamp > floorDiv(follow(pl, x)+off, second)) ||
			!pl.floorRule && stamp != floorDiv(z, second) {
			uncertain++
		}
		if !svc.call(stamp) {
			refused++
		}
		next = follow(pl, x) + interval
	}
	return refused, uncertain, moved
}

// Property: whatever mix of idle and backlogged slots, estimate widths and
// errors within their budgets, every stamp is the placed slot's and the
// sliding log of whole seconds never refuses, at rates that divide a minute
// into whole seconds (windows) and rates that do not (a fixed aim point).
func TestPlacedSlotsAreNeverRefused(t *testing.T) {
	for _, perMinute := range []int64{30, 20, 60, 25, 7} {
		for seed := range uint64(20) {
			refused, uncertain, moved := placingRun(seed, perMinute, 2000, placing.follow)
			if refused != 0 || uncertain != 0 {
				t.Fatalf("R=%d seed %d: %d of 2000 calls refused, %d stamps uncertain; want none", perMinute, seed, refused, uncertain)
			}
			if interval := ceilDiv(60*second, perMinute); interval%second == 0 && (moved == 0 || moved == 2000) {
				t.Fatalf("R=%d seed %d: %d of 2000 slots moved: the run does not mix moved and unmoved slots", perMinute, seed, moved)
			}
		}
	}
}

// The rule that the next slot follows the start of a moved slot's second is
// what keeps the log open: following the slot alone, a backlogged slot
// moved past its second and an idle slot left alone R slots later would be
// counted 59 seconds apart.
func TestFollowingTheUnplacedSlotAloneIsRefused(t *testing.T) {
	refused := 0
	for seed := range uint64(20) {
		r, _, _ := placingRun(seed, 30, 2000, func(_ placing, x int64) int64 { return x })
		refused += r
	}
	if refused == 0 {
		t.Fatal("no call refused with the next slot following the unplaced slot alone: the property test cannot tell the rules apart")
	}
	t.Logf("refused following the unplaced slot alone: %d of 40000", refused)
}

// A backlog at a rate dividing the minute runs at exactly R: once a slot
// has moved to a window's start, the next ones stay in their windows.
func TestABacklogLosesNoRateToPlacing(t *testing.T) {
	for _, perMinute := range []int64{30, 25} {
		interval := ceilDiv(60*second, perMinute)
		a := aim{phase: phase{known: true, hi: 250_000}, exact: true}
		pl := a.placing(123_456, interval, false)
		x := int64(700_000) // past the window: the first slot moves
		var first, last int64
		for i := range 301 {
			last = pl.placed(x)
			if i == 0 {
				first = pl.follow(x) + interval
				first = pl.placed(first) // the first slot placed in a window
			}
			x = pl.follow(x) + interval
		}
		// At a rate not dividing the minute, slots are placed at the fixed
		// aim point: up to a second off, never accumulating.
		slack := int64(0)
		if interval%second != 0 {
			slack = second
		}
		if got, want := last-first, 299*interval; got < want-slack || got > want+slack {
			t.Errorf("R=%d: 300 placed slots span %d µs, want 299 spacings, %d (give or take %d)", perMinute, got, want, slack)
		}
	}
}

func TestIdleSlotsGetTheWiderWindow(t *testing.T) {
	a := aim{phase: phase{known: true, hi: 220_000}, exact: true}
	idle, held := a.placing(0, 2*second, true), a.placing(0, 2*second, false)
	// lo: half the width and aimEarly; hi: a second less half the width
	// and the lateness allowed for, less a microsecond.
	if idle.lo != 260_000 || idle.hi != 689_999 || held.lo != 260_000 || held.hi != 439_999 {
		t.Errorf("windows idle [%d, %d], held [%d, %d]; want [260000, 689999] and [260000, 439999]", idle.lo, idle.hi, held.lo, held.hi)
	}
	for _, tc := range []struct{ at, want int64 }{
		{5*second + 100_000, 5*second + 260_000}, // early in its second: to the window's start
		{5*second + 500_000, 5*second + 500_000}, // inside: at once
		{5*second + 689_999, 5*second + 689_999},
		{5*second + 690_000, 6 * second}, // past it: the next second's tick
	} {
		if got := idle.place(tc.at); got != tc.want {
			t.Errorf("idle place(%d) = %d, want %d", tc.at, got, tc.want)
		}
	}
	// An estimate as wide as the tolerance leaves no held window: the
	// fixed aim point, as before windows.
	wide := aim{phase: phase{known: true, hi: int64(DefaultPhaseTolerance / 1000)}, exact: true}.placing(0, 2*second, false)
	if wide.lo != aimInSecond || wide.hi != aimInSecond {
		t.Errorf("held window at the tolerance [%d, %d], want the point %d", wide.lo, wide.hi, aimInSecond)
	}
}

// stretch bounds the slots over which follow is what it is at the hint.
func TestStretchBoundsWhereFollowHolds(t *testing.T) {
	pl := aim{phase: phase{known: true, hi: 220_000}, exact: true}.placing(-1_700_000, 2*second, false)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		x := rng.Int64N(20 * second)
		lo, hi, at, moved := pl.stretch(x)
		if x < lo || x > hi {
			t.Fatalf("stretch(%d) = [%d, %d] does not hold it", x, lo, hi)
		}
		for _, y := range []int64{lo, hi, lo + rng.Int64N(hi-lo+1)} {
			want := y
			if moved {
				want = at
			}
			if got := pl.follow(y); got != want {
				t.Fatalf("follow(%d) = %d in the stretch of %d (moved %v), want %d", y, got, x, moved, want)
			}
		}
	}
}
