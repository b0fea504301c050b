package pacer

import (
	"context"
	"math"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// Throttled reports a 429 that asked to wait retryAfter, capped at
// MaxDelay (a capped delay is logged). It moves the shared schedule to
// now+retryAfter, so every instance waits, not only the one refused, and
// records the pause, so a slot held across deliveries that the pause
// reaches is given up (Valid). It widens the shared spacing by the delay's
// share of it (within MinWiden and MaxWiden). The slots taken before a
// widening were spaced the old way; their 429s are the same overshoot, so
// the spacing widens at most once until they are all past (the schedule's
// horizon).
//
// Errors are logged, not returned: the caller's retry takes a slot with
// Reserve whatever happens here.
func (p *itemPacer) Throttled(ctx context.Context, retryAfter time.Duration) {
	p.throttles.Add(1)
	if retryAfter > p.opts.MaxDelay {
		p.opts.Logger.Warn("pacer: the service asked for a longer wait than the cap: capped",
			"retry_after", retryAfter, "max_delay", p.opts.MaxDelay)
		retryAfter = p.opts.MaxDelay
	}
	now := micros(p.opts.Clock())
	resume := now + max(retryAfter.Microseconds(), 0)

	// A schedule item always holds both attributes, even when a 429 comes
	// before any slot was taken.
	next, interval, widenUntil := expression.Name(attrNext), expression.Name(attrInterval), expression.Name(attrWidenUntil)
	paused := expression.Name(attrPausedUntil)
	forget := p.forgetPhase(now)
	old, conflict, err := p.update(ctx,
		forget(expression.Set(next, expression.Value(resume)).Set(interval, expression.IfNotExists(interval, expression.Value(p.floor))).
			Set(paused, expression.Value(resume))),
		next.AttributeNotExists().Or(next.LessThan(expression.Value(resume))))
	if err == nil && conflict {
		// The schedule is already beyond resume (a backlog of slots): it
		// stays, but the pause is recorded for the slots held within it.
		_, _, err = p.update(ctx, forget(expression.Set(paused, expression.Value(resume))),
			paused.AttributeNotExists().Or(paused.LessThan(expression.Value(resume))))
	}
	if err != nil {
		p.opts.Logger.Warn("pacer: could not move the schedule after a 429", "error", err)
		return
	}
	// The schedule as it is now: moved to resume, or already beyond it.
	moved := schedule{known: true, next: resume, interval: p.floor, pausedUntil: resume}
	if seen := decodeSchedule(old); seen.known {
		moved = seen
		moved.next = max(seen.next, resume)
		moved.pausedUntil = max(seen.pausedUntil, resume)
	}
	if !p.opts.IgnoreServiceClock {
		moved.phase, moved.phaseReset, moved.hasAim = phase{}, now, false
	}
	p.remember(moved)
	if moved.widenUntil >= now {
		return // this overshoot already widened the spacing
	}
	// Slots up to the schedule's end were taken at the old spacing.
	horizon := moved.next
	share := min(max(float64(retryAfter.Microseconds())/float64(moved.interval), p.opts.MinWiden), p.opts.MaxWiden)
	delta := min(int64(math.Ceil(float64(moved.interval)*share)), p.ceiling-moved.interval)
	if delta <= 0 {
		return
	}
	prev, conflict, err := p.update(ctx,
		expression.Set(interval, expression.Plus(expression.IfNotExists(interval, expression.Value(p.floor)), expression.Value(delta))).Set(widenUntil, expression.Value(horizon)),
		widenUntil.AttributeNotExists().Or(widenUntil.LessThan(expression.Value(now))))
	if err != nil {
		p.opts.Logger.Warn("pacer: could not widen the call spacing after a 429", "error", err)
		return
	}
	if conflict {
		p.observe(prev) // another instance widened it for this overshoot
		return
	}
	p.widenings.Add(1)
	widened := moved
	widened.interval, widened.widenUntil = moved.interval+delta, horizon
	p.remember(widened)
	p.opts.Logger.Info("call spacing widened after a 429",
		"retry_after", retryAfter, "spacing", time.Duration(widened.interval)*time.Microsecond,
		"rate_per_minute", math.Round(60e6/float64(widened.interval)*10)/10)
}

// forgetPhase returns what a 429 adds to its write: the estimate of the
// service's clock is removed, and the time of its removal recorded, so no
// instance writes back what it learnt before. Calls aimed with it were
// refused: it is wrong (the service's clock moved by less than the
// estimate's width, which no answer contradicts), or the limiter does not
// count whole seconds. The margin is back until it is learnt again.
func (p *itemPacer) forgetPhase(now int64) func(expression.UpdateBuilder) expression.UpdateBuilder {
	if p.opts.IgnoreServiceClock {
		return func(u expression.UpdateBuilder) expression.UpdateBuilder { return u }
	}
	p.mu.Lock()
	p.local = phase{}
	p.mu.Unlock()
	return func(u expression.UpdateBuilder) expression.UpdateBuilder {
		return u.Set(expression.Name(attrPhaseReset), expression.Value(now)).Remove(expression.Name(attrPhaseLow)).
			Remove(expression.Name(attrPhaseHigh)).Remove(expression.Name(attrAim))
	}
}
