package pacer

import (
	"net/http"
	"time"
)

// The service counts each call in the whole second of its own clock in
// which the call reaches it (see DefaultWindowMargin). Where those seconds
// begin on the instances' clocks is the phase: its clock's offset from
// theirs, modulo a second. Known, a call can be aimed well inside one
// of its seconds, so that the spread of arrival times no longer moves it
// into the next one, and R slots fit in a window of exactly 60 seconds.
//
// The estimate is an interval [lo, hi] bounding the offset, the service's
// clock minus the instance's. Every answer bounds it: its Date header D
// (whole seconds, truncated) was read off the service's clock at some
// instant between the request's sending (sent) and the answer's arrival
// (received), so D <= received + offset < D + 1 s, that is
//
//	D - received <= offset < D + 1 s - sent.
//
// One answer bounds it to a second plus its round trip; answers whose
// ticks fall at other places within their round trips narrow it, and the
// intersection of all of them is the estimate. While it is wider than
// PhaseTolerance, slots are nudged (by at most maxProbeDelay, later only)
// so that the tick the estimate's middle predicts falls in the middle of
// the round trip: the Date then tells on which side the true tick lies,
// halving the interval, down to about one round trip.
//
// The estimate is shared through the schedule item, so every instance
// aims with what any of them learnt. An answer that contradicts it (an
// empty intersection: the service's clock jumped) replaces it; a 429
// removes it (the aim was wrong), and the margin comes back until it is
// learnt again. A Date that does not parse is ignored.

// Attribute names of the phase estimate in the schedule item. Additive:
// an item without them is a schedule whose phase is unknown.
const (
	attrPhaseLow  = "svc_off_lo_us" // lower bound of the service's clock minus ours
	attrPhaseHigh = "svc_off_hi_us" // upper bound
	// attrPhaseReset is when the estimate was last removed (a 429):
	// knowledge an instance gathered before it is dropped, not written back.
	attrPhaseReset = "svc_off_reset_us"
	// attrAim is the offset every instance aims with (see aim.offset): one
	// value for all, so that aimed slots, spaced by the schedule on the
	// instances' clocks, are spaced alike on the service's.
	attrAim = "svc_aim_us"
)

// Defaults of the phase estimate.
const (
	// DefaultPhaseTolerance is the widest estimate aimed with: its middle
	// is then at most 200 ms from the truth, and a call aimed 350 ms into
	// a second (aimInSecond) still lands in it if no more than 150 ms
	// early or 450 ms late. An estimate narrows to about one round trip, so a
	// service answering slower than this keeps the margin.
	DefaultPhaseTolerance = 400 * time.Millisecond
	// DefaultAimHoldOff is how long after a 429 calls are not aimed: the
	// margin's 1.6% of the rate for 10 minutes costs less than a 429's
	// window.
	DefaultAimHoldOff = 10 * time.Minute
	// maxProbeDelay bounds how much a slot is delayed to probe the phase,
	// while it is unknown: less than half of the margin's second, so the
	// margin still absorbs the rest of the spread.
	maxProbeDelay = 400 * time.Millisecond
	second        = int64(time.Second / time.Microsecond)
	// maxRoundTrip bounds the round trip of an answer that is used: a
	// longer one, or a negative one, is a caller's mistake.
	maxRoundTrip = time.Minute
	// rttWeight is the weight of a new round trip in the running mean.
	rttWeight = 0.2
	// aimSlack is how far the shared aim may be from an instance's own
	// before it writes its own: a call aimed inside a second has
	// far more room than this, and rewriting costs a conditional write.
	aimSlack = int64(50 * time.Millisecond / time.Microsecond)
)

// phase is an estimate of the service's clock minus the instance's, in
// microseconds: lo <= offset <= hi. The zero value is unknown.
type phase struct {
	known  bool
	lo, hi int64
	// since is the clock time of the oldest answer it rests on: an estimate
	// older than the item's last reset is dropped.
	since int64
}

func (f phase) width() int64 { return f.hi - f.lo }

// mid is the estimate's middle.
func (f phase) mid() int64 { return f.lo + f.width()/2 }

// merge intersects two estimates; when they contradict each other, the
// service's clock has moved and the newer one (b) replaces a.
func (a phase) merge(b phase) (merged phase, contradicted bool) {
	switch {
	case !b.known:
		return a, false
	case !a.known:
		return b, false
	}
	lo, hi := max(a.lo, b.lo), min(a.hi, b.hi)
	if lo > hi {
		return b, true
	}
	return phase{known: true, lo: lo, hi: hi, since: min(a.since, b.since)}, false
}

// observation is the estimate one answer gives: its Date read between
// sent and received (instance clock, microseconds).
func observation(date time.Time, sent, received int64) phase {
	d := date.Unix() * second
	return phase{known: true, lo: d - received, hi: d + second - sent, since: received}
}

// Answered reports an answer of the service: its Date header and the time
// from sending the request to receiving the answer's headers, which ended
// now. It narrows the instance's estimate of the service's clock; the next
// slot taken shares it through the schedule item. Safe for concurrent use;
// never blocks on the table. A missing or unreadable Date, or a round trip
// outside [0, maxRoundTrip], is ignored (and counted: Stats.BadDates).
func (p *itemPacer) Answered(date string, roundTrip time.Duration) {
	if p.opts.IgnoreServiceClock {
		return
	}
	d, err := http.ParseTime(date)
	if err != nil || roundTrip < 0 || roundTrip > maxRoundTrip {
		p.badDates.Add(1)
		return
	}
	received := micros(p.opts.Clock())
	obs := observation(d, received-roundTrip.Microseconds(), received)
	p.mu.Lock()
	defer p.mu.Unlock()
	var contradicted bool
	p.local, contradicted = p.local.merge(obs)
	if contradicted {
		p.phaseResets.Add(1)
	}
	if p.rtt == 0 {
		p.rtt = roundTrip.Microseconds()
	} else {
		p.rtt += int64(rttWeight * float64(roundTrip.Microseconds()-p.rtt))
	}
}

// learnLocked merges the estimate an item holds into the instance's, dropping
// the instance's when the item was reset after it began. Holds p.mu.
func (p *itemPacer) learnLocked(st schedule) {
	if p.local.known && st.phaseReset > p.local.since {
		p.local = phase{}
	}
	if st.phase.known {
		// The item's estimate is no newer than the instance's own answers:
		// on a contradiction the instance's stands.
		if merged, contradicted := st.phase.merge(p.local); !contradicted {
			p.local = merged
		}
	}
}

// aim is the instance's view of the phase for one slot: the estimate,
// whether it is narrow enough to aim with, and the mean round trip.
type aim struct {
	phase phase
	exact bool
	rtt   int64
}

// aimFor is the view for a slot taken with the item st last seen. At more
// than 60 calls a minute several calls share each of the service's
// seconds, and aiming them all at its middle would send them at once: the
// pacer then neither probes nor aims, and keeps the margin.
//
// After a 429 removed the estimate, calls are not aimed again before
// AimHoldOff has passed: a service whose Date misleads (stale, or another
// machine's clock) would otherwise draw a 429, each costing a window, every
// few calls.
func (p *itemPacer) aimFor(st schedule, now int64) aim {
	if !p.opts.probes(p.aimedFloor) {
		return aim{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.learnLocked(st)
	a := aim{phase: p.local, rtt: p.rtt}
	a.exact = !p.opts.IgnoreServiceClock && a.phase.known && a.phase.width() <= p.opts.PhaseTolerance.Microseconds() &&
		(st.phaseReset == 0 || now-st.phaseReset >= p.opts.AimHoldOff.Microseconds())
	return a
}

// offset is the instance's own aim: a call sent at local time t is
// expected to be counted at t + offset on the service's clock, the
// estimate's middle. The estimate bounds the service's clock minus ours,
// whenever within a round trip the Date was read; the call is counted
// when the service has read its upload, which aimLate allows for after
// sending. So the count is within half the estimate's width of t + offset,
// plus the upload late: the placing window's budgets (see placing).
//
// Not the estimate's middle plus half a round trip: that is where the
// service dates its answer, and one that dates it when its work is done
// (the simulator, net/http's Date) counts the call that work earlier.
// Aimed there, calls of the model of issue 48 at 30 and 60 a minute came
// up to 300 ms before their aim, past aimEarly, into the second before
// (a 429 in 2 to 7 of 10 seeds; TestAnAnswerDatedAfterTheWorkStillAimsAtTheCount).
func (a aim) offset() int64 { return a.phase.mid() }

// An aimed call is counted at its predicted service time (local send time
// plus the shared offset) give or take its error: early by at most half the
// estimate's width (the truth lies within it) plus aimEarly, late by at most
// half the width plus aimLate, plus AimedHeldLateness for a slot that may be
// held across deliveries. Its whole-second stamp is CERTAIN when that whole
// span lies in one second: when its predicted time falls in the second's
// safe window [lo, hi] (see aim.placing). A slot before it is moved to its
// start; a slot inside is left alone, so an idle arrival in the window is
// granted at once.
//
// A slot past its second's window would wait for the next one's start;
// it is sent at the next second's tick instead, sooner: its stamp is then
// that second or the one before, and its answer's Date narrows the
// estimate (the tick falls within its round trip), which a call inside a
// window cannot, so the windows widen as the estimate narrows towards one
// round trip.
//
// Why R+1 calls still span 60 of the service's seconds. Let x_k be call k's
// slot before placing (service time), S_k its stamp, and I >= 60 s / R the
// spacing. Placing keeps floor(x_k) <= S_k <= H_k, where H_k is the start of
// the latest second the call can be counted in: the placed point's, or its
// tick's for a slot past its window (an error under a second either way
// keeps the stamp at or after floor(x_k)). Reserve writes the next slot at
// least I after both x_k and H_k (placing.follow), so x_{k+1} >= x_k + I
// and x_{k+1} >= H_k + I. Then x_{k+R} >= H_k + R·I >= H_k + 60 s, and
// S_{k+R} >= floor(x_{k+R}) >= H_k + 60 >= S_k + 60: the sliding log has
// dropped call k when call k+R comes, whatever window each call was placed
// with (idle or held) and whether it was moved. The rule costs rate only
// when a slot moves past its second's end: with I a whole number of
// seconds the next slots then start at a tick and are placed at the
// window's start, and stay in it, so a backlog runs at exactly R. With I not
// a whole number of seconds (R not dividing 60) every few slots would move
// and lose up to a second each, so there every slot is placed at the fixed
// aimInSecond and the next follows the slot before placing (x_{k+1} >=
// x_k + I): placing is then monotone and periodic in whole seconds, so
// x_{k+R} >= x_k + 60 s gives S_{k+R} >= S_k + 60 directly. The two rules
// never mix: the choice rests on the configured rate alone.

// Error budgets of an aimed call, beyond half the estimate's width. With
// an estimate at most DefaultPhaseTolerance wide they leave a held slot's
// window at least the point aimInSecond, and keep a call sent at a tick
// less than a second from it either way.
const (
	// aimEarly covers the shared offset being up to aimSlack off the
	// instance's own and the instances' clocks' skew (the round trip no
	// longer enters the aim, see aim.offset).
	aimEarly = 150 * int64(time.Millisecond/time.Microsecond)
	// aimLate covers the timers' overshoot, the call's preparation and its
	// upload, and the same offset and skew errors.
	aimLate = 200 * int64(time.Millisecond/time.Microsecond)
	// AimedHeldLateness is how late a held slot's call may be sent (the
	// predictor's HeldSlotLateness, which must not exceed it): a slot
	// granted ahead of now may be held across deliveries, one granted for
	// now is called at once.
	AimedHeldLateness = 250 * time.Millisecond
)

// aimInSecond is where in a second of the service's clock calls are placed
// when no window fits (the widest estimate aimed with, or a rate that is not
// a whole number of seconds per call): the start of a held slot's window
// at DefaultPhaseTolerance, leaving 150 ms early and 450 ms late.
const aimInSecond = int64(DefaultPhaseTolerance/time.Microsecond)/2 + aimEarly

// placing is how one aimed slot is placed on the service's clock (see
// place): the window [lo, hi] of its seconds, and the shared offset off
// (service time = local time + off).
type placing struct {
	lo, hi, off int64
	// floorRule: the next slot follows the start of the latest second the
	// call can be counted in as well as the slot (see above); false, it
	// follows the slot.
	floorRule bool
}

// placing is the placing of a slot taken with aim a, the shared offset
// off and the spacing floor; idle reports a slot granted for now, which is
// called at once and never held.
func (a aim) placing(off, floor int64, idle bool) placing {
	if floor%second != 0 {
		return placing{lo: aimInSecond, hi: aimInSecond, off: off}
	}
	half := (a.phase.width() + 1) / 2
	late := aimLate
	if !idle {
		late += AimedHeldLateness.Microseconds()
	}
	// hi is the last microsecond from which a call late by its budget is
	// still counted in the same second.
	pl := placing{lo: half + aimEarly, hi: second - 1 - half - late, off: off, floorRule: true}
	if pl.lo > pl.hi {
		pl.lo, pl.hi = aimInSecond, aimInSecond
	}
	return pl
}

// place is the service time at which a call due at service time s is
// counted: s inside its second's window, the window's start before it, and
// past it the next second's tick (see above); at the fixed aim point, the
// next second's.
func (pl placing) place(s int64) int64 {
	sec := floorDiv(s, second) * second
	switch f := s - sec; {
	case f < pl.lo:
		return sec + pl.lo
	case f <= pl.hi:
		return s
	case pl.floorRule:
		return sec + second
	default:
		return sec + second + pl.lo
	}
}

// placed is the local time to send the call of the slot at local time x.
func (pl placing) placed(x int64) int64 { return pl.place(x+pl.off) - pl.off }

// follow is the local time the next slot is at least a spacing after,
// for the slot at local time x: the start of the latest second its call
// can be counted in, when later than x.
func (pl placing) follow(x int64) int64 {
	if !pl.floorRule {
		return x
	}
	return max(x, floorDiv(pl.place(x+pl.off), second)*second-pl.off)
}

// stretch is the run of local slot times around x over which follow is
// the same function as at x: [lo, hi] is where the slot is not moved past
// its second (follow is the slot itself) when moved is false, and where it
// is moved to the next second's window (follow is the constant at) when
// moved is true. A slot-taking write that does not know the slot exactly
// is made conditional on it lying in the stretch. For the floor rule only.
func (pl placing) stretch(x int64) (lo, hi, at int64, moved bool) {
	s := x + pl.off
	sec := floorDiv(s, second) * second
	if s-sec <= pl.hi {
		return sec - pl.off, sec + pl.hi - pl.off, 0, false
	}
	return sec + pl.hi + 1 - pl.off, sec + second - 1 - pl.off, sec + second - pl.off, true
}

// probeDelay is how much to delay a slot at local time t while the phase
// is not known well enough: by at most maxProbeDelay, so that the tick
// some offset q within the estimate predicts falls half a round trip after
// sending. The answer's Date then tells on which side of q the offset
// lies: the estimate shrinks to one side of q (plus half a round trip).
// q is the point nearest the estimate's middle that such a delay reaches;
// 0 when no estimate exists or no reachable q would narrow it.
func (a aim) probeDelay(t int64) int64 {
	if !a.phase.known || a.exact {
		return 0
	}
	// Sending at t+d tests q = k s - (t + d + rtt/2) for a whole k: the
	// reachable q form arcs [q0 - maxProbeDelay, q0] + k s.
	half := a.rtt / 2
	lo, hi := a.phase.lo+half, a.phase.hi-half // a q outside narrows nothing
	if lo >= hi {
		return 0
	}
	q0 := -(t + half)
	best, found := int64(0), false
	for k := floorDiv(lo-q0, second); q0+k*second-maxProbeDelay.Microseconds() <= hi; k++ {
		arcLo, arcHi := max(q0+k*second-maxProbeDelay.Microseconds(), lo), min(q0+k*second, hi)
		if arcLo > arcHi {
			continue
		}
		q := min(max(a.phase.mid(), arcLo), arcHi)
		if !found || abs(q-a.phase.mid()) < abs(best-a.phase.mid()) {
			best, found = q, true
		}
	}
	if !found {
		return 0
	}
	return ((q0-best)%second + second) % second
}

func abs(a int64) int64 { return max(a, -a) }

func floorDiv(a, b int64) int64 { return -ceilDiv(-a, b) }

func ceilDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a > 0) == (b > 0) {
		q++
	}
	return q
}
