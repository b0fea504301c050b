package pacer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
	"time"
)

// One schedule item serves every slot of its rate: each is a conditional
// write to it, applied one after another, and the instances that race for
// it conflict more the more of them there are. The model of issue 48
// (pkg/local/pacesim, docs/benchmarks.md) found one item carrying 6,000
// calls a minute to 1,000 instances, and collapsing above (15,000 a minute:
// half the rate, four writes a call, DynamoDB throttling the item). So a
// rate above ItemRatePerMinute is split over shards: K items, each a
// schedule of its own at R/K with the same margin, whose calls together
// are at most R in any window of the service's: each shard's are at most
// R/K (its own spacing's proof, see DefaultWindowMargin). The split costs
// nothing against the service's sliding log, which counts calls, not
// their spacing; against a limiter with no burst, shards' calls are not
// spaced from each other (such a limiter at thousands a minute is not
// met by any instances whose clocks differ by milliseconds).
const (
	// ItemRatePerMinute is the most calls a minute one schedule item is
	// given: the model's 6,000 at up to 1,000 instances, with half of it
	// to spare for a 429's extra writes and a backlog's bursts of slot
	// taking.
	ItemRatePerMinute = 3000
	// schedulePrefix and scheduleSortKey name the schedule items: the
	// first shard "PACE#<name>" (the only one at most rates, as before
	// shards), shard k "PACE#<name>#<k>", each in a partition of its own
	// key.
	schedulePrefix  = "PACE#"
	scheduleSortKey = "SCHEDULE"
)

// Shards is how many schedule items a Shared pacer at ratePerMinute uses:
// one up to ItemRatePerMinute, one more per ItemRatePerMinute above.
func Shards(ratePerMinute float64) int {
	return max(int(math.Ceil(ratePerMinute/ItemRatePerMinute)), 1)
}

// shards is the number of schedule items o gives a pacer at ratePerMinute.
func (o Options) shards(ratePerMinute float64) int {
	if o.Shards > 0 {
		return o.Shards
	}
	return Shards(ratePerMinute)
}

// Shared paces every instance of a pipeline through one schedule in the
// results table: one item, or Shards(R) items each at its share of the
// rate. Safe for concurrent use; create one per instance and keep it for
// the instance's life.
type Shared struct {
	items []*itemPacer
	// next is the shard the last slot was taken from; each instance
	// starts at another (created).
	next      atomic.Uint64
	throttles atomic.Int64
}

// created spreads the instances' first shards.
var created atomic.Uint64

// NewShared returns a pacer granting at most ratePerMinute slots a minute
// across every instance using the same table and Options.Name.
func NewShared(ddb DynamoDBAPI, table string, ratePerMinute float64, optFns ...func(*Options)) (*Shared, error) {
	if ddb == nil || table == "" {
		return nil, errors.New("pacer: a DynamoDB client and a table are required")
	}
	if !(ratePerMinute > 0) || math.IsInf(ratePerMinute, 0) {
		return nil, fmt.Errorf("pacer: rate %v per minute: must be positive", ratePerMinute)
	}
	o := options(optFns)
	k := o.shards(ratePerMinute)
	p := &Shared{items: make([]*itemPacer, k)}
	for i := range p.items {
		pk := schedulePrefix + o.Name
		if i > 0 {
			pk += "#" + strconv.Itoa(i)
		}
		p.items[i] = newItemPacer(ddb, table, pk, ratePerMinute/float64(k), o)
	}
	p.next.Store(created.Add(1))
	return p, nil
}

// Reserve takes the next free slot of the schedule (see itemPacer.Reserve)
// from the shards in turn: each instance's takes go round them, so every
// shard is taken from at the instances' pace, and a shard's hint, seen a
// shard's turn ago, is as fresh as one item's would be at its rate.
func (p *Shared) Reserve(ctx context.Context, within time.Duration) (time.Duration, error) {
	if len(p.items) == 1 {
		return p.items[0].Reserve(ctx, within)
	}
	return p.items[p.next.Add(1)%uint64(len(p.items))].Reserve(ctx, within)
}

// Throttled reports a 429 (see itemPacer.Throttled) to every shard: the
// pause is the account's, whichever shard's call was refused.
func (p *Shared) Throttled(ctx context.Context, retryAfter time.Duration) {
	p.throttles.Add(1)
	for _, it := range p.items {
		it.Throttled(ctx, retryAfter)
	}
}

// Valid reports whether a held slot may still be used (see
// itemPacer.Valid): every shard records the same pauses, so the first
// shard's item answers for all.
func (p *Shared) Valid(ctx context.Context, slot time.Time) (bool, error) {
	return p.items[0].Valid(ctx, slot)
}

// Answered reports an answer of the service (see itemPacer.Answered).
func (p *Shared) Answered(date string, roundTrip time.Duration) {
	for _, it := range p.items {
		it.Answered(date, roundTrip)
	}
}

// LateAllowance is how late a call may leave after its slot (see
// itemPacer.LateAllowance).
func (p *Shared) LateAllowance() (time.Duration, bool) { return p.items[0].LateAllowance() }

// Interval returns the spacing between the schedule's slots last seen:
// one shard's over the number of shards.
func (p *Shared) Interval() time.Duration {
	return p.items[0].Interval() / time.Duration(len(p.items))
}

// Stats returns the pacer's counters, summed over its shards (the answers'
// and the 429s', which every shard is told, once).
func (p *Shared) Stats() Stats {
	var s Stats
	for _, it := range p.items {
		s = s.Plus(it.Stats())
	}
	first := p.items[0].Stats()
	s.PhaseResets, s.BadDates, s.Throttles = first.PhaseResets, first.BadDates, p.throttles.Load()
	return s
}
