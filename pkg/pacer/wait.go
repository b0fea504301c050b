package pacer

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// Reserve takes the next free slot of the shared schedule, provided it
// starts within the given time, and returns how long until it starts. When
// the schedule is full beyond that it returns ErrNoSlot at once, without
// taking a slot, so the caller can give the work back untouched.
//
// One conditional UpdateItem takes a slot. When the schedule is ahead of
// now it moves on by the spacing and the slot is its old value; when it is
// behind (no backlog) the slot is now. Either way the write also narrows
// the spacing by a probe step while it is wider than the configured rate.
func (p *Shared) Reserve(ctx context.Context, within time.Duration) (time.Duration, error) {
	if within < 0 {
		return 0, ErrNoSlot
	}
	p.reserving.Lock()
	defer p.reserving.Unlock()
	for range maxTries {
		start := p.opts.Clock()
		now := micros(start)
		last := int64(math.MaxInt64)
		if within != Unbounded {
			last = now + within.Microseconds()
		}
		st := p.snapshot()
		ahead := st.known && st.next > now
		update, cond := p.takeInput(st, ahead, now, last)
		old, conflict, err := p.update(ctx, update, cond)
		if err != nil {
			return 0, fmt.Errorf("pacer: take a call slot: %w", err)
		}
		seen := decodeSchedule(old)
		if conflict {
			p.observe(old)
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
		next := schedule{known: true, next: slot + interval, interval: interval - p.step(st, interval), widenUntil: seen.widenUntil}
		p.remember(next)
		p.slots.Add(1)
		if seen.known && seen.interval < p.floor {
			p.enforceFloor(ctx)
		}
		return fromMicros(slot).Sub(start), nil
	}
	// Every try met another instance's write: the schedule is busy enough
	// that the caller is better off retrying later than spinning.
	return 0, fmt.Errorf("%w: %d conflicting writes in a row", ErrNoSlot, maxTries)
}

// takeInput builds the slot-taking write. A probe step is applied only when
// the last seen spacing leaves room for it above the floor; the condition
// re-checks that room, so a stale hint costs a retry, never a spacing below
// the configured rate.
func (p *Shared) takeInput(st schedule, ahead bool, now, last int64) (expression.UpdateBuilder, expression.ConditionBuilder) {
	next, interval := expression.Name(attrNext), expression.Name(attrInterval)
	var update expression.UpdateBuilder
	var cond expression.ConditionBuilder
	if ahead {
		update = expression.Set(next, next.Plus(interval))
		cond = next.GreaterThan(expression.Value(now)).And(next.LessThanEqual(expression.Value(last)))
	} else {
		// An idle schedule grants now, and the caller prepares its call
		// (up to Lead) before sending it: the next slot leaves room for
		// that, up to one spacing, so the call sent late is still a whole
		// spacing before the next. At high rates the spacing bounds it.
		after := now + min(max(p.opts.Lead, 0).Microseconds(), p.floor)
		update = expression.Set(next, expression.Value(after).Plus(expression.IfNotExists(interval, expression.Value(p.floor))))
		cond = next.AttributeNotExists().Or(next.LessThanEqual(expression.Value(now)))
	}
	if step := p.step(st, st.interval); step > 0 {
		update = update.Set(interval, interval.Minus(expression.Value(step)))
		cond = cond.And(interval.GreaterThanEqual(expression.Value(p.floor + step)))
	} else if !ahead {
		update = update.Set(interval, expression.IfNotExists(interval, expression.Value(p.floor)))
	}
	return update, cond
}

// step is the probe step for a slot taken at spacing interval, or 0 when
// the spacing is at (or the hint too stale to know it is above) the floor.
func (p *Shared) step(st schedule, interval int64) int64 {
	if !st.known || p.opts.ProbeStep <= 0 {
		return 0
	}
	s := max(int64(float64(interval)*p.opts.ProbeStep), 1)
	if interval < p.floor+s {
		return 0
	}
	return s
}

// enforceFloor resets a spacing narrower than this instance's configured
// rate, which another instance with a higher configured rate may have set
// during a deployment.
func (p *Shared) enforceFloor(ctx context.Context) {
	interval := expression.Name(attrInterval)
	old, _, err := p.update(ctx, expression.Set(interval, expression.Value(p.floor)),
		interval.LessThan(expression.Value(p.floor)))
	if err != nil {
		p.opts.Logger.Warn("pacer: could not reset the call spacing to the configured rate", "error", err)
		return
	}
	p.observe(old)
}
