package pacer

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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
// A schedule found further ahead than any sound one can be is repaired
// first (see Options.Horizon).
func (p *Shared) Reserve(ctx context.Context, within time.Duration) (time.Duration, error) {
	if within < 0 {
		return 0, ErrNoSlot
	}
	within = min(within, p.opts.Horizon)
	p.reserving.Lock()
	defer p.reserving.Unlock()
	for range maxTries {
		start := p.opts.Clock()
		now := micros(start)
		last := now + within.Microseconds()
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

// maxAhead is, in microseconds, the furthest ahead of now a sound schedule
// can be: slots are granted up to Horizon ahead, a 429 moves it at most
// MaxDelay, and the slot being granted adds a spacing.
func (p *Shared) maxAhead() int64 {
	return (p.opts.Horizon + p.opts.MaxDelay).Microseconds() + p.ceiling
}

// repair resets a schedule found beyond now + maxAhead to now, and its
// pause and widening horizon with it: no slot can be held that far ahead, so the value comes
// from a writer's bad clock or an older version that followed a 429 asking
// for a year, and left alone it would refuse every slot until then. The
// write is conditional on the schedule still being that far ahead, so
// instances repairing at once reset it once.
func (p *Shared) repair(ctx context.Context, now int64, seen schedule) error {
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
func (p *Shared) Valid(ctx context.Context, slot time.Time) (bool, error) {
	out, err := p.ddb.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(p.table),
		Key:            p.key,
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return false, fmt.Errorf("pacer: read the schedule: %w", err)
	}
	st := p.observe(out.Item)
	if !st.known {
		return true, nil
	}
	paused := min(st.pausedUntil, micros(p.opts.Clock())+p.opts.MaxDelay.Microseconds())
	return micros(slot) >= paused, nil
}
