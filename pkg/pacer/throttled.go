package pacer

import (
	"context"
	"math"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Throttled reports a 429 that asked to wait retryAfter. It moves the
// shared schedule to now+retryAfter, so every instance waits, not only the
// one refused, and widens the shared spacing by the delay's share of it
// (within MinWiden and MaxWiden). The slots taken before a widening were
// spaced the old way; their 429s are the same overshoot, so the spacing
// widens at most once until they are all past (the schedule's horizon).
//
// Errors are logged, not returned: the caller's retry is paced by Wait
// whatever happens here.
func (p *Shared) Throttled(ctx context.Context, retryAfter time.Duration) {
	p.throttles.Add(1)
	now := micros(p.opts.Clock())
	resume := now + max(retryAfter.Microseconds(), 0)

	// A schedule item always holds both attributes, even when a 429 comes
	// before any slot was taken.
	old, _, err := p.update(ctx, "SET "+attrNext+" = :resume, "+attrInterval+" = if_not_exists("+attrInterval+", :iv0)",
		"attribute_not_exists("+attrNext+") OR "+attrNext+" < :resume",
		map[string]types.AttributeValue{":resume": num(resume), ":iv0": num(p.floor)})
	if err != nil {
		p.opts.Logger.Warn("pacer: could not move the schedule after a 429", "error", err)
		return
	}
	seen := decodeSchedule(old)
	if seen.known {
		moved := seen
		moved.next = max(seen.next, resume)
		p.remember(moved)
	}
	interval := p.floor
	horizon := resume
	if seen.known {
		interval = seen.interval
		horizon = max(seen.next, resume)
	}
	if seen.known && seen.widenUntil >= now {
		return // this overshoot already widened the spacing
	}
	share := min(max(float64(retryAfter.Microseconds())/float64(interval), p.opts.MinWiden), p.opts.MaxWiden)
	delta := min(int64(math.Ceil(float64(interval)*share)), p.ceiling-interval)
	if delta <= 0 {
		return
	}
	prev, conflict, err := p.update(ctx, "SET "+attrInterval+" = if_not_exists("+attrInterval+", :iv0) + :delta, "+attrWidenUntil+" = :horizon",
		"attribute_not_exists("+attrWidenUntil+") OR "+attrWidenUntil+" < :now",
		map[string]types.AttributeValue{":iv0": num(p.floor), ":delta": num(delta), ":horizon": num(horizon), ":now": num(now)})
	if err != nil {
		p.opts.Logger.Warn("pacer: could not widen the call spacing after a 429", "error", err)
		return
	}
	if conflict {
		p.observe(prev) // another instance widened it for this overshoot
		return
	}
	p.widenings.Add(1)
	widened := seen
	widened.interval, widened.widenUntil = interval+delta, horizon
	if !seen.known {
		widened = schedule{known: true, next: resume, interval: interval + delta, widenUntil: horizon}
	}
	p.remember(widened)
	p.opts.Logger.Info("call spacing widened after a 429",
		"retry_after", retryAfter, "spacing", time.Duration(interval+delta)*time.Microsecond,
		"rate_per_minute", math.Round(60e6/float64(interval+delta)*10)/10)
}
