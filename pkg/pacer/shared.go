package pacer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// DynamoDBAPI is the part of *dynamodb.Client the shared pacer uses.
type DynamoDBAPI interface {
	UpdateItem(ctx context.Context, params *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	// GetItem reads the schedule when a slot held across deliveries is
	// about to be used (Valid).
	GetItem(ctx context.Context, params *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// Defaults of Options.
const (
	DefaultName      = "default"
	DefaultProbeStep = 0.0002 // 5% of spacing won back in 250 slots
	DefaultMinWiden  = 0.03
	DefaultMaxWiden  = 0.10
	// DefaultSlowest bounds the widening: never below this share of the
	// configured rate.
	DefaultSlowest = 0.05
	// DefaultGuard is added to the configured spacing against a limiter
	// that does not count whole seconds (IgnoreServiceClock: a token
	// bucket): calls leave an instance a few milliseconds late or early
	// (timers, scheduling, the network), and against a limiter with no
	// burst a call that lands even a little less than 1/R after the
	// previous one is refused. The clocks of Lambda's instances are taken
	// to be within 10 ms of each other (issue 38's figure: AWS documents
	// none for Lambda), and a slot read on a clock 10 ms late followed by
	// one read on the earliest is 10 ms short: 12 ms covers that and the
	// timers. Capped at 2.5% of the spacing. Against the service's sliding
	// log of whole seconds the window margin covers the same error and
	// more, at every rate (see DefaultWindowMargin), so no guard is added
	// there: above 60 calls a minute its 2.5% cap used to set the rate
	// (97.6% of R), the margin's share being smaller (issue 48).
	// Measured against the strict token bucket at 120 a minute with clocks
	// over ±5 ms (cmd/benchreport's skew rows, 2026-11-27): 5 and 8 ms are
	// the same there (the margin's 8.3 ms a slot is the larger), which
	// leaves a clock 10 ms late followed by the earliest 1.7 ms short, and
	// the 429s came at 495.8 to 499.6 ms gaps; with 12 ms, at 499.1 to
	// 499.6 ms, where the network and the timers took more than the 2 ms
	// left. Each ms more costs 0.2% of R at that rate: 12 ms (a 97.7%
	// ceiling) is the smallest that covers the clocks.
	DefaultGuard = 12 * time.Millisecond
	// maxGuardShare caps the guard at this share of the spacing.
	maxGuardShare = 0.025
	// DefaultWindowMargin lengthens the minute the configured rate is spread
	// over. The service's limiter (its public backend: 30 a minute) keeps
	// a log of each call's timestamp truncated to the whole second, taken
	// when it has read the upload, and refuses the 31st call whose second
	// is within 60 of the oldest's. Calls reach it a varying time after
	// their slot (the upload's length, the network), and truncation turns
	// a difference of a fraction of a second into a whole one: R slots over
	// exactly a minute can put R+1 calls into one window of 60 whole
	// seconds, and that 429 costs every instance the rest of the window.
	// One second more per minute absorbs up to a second of spread, for
	// 1.6% of the rate. That is the margin at rates where the pacer probes
	// the service's clock (see phase.go: at most 60 calls a minute), whose
	// probes delay calls by up to maxProbeDelay on top of the spread
	// DefaultUnaimedMargin covers: 860 ms.
	DefaultWindowMargin = time.Second
	// DefaultUnaimedMargin is the window margin where the pacer never
	// probes nor aims (above 60 calls a minute, or IgnoreServiceClock), so
	// that no call is delayed past its slot but by its own spread: from
	// the clocks' 10 ms early to aimLate's 200 ms (timers, the call's
	// preparation and its upload) plus AimedHeldLateness's 250 ms late,
	// 460 ms, the budgets aimed calls rest on. Half a second absorbs it,
	// for 0.8% of the rate: R+1 calls whose slots span a minute and the
	// margin, and whose arrivals are within the margin of their slots,
	// span at least 60 whole seconds. With a second there (and the guard's
	// 2.5% cap above it, see DefaultGuard) every rate above 60 a minute
	// stayed under 99% of R (issue 48).
	DefaultUnaimedMargin = 500 * time.Millisecond
	// maxTries bounds the conditional writes of one Wait: each failed one
	// returns the item, so the next is aimed right unless another instance
	// moved it in between.
	maxTries = 16
	// DefaultMaxDelay caps the delay a 429 may move the schedule by,
	// whatever the service asked for: long enough for a limiter's whole
	// window of 60 s, short enough that a bogus delay parks nothing for
	// long.
	DefaultMaxDelay = 5 * time.Minute
	// DefaultHorizon is the furthest ahead Reserve grants a slot: SQS's 12
	// hours, the longest a returned message can hold one (see the
	// predictor).
	DefaultHorizon = 12 * time.Hour
)

// Options tune a Shared pacer; the defaults suit the deployed function.
type Options struct {
	// Name identifies the schedule in the table: one per pipeline (the
	// account's key), shared by every instance.
	Name string
	// Clock returns the current time. Default time.Now.
	Clock func() time.Time
	// ProbeStep is the share of the spacing each slot taken narrows it by,
	// down to the configured rate: how fast a widening is won back.
	ProbeStep float64
	// MinWiden and MaxWiden bound how much one 429 widens the spacing, as a
	// share of it; within them the widening is the delay the service asked
	// for, as a share of the spacing.
	MinWiden, MaxWiden float64
	// Slowest is the lowest rate the spacing widens to, as a share of the
	// configured rate.
	Slowest float64
	// Guard is added to the configured spacing (1/rate), up to 2.5% of it,
	// with IgnoreServiceClock (see DefaultGuard); negative: none. Zero
	// means DefaultGuard.
	Guard time.Duration
	// WindowMargin lengthens the minute the rate is spread over (see
	// DefaultWindowMargin); negative: none. Zero means DefaultWindowMargin
	// where the pacer probes the service's clock, DefaultUnaimedMargin
	// where it never does.
	WindowMargin time.Duration
	// Lead is the time a caller needs to prepare its call after taking a
	// slot (the predictor needs none: it opens the object before). A caller granted a later slot prepares before
	// it and calls on time; one granted "now" by an idle schedule calls up
	// to Lead late, so the next slot is set that much later (at most one
	// spacing more), or it would land less than a spacing after the call.
	Lead time.Duration
	// MaxDelay caps every delay a 429 asks the schedule to wait
	// (Throttled): the schedule never moves beyond now plus MaxDelay on a
	// 429, and a capped delay is logged. Zero means DefaultMaxDelay.
	MaxDelay time.Duration
	// Horizon is the furthest ahead Reserve grants a slot, whatever its
	// caller allows. With MaxDelay it bounds how far ahead a sound schedule
	// can be: one found beyond now + Horizon + MaxDelay (a writer's bad
	// clock, an older version that followed a 429 asking for a year) is
	// repaired to now by the next Reserve. Zero means DefaultHorizon.
	Horizon time.Duration
	// Logger receives a line per widening, capped delay and repair.
	// Default: discards.
	Logger *slog.Logger
	// IgnoreServiceClock stops the pacer learning the service's clock from
	// its answers (Answered): the window margin then stays. For a service
	// whose limiter does not count whole seconds of its clock (a token
	// bucket), where aiming at the middle of its seconds would only bunch
	// calls up.
	IgnoreServiceClock bool
	// PhaseTolerance is the widest estimate of the service's clock the
	// pacer aims with (see phase.go). Zero means DefaultPhaseTolerance.
	PhaseTolerance time.Duration
	// Shards is how many schedule items share the rate (see shards.go).
	// Zero means Shards(the rate).
	Shards int
	// AimHoldOff is how long after a 429 calls are not aimed (see
	// phase.go). Zero means DefaultAimHoldOff.
	AimHoldOff time.Duration
}

// Stats are a Shared pacer's counters since it was created.
type Stats struct {
	Slots     int64 // slots granted
	Writes    int64 // UpdateItem requests sent, conditional failures included
	Conflicts int64 // conditional failures: another instance moved the schedule first
	Reads     int64 // consistent reads of the schedule (Valid, and a stale idle hint checked)
	Lost      int64 // slots granted past their time by a slow write, and given up
	Throttles int64 // 429s reported
	Widenings int64 // 429s that widened the spacing (at most one per schedule horizon)
	Repairs   int64 // schedules found impossibly far ahead and reset
	// AimedSlots are the slots granted aimed inside a second of
	// the service's clock, without the window margin; FirstAimed is when
	// the first was taken (zero: none).
	AimedSlots int64
	FirstAimed time.Time
	// PhaseResets counts answers that contradicted the estimate of the
	// service's clock (it jumped); BadDates the answers whose Date could
	// not be read.
	PhaseResets, BadDates int64
}

// Plus is s and o together: their counts summed, the earlier first aimed
// slot.
func (s Stats) Plus(o Stats) Stats {
	first := s.FirstAimed
	if first.IsZero() || (!o.FirstAimed.IsZero() && o.FirstAimed.Before(first)) {
		first = o.FirstAimed
	}
	return Stats{Slots: s.Slots + o.Slots, Writes: s.Writes + o.Writes, Conflicts: s.Conflicts + o.Conflicts,
		Reads: s.Reads + o.Reads, Lost: s.Lost + o.Lost, Throttles: s.Throttles + o.Throttles,
		Widenings: s.Widenings + o.Widenings, Repairs: s.Repairs + o.Repairs, AimedSlots: s.AimedSlots + o.AimedSlots,
		FirstAimed: first, PhaseResets: s.PhaseResets + o.PhaseResets, BadDates: s.BadDates + o.BadDates}
}

// itemPacer paces through one schedule item: the whole of a Shared pacer's
// rate, or one shard's share of it (see shards.go).
type itemPacer struct {
	ddb   DynamoDBAPI
	table string
	key   map[string]types.AttributeValue
	opts  Options
	// floor and ceiling bound the spacing, in microseconds: the configured
	// rate and the slowest rate. aimedFloor is the floor while the phase is
	// known: the configured rate spread over exactly a minute.
	floor, ceiling, aimedFloor int64

	mu     sync.Mutex
	state  schedule // the last state seen; a hint, the table decides
	seenAt int64    // when it was seen (clock, microseconds)
	// reserving lets one of the instance's workers take a slot at a time:
	// they would only conflict with each other, and the hint stays fresh.
	reserving sync.Mutex

	slots, writes, conflicts, throttles, widenings, repairs, reads, lost atomic.Int64
	aimed, badDates, phaseResets                                         atomic.Int64

	// Guarded by mu: the instance's estimate of the service's clock (its
	// own answers and the item's), the running mean of the round trip in
	// microseconds, and when the first aimed slot was taken.
	local      phase
	rtt        int64
	firstAimed time.Time
}

// schedule is the item's content, in Unix microseconds.
type schedule struct {
	known       bool
	next        int64 // the next free slot
	interval    int64 // the spacing between slots
	widenUntil  int64 // no further widening before this time
	pausedUntil int64 // the end of the last pause a 429 asked for; 0: none
	phase       phase // the estimate of the service's clock; see phase.go
	phaseReset  int64 // when a 429 last removed it; 0: never
	aim         int64 // the shared aim (attrAim)
	hasAim      bool
}

// Attribute names of the schedule item.
const (
	attrNext        = "next_us"
	attrInterval    = "interval_us"
	attrWidenUntil  = "widen_until_us"
	attrPausedUntil = "paused_until_us"
)

// newItemPacer returns the pacer of the schedule item under pk at
// ratePerMinute, with o (defaults filled in).
func newItemPacer(ddb DynamoDBAPI, table, pk string, ratePerMinute float64, o Options) *itemPacer {
	spacing := int64(math.Ceil(float64(time.Minute.Microseconds()) / ratePerMinute))
	floor := o.floorSpacing(ratePerMinute)
	return &itemPacer{
		ddb:   ddb,
		table: table,
		key: map[string]types.AttributeValue{
			tableschema.PartitionKey: &types.AttributeValueMemberS{Value: pk},
			tableschema.SortKey:      &types.AttributeValueMemberS{Value: scheduleSortKey},
		},
		opts:    o,
		floor:   floor,
		ceiling: int64(float64(floor) / o.Slowest),
		// Aimed calls fall in the seconds aimed at whatever their spread:
		// neither the guard nor the margin is needed (see phase.go).
		aimedFloor: spacing,
	}
}

// options are the Options optFns set, with the defaults filled in.
func options(optFns []func(*Options)) Options {
	o := Options{Name: DefaultName, Clock: time.Now, ProbeStep: DefaultProbeStep,
		MinWiden: DefaultMinWiden, MaxWiden: DefaultMaxWiden, Slowest: DefaultSlowest}
	for _, fn := range optFns {
		fn(&o)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Guard == 0 {
		o.Guard = DefaultGuard
	}
	if o.Slowest <= 0 || o.Slowest > 1 {
		o.Slowest = DefaultSlowest
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = DefaultMaxDelay
	}
	if o.Horizon <= 0 {
		o.Horizon = DefaultHorizon
	}
	if o.PhaseTolerance <= 0 {
		o.PhaseTolerance = DefaultPhaseTolerance
	}
	if o.AimHoldOff <= 0 {
		o.AimHoldOff = DefaultAimHoldOff
	}
	return o
}

// floorSpacing is, in microseconds, the narrowest spacing of a pacer at
// ratePerMinute while the service's clock is unknown: R spread over a
// minute and the window margin, or, against a limiter that does not count
// whole seconds (IgnoreServiceClock), 1/R plus the guard when that is
// wider (negative guard or margin: none).
func (o Options) floorSpacing(ratePerMinute float64) int64 {
	spacing := int64(math.Ceil(float64(time.Minute.Microseconds()) / ratePerMinute))
	// Slots spread a minute and the window margin over R: the service
	// counts calls in a window of whole seconds (see DefaultWindowMargin).
	margin := o.WindowMargin
	if margin == 0 {
		margin = DefaultUnaimedMargin
		if o.probes(spacing) {
			margin = DefaultWindowMargin
		}
	}
	window := int64(math.Ceil(float64((time.Minute + max(margin, 0)).Microseconds()) / ratePerMinute))
	if !o.IgnoreServiceClock {
		return max(spacing, window)
	}
	// The guard is capped at a small share of the spacing: at high rates
	// (a service with a burst, or tests) it must not change the rate. The
	// margin's share of the spacing also covers what the guard does, hence
	// the larger of the two, not their sum.
	guarded := spacing + min(max(o.Guard, 0).Microseconds(), int64(float64(spacing)*maxGuardShare))
	return max(guarded, window)
}

// probes reports whether a pacer with o at spacing (1/R, microseconds)
// learns the service's clock and aims: only while R slots are at least a
// second apart (see aimFor).
func (o Options) probes(spacing int64) bool { return !o.IgnoreServiceClock && spacing >= second }

// Spacing is the spacing between calls a Shared pacer made with optFns
// keeps at ratePerMinute until it has learnt the service's clock.
// Above ItemRatePerMinute it is the shards' spacing over their number.
func Spacing(ratePerMinute float64, optFns ...func(*Options)) time.Duration {
	o := options(optFns)
	k := o.shards(ratePerMinute)
	shard := time.Duration(o.floorSpacing(ratePerMinute/float64(k))) * time.Microsecond
	return shard / time.Duration(k)
}

// DefaultSpacing is the spacing a Shared pacer with the default options
// keeps at ratePerMinute until it has learnt the service's clock: what
// callers that plan around its rate should assume.
func DefaultSpacing(ratePerMinute float64) time.Duration { return Spacing(ratePerMinute) }

// Rate is the most calls a minute a Shared pacer with the default options
// makes at ratePerMinute before it has learnt the service's clock (60 s
// over DefaultSpacing): the rate to feed work at so that the schedule
// neither runs dry nor builds a backlog.
func Rate(ratePerMinute float64) float64 {
	return float64(time.Minute) / float64(DefaultSpacing(ratePerMinute))
}

// Stats returns the pacer's counters.
func (p *itemPacer) Stats() Stats {
	p.mu.Lock()
	first := p.firstAimed
	p.mu.Unlock()
	return Stats{Slots: p.slots.Load(), Writes: p.writes.Load(), Conflicts: p.conflicts.Load(), Reads: p.reads.Load(), Lost: p.lost.Load(),
		Throttles: p.throttles.Load(), Widenings: p.widenings.Load(), Repairs: p.repairs.Load(),
		AimedSlots: p.aimed.Load(), FirstAimed: first, PhaseResets: p.phaseResets.Load(), BadDates: p.badDates.Load()}
}

// Interval returns the spacing last seen in the table (the configured one
// before the first slot).
func (p *itemPacer) Interval() time.Duration {
	st := p.snapshot()
	if !st.known {
		return time.Duration(p.floor) * time.Microsecond
	}
	return time.Duration(st.interval) * time.Microsecond
}

func (p *itemPacer) snapshot() schedule {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// observe records an item seen in an answer.
func (p *itemPacer) observe(item map[string]types.AttributeValue) schedule {
	st := decodeSchedule(item)
	now := micros(p.opts.Clock())
	p.mu.Lock()
	defer p.mu.Unlock()
	if st.known {
		p.state, p.seenAt = st, now
	}
	return st
}

func (p *itemPacer) remember(st schedule) {
	now := micros(p.opts.Clock())
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state, p.seenAt = st, now
}

// hint is the last state seen and how long ago (microseconds).
func (p *itemPacer) hint(now int64) (schedule, int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state, now - p.seenAt
}

// read reads the schedule item with one consistent read, and records it.
func (p *itemPacer) read(ctx context.Context) (schedule, error) {
	p.reads.Add(1)
	out, err := p.ddb.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(p.table),
		Key:            p.key,
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return schedule{}, fmt.Errorf("pacer: read the schedule: %w", err)
	}
	return p.observe(out.Item), nil
}

// update sends one UpdateItem on the schedule item, counting it, and
// returns the item as it was before (ALL_OLD), also on a conditional
// failure, which it reports as conflict=true.
func (p *itemPacer) update(ctx context.Context, update expression.UpdateBuilder, cond expression.ConditionBuilder) (old map[string]types.AttributeValue, conflict bool, err error) {
	expr, err := expression.NewBuilder().WithUpdate(update).WithCondition(cond).Build()
	if err != nil {
		return nil, false, fmt.Errorf("build expression: %w", err)
	}
	p.writes.Add(1)
	out, err := p.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(p.table),
		Key:                                 p.key,
		UpdateExpression:                    expr.Update(),
		ConditionExpression:                 expr.Condition(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValues:                        types.ReturnValueAllOld,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		p.conflicts.Add(1)
		return ccf.Item, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	return out.Attributes, false, nil
}

func decodeSchedule(item map[string]types.AttributeValue) schedule {
	next, ok1 := number(item[attrNext])
	interval, ok2 := number(item[attrInterval])
	if !ok1 || !ok2 || interval <= 0 {
		return schedule{}
	}
	until, _ := number(item[attrWidenUntil])
	paused, _ := number(item[attrPausedUntil])
	st := schedule{known: true, next: next, interval: interval, widenUntil: until, pausedUntil: paused}
	st.phaseReset, _ = number(item[attrPhaseReset])
	st.aim, st.hasAim = number(item[attrAim])
	lo, okLo := number(item[attrPhaseLow])
	hi, okHi := number(item[attrPhaseHigh])
	if okLo && okHi && lo <= hi {
		// What the item holds was learnt after its last reset.
		st.phase = phase{known: true, lo: lo, hi: hi, since: st.phaseReset}
	}
	return st
}

func number(v types.AttributeValue) (int64, bool) {
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(n.Value, 10, 64)
	return i, err == nil
}

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us) }
