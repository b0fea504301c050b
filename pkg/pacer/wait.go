package pacer

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// Reserve takes the next free slot of the shared schedule, provided it
// starts within the given time (and within Horizon), and returns how long
// until it starts. When the schedule is full beyond that it returns
// ErrNoSlot at once, without taking a slot, so the caller can give the
// work back untouched.
//
// One conditional UpdateItem takes a slot. When the schedule is ahead of
// now it moves on by the spacing and the slot is its old value; when it is
// behind (no backlog) the slot is now. Either way the write also narrows
// the spacing by a probe step while it is wider than the configured rate.
// With the service's clock known the slot is placed in a safe window of one
// of its seconds, and the next follows the placed call's latest possible
// second as well as the slot (see placing in phase.go). A schedule found
// further ahead than any sound one can be is repaired first (see
// Options.Horizon).
func (p *itemPacer) Reserve(ctx context.Context, within time.Duration) (time.Duration, error) {
	if within < 0 {
		return 0, ErrNoSlot
	}
	within = min(within, p.opts.Horizon)
	p.reserving.Lock()
	defer p.reserving.Unlock()
	for try := range maxTries {
		start := p.opts.Clock()
		now := micros(start)
		last := now + within.Microseconds()
		st, age := p.hint(now)
		if try == 0 && st.known && st.next <= now && age > st.interval {
			// The schedule looked idle more than a slot ago: other
			// instances have likely moved it on since. A write for an
			// idle schedule would then fail and cost a write unit (and
			// many instances' such failures saturate the item, see
			// shards.go); a read costs a read unit, which the item's
			// partition has three times as many of.
			var err error
			if st, err = p.read(ctx); err != nil {
				return 0, fmt.Errorf("pacer: take a call slot: %w", err)
			}
		}
		a := p.aimFor(st, now)
		ahead := st.known && st.next > now
		in := p.takeInput(st, a, ahead, now, last)
		old, conflict, err := p.update(ctx, in.update, in.cond)
		if err != nil {
			return 0, fmt.Errorf("pacer: take a call slot: %w", err)
		}
		seen := decodeSchedule(old)
		if conflict {
			p.observe(old)
			if seen.known && seen.next > now+p.maxAhead() {
				if err := p.repair(ctx, now, seen); err != nil {
					return 0, fmt.Errorf("pacer: repair the schedule: %w", err)
				}
				continue
			}
			if seen.known && seen.next > last {
				return 0, ErrNoSlot
			}
			continue
		}
		slot, interval := now, p.floor
		if seen.known {
			interval = seen.interval
			if ahead {
				slot = seen.next
			}
		}
		slot += in.shift
		base := in.place.follow(slot)
		if !ahead {
			base = max(base, slot+p.lead())
		}
		next := schedule{known: true, next: base + interval, interval: interval - in.step, widenUntil: seen.widenUntil,
			pausedUntil: seen.pausedUntil, phase: seen.phase, phaseReset: seen.phaseReset, aim: in.aim, hasAim: in.aimed}
		if in.phaseWritten {
			next.phase = a.phase
		}
		if in.aimed {
			slot = in.place.placed(slot)
			p.countAimed(start)
		} else {
			slot += a.probeDelay(slot)
		}
		p.remember(next)
		p.slots.Add(1)
		if seen.known && seen.interval < p.floorFor(in.aimed) {
			p.enforceFloor(ctx, p.floorFor(in.aimed))
		}
		// The delay is from now, not from the write's start: the caller
		// adds it to its clock when Reserve returns. A slot that passed
		// while the write was answered (DynamoDB throttling the item and
		// the SDK retrying) is given up: a call that late would crowd the
		// next slot's beyond what the window margin allows for.
		done := p.opts.Clock()
		if done.Sub(fromMicros(slot)) > maxGrantLate {
			p.lost.Add(1)
			continue
		}
		return fromMicros(slot).Sub(done), nil
	}
	// Every try met another instance's write: the schedule is busy enough
	// that the caller is better off retrying later than spinning.
	return 0, fmt.Errorf("%w: %d conflicting writes in a row", ErrNoSlot, maxTries)
}

// floorFor is the narrowest spacing: without the window margin while the
// calls are aimed.
func (p *itemPacer) floorFor(aimed bool) int64 {
	if aimed {
		return p.aimedFloor
	}
	return p.floor
}

func (p *itemPacer) countAimed(at time.Time) {
	p.aimed.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.firstAimed.IsZero() {
		p.firstAimed = at
	}
}

// take is one slot-taking write and what it grants when it succeeds.
type take struct {
	update expression.UpdateBuilder
	cond   expression.ConditionBuilder
	step   int64 // the narrowing of the spacing it writes
	// aimed: the slot is aimed at a second of the service's clock with
	// the shared offset aim, shift later than the schedule's slot, and
	// placed by place (the zero placing, unaimed: the slot as it is).
	aimed        bool
	aim, shift   int64
	place        placing
	phaseWritten bool // the write shares the instance's estimate
}

// takeInput builds the slot-taking write. A probe step is applied only when
// the last seen spacing leaves room for it above the floor; the condition
// re-checks that room, so a stale hint costs a retry, never a spacing below
// the configured rate. With the phase known the slot is aimed (aimInput).
func (p *itemPacer) takeInput(st schedule, a aim, ahead bool, now, last int64) take {
	next, interval := expression.Name(attrNext), expression.Name(attrInterval)
	var t take
	var slotCond expression.ConditionBuilder
	t = p.aimInput(st, a)
	if t.aimed {
		// A slot granted for now (idle, not shifted) is called at once,
		// never held: its window allows for less lateness.
		t.place = a.placing(t.aim, p.aimedFloor, !ahead && t.shift == 0)
	}
	if ahead {
		t.update = expression.Set(next, next.Plus(interval))
		slotCond = next.GreaterThan(expression.Value(now)).And(next.LessThanEqual(expression.Value(last)))
		switch {
		case t.shift > 0:
			// Rare (the shared aim moved earlier): written as absolute
			// values, on the schedule as last seen.
			t.update = expression.Set(next, expression.Value(t.place.follow(st.next+t.shift)).Plus(interval))
			slotCond = slotCond.And(next.Equal(expression.Value(st.next)))
		case t.place.floorRule:
			// The slot is the item's, which the hint may not be: the write
			// holds only while the slot is in the hint's stretch, where
			// the next slot follows it as it follows the hint.
			lo, hi, at, moved := t.place.stretch(st.next)
			inStretch := next.Between(expression.Value(lo), expression.Value(hi))
			if moved {
				t.update = expression.Set(next, expression.Value(at).Plus(interval))
			} else {
				// A hint a few slots stale (other instances took them)
				// finds the slot in a later second: the same part of each
				// of the next staleSeconds seconds is as good.
				for j := int64(1); j <= staleSeconds; j++ {
					inStretch = inStretch.Or(next.Between(expression.Value(lo+j*second), expression.Value(hi+j*second)))
				}
			}
			slotCond = slotCond.And(inStretch)
		}
	} else {
		// An idle schedule grants now, and the caller prepares its call
		// (up to Lead) before sending it: the next slot leaves room for
		// that, up to one spacing, so the call sent late is still a whole
		// spacing before the next. At high rates the spacing bounds it.
		slot := now + t.shift
		after := max(t.place.follow(slot), slot+p.lead())
		t.update = expression.Set(next, expression.Value(after).Plus(expression.IfNotExists(interval, expression.Value(p.floor))))
		slotCond = next.AttributeNotExists().Or(next.LessThanEqual(expression.Value(now)))
	}
	switch {
	case t.aimed:
		t.cond = t.cond.And(slotCond)
		if t.aim != st.aim || !st.hasAim {
			t.update = t.update.Set(expression.Name(attrAim), expression.Value(t.aim))
		}
	case p.opts.probes(p.aimedFloor):
		// An unaimed slot holds only on a schedule that is not aimed:
		// the slot after an aimed one follows it in the shared aim's frame
		// (placing.follow), which an unplaced call is counted in only up
		// to the aim's error early, and it then shares the second of the
		// aimed call before, R+1 calls in 60 of the service's seconds. An
		// instance whose hint predates the shared estimate (its workers
		// held slots taken before it was learnt, and it has called none
		// since) would otherwise take one: the model of issue 48 drew a
		// 429 so at 60 a minute with 40 and 60 instances. The failed
		// write returns the item, and the retry is aimed with it. An
		// instance that has seen the aim and still cannot aim has answers
		// contradicting the shared estimate (the service's clock jumped,
		// see learnLocked): its write removes the aim with the estimate
		// it replaces, and calls keep the margin until it is learnt again.
		aimAttr := expression.Name(attrAim)
		if st.hasAim {
			t.cond = slotCond.And(aimAttr.Equal(expression.Value(st.aim)))
			t.update = t.update.Remove(aimAttr)
		} else {
			t.cond = slotCond.And(aimAttr.AttributeNotExists())
		}
	default:
		t.cond = slotCond
	}
	p.narrow(&t, st, p.floorFor(t.aimed), !ahead)
	p.sharePhase(&t, st, a)
	return t
}

// maxGrantLate is how far past its slot a slot may be granted and still
// be called in: a slot granted late is called at once, never held, so it
// is at most as late as a held slot may be (AimedHeldLateness), within the
// spread the window margin absorbs. A write answered later than that was
// throttled and retried by the SDK (the model of issue 48 saw seconds).
const maxGrantLate = AimedHeldLateness

// staleSeconds is how many seconds after a hint's a backlogged slot-taking
// write finds its stretch in: 8 slots taken by others at 30 a minute.
const staleSeconds = 16

// lead is the room an idle grant leaves for the caller's preparation.
func (p *itemPacer) lead() int64 { return min(max(p.opts.Lead, 0).Microseconds(), p.floor) }

// aimInput chooses the offset an aimed slot is aimed with (none while the
// phase is not known well enough): the item's, the same for every
// instance, unless the instance's own is more than aimSlack away, and then
// its own, written for all. Slots follow each other by the spacing on the
// instances' clocks; with one offset they do on the service's too, and R+1
// calls span at least 60 of its whole seconds. An offset moved earlier
// would bring the next call closer to the last: the schedule's slot is
// shifted later by as much. The write is conditional on the item's aim
// being the one seen.
func (p *itemPacer) aimInput(st schedule, a aim) take {
	if !a.exact {
		return take{}
	}
	t := take{aimed: true, aim: st.aim, cond: expression.Name(attrAim).AttributeNotExists()}
	if st.hasAim {
		t.cond = expression.Name(attrAim).Equal(expression.Value(st.aim))
	}
	own := a.offset()
	if st.hasAim && abs(own-st.aim) <= aimSlack {
		return t
	}
	t.aim = own
	if st.hasAim && own < st.aim {
		t.shift = st.aim - own
	}
	return t
}

// narrow adds the probe step to t: down to floor, straight to the aimed
// floor when the phase has just become known (the margin is dropped at
// once, not probed away). idle writes set the spacing when absent.
func (p *itemPacer) narrow(t *take, st schedule, floor int64, idle bool) {
	interval := expression.Name(attrInterval)
	t.step = p.step(st, st.interval, floor)
	if t.step > 0 {
		t.update = t.update.Set(interval, interval.Minus(expression.Value(t.step)))
		t.cond = t.cond.And(interval.GreaterThanEqual(expression.Value(floor + t.step)))
	} else if idle {
		t.update = t.update.Set(interval, expression.IfNotExists(interval, expression.Value(p.floor)))
	}
}

// sharePhase adds the instance's estimate of the service's clock to t when
// it is not what the item holds, provided the item still holds what the
// instance saw: another instance's estimate, or a reset after a 429, is
// merged first (the write fails and is retried).
func (p *itemPacer) sharePhase(t *take, st schedule, a aim) {
	if !a.phase.known || (st.phase.known && st.phase.lo == a.phase.lo && st.phase.hi == a.phase.hi) {
		return
	}
	lo, hi, reset := expression.Name(attrPhaseLow), expression.Name(attrPhaseHigh), expression.Name(attrPhaseReset)
	t.update = t.update.Set(lo, expression.Value(a.phase.lo)).Set(hi, expression.Value(a.phase.hi))
	if st.phase.known {
		t.cond = t.cond.And(lo.Equal(expression.Value(st.phase.lo))).And(hi.Equal(expression.Value(st.phase.hi)))
	} else {
		t.cond = t.cond.And(lo.AttributeNotExists())
	}
	if st.phaseReset != 0 {
		t.cond = t.cond.And(reset.Equal(expression.Value(st.phaseReset)))
	} else {
		t.cond = t.cond.And(reset.AttributeNotExists())
	}
	t.phaseWritten = true
}

// step is the probe step for a slot taken at spacing interval, or 0 when
// the spacing is at (or the hint too stale to know it is above) floor.
// Above the aimed floor but within the margin's, it is the whole way down.
func (p *itemPacer) step(st schedule, interval, floor int64) int64 {
	if !st.known || p.opts.ProbeStep <= 0 {
		return 0
	}
	if floor == p.aimedFloor && floor < p.floor && interval > floor && interval <= p.floor {
		return interval - floor
	}
	s := max(int64(float64(interval)*p.opts.ProbeStep), 1)
	if interval < floor+s {
		return 0
	}
	return s
}

// enforceFloor resets a spacing narrower than this instance's configured
// rate, which another instance with a higher configured rate may have set
// during a deployment.
func (p *itemPacer) enforceFloor(ctx context.Context, floor int64) {
	interval := expression.Name(attrInterval)
	old, _, err := p.update(ctx, expression.Set(interval, expression.Value(floor)),
		interval.LessThan(expression.Value(floor)))
	if err != nil {
		p.opts.Logger.Warn("pacer: could not reset the call spacing to the configured rate", "error", err)
		return
	}
	p.observe(old)
}

// maxAhead is, in microseconds, the furthest ahead of now a sound schedule
// can be: slots are granted up to Horizon ahead, a 429 moves it at most
// MaxDelay, and the slot being granted adds a spacing.
func (p *itemPacer) maxAhead() int64 {
	return (p.opts.Horizon + p.opts.MaxDelay).Microseconds() + p.ceiling
}

// repair resets a schedule found beyond now + maxAhead to now, and its
// pause and widening horizon with it: no slot can be held that far ahead, so the value comes
// from a writer's bad clock or an older version that followed a 429 asking
// for a year, and left alone it would refuse every slot until then. The
// write is conditional on the schedule still being that far ahead, so
// instances repairing at once reset it once.
func (p *itemPacer) repair(ctx context.Context, now int64, seen schedule) error {
	next, paused, widen := expression.Name(attrNext), expression.Name(attrPausedUntil), expression.Name(attrWidenUntil)
	_, conflict, err := p.update(ctx,
		expression.Set(next, expression.Value(now)).Set(paused, expression.Value(now)).Set(widen, expression.Value(now)),
		next.GreaterThan(expression.Value(now+p.maxAhead())))
	if err != nil {
		return err
	}
	if !conflict {
		p.repairs.Add(1)
		p.opts.Logger.Warn("pacer: the schedule was further ahead than any sound one can be: reset to now",
			"ahead", time.Duration(seen.next-now)*time.Microsecond, "max_ahead", time.Duration(p.maxAhead())*time.Microsecond)
	}
	fixed := seen
	fixed.next, fixed.pausedUntil, fixed.widenUntil = now, now, now
	p.remember(fixed)
	return nil
}

// Valid reports whether a slot taken earlier, and held since (by a message
// returned to the queue until it), may still be used: false when a pause a
// 429 asked for after it was taken reaches past it. The caller then takes a
// new slot instead of calling into the pause. A pause beyond now + MaxDelay
// cannot be sound and does not count. One consistent read.
func (p *itemPacer) Valid(ctx context.Context, slot time.Time) (bool, error) {
	st, err := p.read(ctx)
	if err != nil {
		return false, err
	}
	if !st.known {
		return true, nil
	}
	paused := min(st.pausedUntil, micros(p.opts.Clock())+p.opts.MaxDelay.Microseconds())
	return micros(slot) >= paused, nil
}
