package pacesim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// Load is how uploads arrive.
type Load string

const (
	// Backlog: every worker has a message from the start, and uploads go
	// on arriving faster than R (backlogShare of it), so every instance
	// stays busy and the schedule runs ahead: the rate is the pacer's
	// alone. The queue grows as a job's or a steady producer's would.
	Backlog Load = "backlog"
	// Burst: the whole run's uploads are in the queue at once (a bulk
	// upload): every worker takes slots as fast as it can hold them, the
	// schedule's writes come in a burst of the workers' pace, not R's.
	Burst Load = "burst"
	// Light: uploads arrive at random (Poisson) at lightShare of R, so the
	// schedule is mostly idle and instances race for the free slot.
	Light Load = "light"
	// AtRate: uploads arrive evenly at R, as the bench's throughput stage
	// sends them (its real-time run is set beside this one).
	AtRate Load = "at-rate"
)

const backlogShare = 1.25

const lightShare = 0.5

// Config is one run of the model.
type Config struct {
	// Rate is R: the service's limit in calls a minute and the rate the
	// stack is configured with.
	Rate float64
	// Instances is N, the predictor's concurrent instances; each runs
	// Workers at once (0: predictor.DefaultParallelism).
	Instances, Workers int
	// Limiter is the service's: its own sliding log of whole seconds (R
	// per 60 s) or a strict token bucket (burst 1).
	Limiter geosim.Limiter
	// Pacing is settings.PacingShared (the default) or PacingInstance.
	Pacing string
	Load   Load
	// Duration is the span the rate is measured over, from the first call.
	Duration time.Duration
	Seed     uint64
	// Seeds is how many seeds RunPlan runs the row with, Seed and the
	// ones after it (0: one); Run runs Seed alone.
	Seeds int
	// Store is the schedule store's timing; zero: DefaultStoreLatency.
	Store StoreLatency
	// PacerOptions tune the shared pacers beyond what the stack sets (a
	// test's broken pacer).
	PacerOptions []func(*pacer.Options)
	// Trace, when set, receives every call as the service saw it (see
	// TraceCall): what a 429 is explained from.
	Trace func(TraceCall)
}

// TraceCall is one call as the service counted it.
type TraceCall struct {
	// At is true time; Service the service's clock; Sent when the
	// instance sent it (true time); Slot the slot it was called in, on
	// the instance's clock.
	At, Service, Sent, Slot time.Time
	// Granted is when the slot was granted (true time).
	Granted    time.Time
	Instance   int
	Held       bool
	Accepted   bool
	RetryAfter time.Duration
}

// The model's timings of everything around the pacer, and where they come
// from. They are assumptions, stated in docs/benchmarks.md; the
// rate-relevant ones are bounded by what the pacer allows for.
const (
	// serviceLatency is the service's time to answer a prediction (the
	// bench's L).
	serviceLatency = 200 * time.Millisecond
	// maxServiceOffset bounds the service's clock's offset from the
	// instances' (the bench's), drawn per run; lambdaSkew spreads the
	// instances' clocks over ±5 ms, so any two are within 10 ms
	// (pacer.DefaultGuard's reading of Lambda).
	maxServiceOffset = 2 * time.Second
	lambdaSkew       = 5 * time.Millisecond
	// Lambda's SQS event source starts five concurrent batches and adds
	// "up to 300 more instances per minute" while messages remain
	// (services-sqs-scaling): instances start at that pace, and the rate
	// is measured from settle after the last has started.
	initialInstances = 5
	instanceRamp     = time.Minute / 300
	settle           = 10 * time.Second
)

// rampEnd is when the last of n instances has started.
func rampEnd(n int) time.Duration {
	return time.Duration(max(n-initialInstances, 0)) * instanceRamp
}

// uniform draws a duration in [lo, hi).
func uniform(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
}

// Timings drawn per step (uniform): a delivery's receive and invoke, the
// work before the slot (the claims, the object opened and sniffed), a
// hold's release and visibility change, the timer's overshoot, the network
// each way and the upload before the service stamps the call (aimLate's
// 200 ms covers overshoot and upload).
var (
	receiveTime = [2]time.Duration{5 * time.Millisecond, 30 * time.Millisecond}
	preworkTime = [2]time.Duration{10 * time.Millisecond, 30 * time.Millisecond}
	releaseTime = [2]time.Duration{5 * time.Millisecond, 15 * time.Millisecond}
	overshoot   = [2]time.Duration{0, 2 * time.Millisecond}
	networkLeg  = [2]time.Duration{5 * time.Millisecond, 25 * time.Millisecond}
	uploadTime  = [2]time.Duration{0, 150 * time.Millisecond}
	// Against the strict bucket the calls' spread is the bench's (a local
	// service, 300 KB photos): a bucket with no burst refuses a call that
	// lands even a little early, and no pacer spaces arrivals that vary
	// by more than its guard.
	strictNetworkLeg = [2]time.Duration{500 * time.Microsecond, 2 * time.Millisecond}
	strictUploadTime = [2]time.Duration{0, 3 * time.Millisecond}
)

// The predictor's slot rules (pkg/predictor/slots.go), with its defaults.
var (
	maxSlotWait      = predictor.DefaultMaxSlotWait
	heldSlotLead     = predictor.DefaultHeldSlotLead
	heldSlotLateness = predictor.DefaultHeldSlotLateness
	maxServerDelay   = time.Duration(settings.MaxServerDelaySeconds.DefaultInt()) * time.Second
	// holdHorizon is the furthest a slot is taken ahead: SQS's 12 hours.
	holdHorizon = 12 * time.Hour
	// visibilityTimeout is the queue's (six times the default timeout): a
	// message whose slot could not be taken at all comes back after it.
	visibilityTimeout = 6 * time.Duration(settings.PredictorTimeoutSeconds.DefaultInt()) * time.Second
)

// Result is what one run measured.
type Result struct {
	Config Config
	// Window is the span measured: Duration, from settle after the last
	// instance started.
	Window time.Duration
	// Offered is the calls the window could hold at R; Accepted and
	// Refused the calls in it the service counted and answered 429.
	Offered, Accepted, Refused int
	// Share is Accepted / Offered (backlog), or the share of uploads
	// called within the run (light).
	Share float64
	// Pacer counters, summed over the instances (shared pacing).
	Slots, Writes, Conflicts, Reads int64
	Store                           StoreStats
	// WritesPerSlot, ConflictsPerSlot and ReadsPerSlot are the pacers'
	// requests per slot granted in the whole run (each slot is one call,
	// in the run or held beyond it).
	WritesPerSlot, ConflictsPerSlot, ReadsPerSlot float64
	// WriteUnitsPerSecond is the schedule's mean over the run.
	WriteUnitsPerSecond float64
	// TakeP99 is the p99 of the time a Reserve took (its writes, their
	// conflicts, throttling and the SDK's retries): the wait for a slot
	// that contention adds. SlotP99 is the p99 from a message's first
	// receive to its call's send (light load: the wait an upload meets).
	TakeP99, SlotP99 time.Duration
	// Holds counts messages returned holding a slot; GivenUp the held
	// slots given up (paused or back too late); TakeErrors the Reserves
	// that failed (throttled past the SDK's retries).
	Holds, GivenUp, TakeErrors int
	// Aimed is the slots granted aimed inside a second of the service's
	// clock; LearntAfter when the first was, from the run's start (0: none).
	Aimed       int64
	LearntAfter time.Duration
	// Elapsed is the wall time the run took.
	Elapsed time.Duration
}

// run is one model run's state.
type run struct {
	cfg     Config
	s       *sched
	rng     *rand.Rand
	st      *store
	q       *queue
	lim     *geosim.RateLimiter
	offset  time.Duration // the service's clock minus true time
	start   time.Time
	calls   []call
	takes   []time.Duration
	slotWts []time.Duration
	holds   int
	givenUp int
	errs    int
	shared  []*pacer.Shared
}

// call is one call as the service saw it, on true time.
type call struct {
	at       time.Time
	accepted bool
}

var epoch = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// Run runs the model once.
func Run(cfg Config) (*Result, error) {
	if cfg.Rate <= 0 || cfg.Instances < 1 || cfg.Duration <= 0 {
		return nil, fmt.Errorf("pacesim: rate %v, %d instances, duration %v: want all positive", cfg.Rate, cfg.Instances, cfg.Duration)
	}
	if cfg.Workers <= 0 {
		cfg.Workers = predictor.DefaultParallelism
	}
	if cfg.Pacing == "" {
		cfg.Pacing = settings.PacingShared
	}
	if cfg.Limiter == "" {
		cfg.Limiter = geosim.LimiterSlidingLog
	}
	if cfg.Load == "" {
		cfg.Load = Backlog
	}
	if cfg.Store == (StoreLatency{}) {
		cfg.Store = DefaultStoreLatency
	}
	began := time.Now()
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x9ace))
	s := newSched(epoch)
	st, err := newStore(s, rng, cfg.Store)
	if err != nil {
		return nil, err
	}
	r := &run{cfg: cfg, s: s, rng: rng, st: st, q: newQueue(s), start: epoch,
		lim:    geosim.NewRateLimiter(cfg.Limiter, cfg.Rate, 1),
		offset: time.Duration(rng.Int64N(int64(2*maxServiceOffset))) - maxServiceOffset}
	if err := r.startInstances(); err != nil {
		return nil, err
	}
	end := r.feed()
	s.run(end)
	res := r.result()
	res.Elapsed = time.Since(began)
	return res, nil
}

// tail is how long a run goes on past its window: held slots near the
// window's end are called in it.
const tail = 20 * time.Second

// from is when the window measured starts: settle after the last
// instance has started.
func (r *run) from() time.Duration { return rampEnd(r.cfg.Instances) + settle }

// feed starts the uploads and returns when the run ends.
func (r *run) feed() time.Time {
	cfg := r.cfg
	end := r.start.Add(r.from() + cfg.Duration + tail)
	switch cfg.Load {
	case Burst:
		// More than the window and its tail can call, plus one per worker.
		n := int(cfg.Rate*(r.from()+cfg.Duration+tail).Minutes()*1.05) + cfg.Instances*cfg.Workers
		for i := range n {
			r.q.add(&message{id: i, arrived: r.start})
		}
		return end
	case Backlog:
		for i := range cfg.Instances * cfg.Workers {
			r.q.add(&message{id: -1 - i, arrived: r.start})
		}
	}
	share := lightShare
	switch cfg.Load {
	case Backlog:
		share = backlogShare
	case AtRate:
		share = 1
	}
	mean := time.Duration(float64(time.Minute) / (cfg.Rate * share))
	r.s.spawn(func(a *actor) {
		for i := 0; ; i++ {
			gap := mean
			if cfg.Load != AtRate {
				gap = time.Duration(r.rng.ExpFloat64() * float64(mean))
			}
			if a.sleep(gap) != nil || r.s.now.After(r.start.Add(r.from()+cfg.Duration)) {
				return
			}
			r.q.add(&message{id: i, arrived: r.s.now})
		}
	})
	return end
}

// instance is one predictor instance: its clock, its pacer and the lock
// that keeps its workers' Reserves one at a time (the pacer's own
// reserving mutex, which a simulated worker must not block on).
type instance struct {
	r         *run
	id        int
	skew      time.Duration
	pace      pacingAPI
	reserving simLock
}

// pacingAPI is what the predictor uses of a pacer (pkg/predictor's Pacer,
// lateAllowancer and answer learner).
type pacingAPI interface {
	Reserve(ctx context.Context, within time.Duration) (time.Duration, error)
	Throttled(ctx context.Context, retryAfter time.Duration)
	Valid(ctx context.Context, slot time.Time) (bool, error)
}

func (in *instance) now() time.Time { return in.r.s.now.Add(in.skew) }

func (r *run) startInstances() error {
	cfg := r.cfg
	for i := range cfg.Instances {
		in := &instance{r: r, id: i}
		if cfg.Instances > 1 {
			in.skew = -lambdaSkew + time.Duration(i)*2*lambdaSkew/time.Duration(cfg.Instances-1)
		}
		startAt := time.Duration(max(i-initialInstances+1, 0)) * instanceRamp
		for range cfg.Workers {
			r.s.spawn(func(a *actor) {
				if a.sleep(startAt) == nil {
					in.work(a)
				}
			})
		}
		if cfg.Pacing == settings.PacingInstance {
			in.pace = pacer.NewInstance(cfg.Rate/float64(cfg.Instances), func(o *pacer.InstanceOptions) { o.Clock = in.now })
			continue
		}
		opts := func(o *pacer.Options) {
			o.Name = "sim"
			o.Clock = in.now
			o.MaxDelay = maxServerDelay
			o.Horizon = holdHorizon
			o.IgnoreServiceClock = cfg.Limiter == geosim.LimiterTokenBucket
		}
		p, err := pacer.NewShared(r.st.client(), r.st.table, cfg.Rate, append([]func(*pacer.Options){opts}, cfg.PacerOptions...)...)
		if err != nil {
			return err
		}
		in.pace = p
		r.shared = append(r.shared, p)
	}
	return nil
}

// work is one worker's loop: receive a message, take or use its slot,
// call, until the run is over.
func (in *instance) work(a *actor) {
	r := in.r
	for {
		m := r.q.receive(a)
		if m == nil {
			return
		}
		if a.sleep(uniform(r.rng, receiveTime[0], receiveTime[1])) != nil ||
			a.sleep(uniform(r.rng, preworkTime[0], preworkTime[1])) != nil {
			return
		}
		if !in.handle(a, m) {
			return
		}
	}
}

// handle is one delivery of m (pkg/predictor's slotFor, waitForRate,
// hold and paceRetry); false when the run is over.
func (in *instance) handle(a *actor, m *message) bool {
	r := in.r
	ctx := context.Background()
	slot, held := time.Time{}, false
	if !m.slot.IsZero() {
		ok, err := in.pace.Valid(ctx, m.slot)
		if r.s.stopping {
			return false
		}
		late := in.now().Sub(m.slot)
		if err == nil && ok && late <= in.lateAllowed() {
			slot, held = m.slot, true
		} else {
			r.givenUp++
		}
		m.slot = time.Time{}
	}
	for attempt := 0; ; attempt++ {
		if slot.IsZero() {
			var ok bool
			if slot, ok = in.take(a, m); !ok {
				return !r.s.stopping
			}
		}
		wait := slot.Sub(in.now())
		limit := maxSlotWait
		if held {
			limit += heldSlotLead
		}
		if wait > limit {
			return in.hold(a, m, slot)
		}
		if a.sleep(wait+uniform(r.rng, overshoot[0], overshoot[1])) != nil {
			return false
		}
		if m.receives == 1 && attempt == 0 || held {
			r.slotWts = append(r.slotWts, r.s.now.Sub(m.arrived))
		}
		retryAfter, ok := in.call(a, m, slot, held)
		if r.s.stopping {
			return false
		}
		if ok {
			return true
		}
		in.pace.Throttled(ctx, min(retryAfter, maxServerDelay))
		backoff := min(retryAfter, maxServerDelay)
		slot, held = time.Time{}, false
		if backoff > maxSlotWait {
			earliest := in.now().Add(backoff)
			s, ok := in.take(a, m)
			if !ok {
				return !r.s.stopping
			}
			if s.Before(earliest) {
				r.q.giveBack(m, r.s.now.Add(backoff))
				return true
			}
			return in.hold(a, m, s)
		}
		if a.sleep(backoff) != nil {
			return false
		}
	}
}

// take reserves a slot for m as the predictor does (within the hold
// horizon); when none is granted the message goes back (after the
// horizon for no slot, after the visibility timeout for an error) and ok
// is false.
func (in *instance) take(a *actor, m *message) (slot time.Time, ok bool) {
	r := in.r
	if in.reserving.lock(a) != nil {
		return time.Time{}, false
	}
	began := r.s.now
	d, err := in.pace.Reserve(context.Background(), holdHorizon)
	in.reserving.unlock(r.s)
	if r.s.stopping {
		return time.Time{}, false
	}
	r.takes = append(r.takes, r.s.now.Sub(began))
	switch {
	case errors.Is(err, pacer.ErrNoSlot):
		r.q.giveBack(m, r.s.now.Add(holdHorizon))
		return time.Time{}, false
	case err != nil:
		r.errs++
		r.q.giveBack(m, r.s.now.Add(visibilityTimeout))
		return time.Time{}, false
	}
	m.granted = r.s.now
	return in.now().Add(d), true
}

// hold returns m to the queue holding slot: released, and hidden until
// HeldSlotLead before the slot, in whole seconds rounded down.
func (in *instance) hold(a *actor, m *message, slot time.Time) bool {
	r := in.r
	if a.sleep(uniform(r.rng, releaseTime[0], releaseTime[1])) != nil {
		return false
	}
	hide := max(slot.Sub(in.now())-heldSlotLead, 0).Truncate(time.Second)
	m.slot = slot
	r.holds++
	r.q.giveBack(m, r.s.now.Add(hide))
	return true
}

// lateAllowed is how late a held slot may still be called in (the
// predictor's lateAllowed).
func (in *instance) lateAllowed() time.Duration {
	allowed := heldSlotLateness
	if p, ok := in.pace.(interface {
		LateAllowance() (time.Duration, bool)
	}); ok {
		if l, ok := p.LateAllowance(); ok {
			allowed = min(allowed, l)
		}
	}
	return allowed
}

// call makes one call: the request and its upload reach the service,
// which counts it (or refuses it) on its clock, answers after its latency,
// and the answer's Date teaches the pacer the service's clock.
func (in *instance) call(a *actor, m *message, slot time.Time, held bool) (retryAfter time.Duration, ok bool) {
	r := in.r
	sent := r.s.now
	net, upload := networkLeg, uploadTime
	if r.cfg.Limiter == geosim.LimiterTokenBucket {
		net, upload = strictNetworkLeg, strictUploadTime
	}
	if a.sleep(uniform(r.rng, net[0], net[1])+uniform(r.rng, upload[0], upload[1])) != nil {
		return 0, false
	}
	ok, retryAfter = r.lim.Take(r.s.now.Add(r.offset))
	r.calls = append(r.calls, call{at: r.s.now, accepted: ok})
	if r.cfg.Trace != nil {
		r.cfg.Trace(TraceCall{At: r.s.now, Service: r.s.now.Add(r.offset), Sent: sent, Slot: slot, Granted: m.granted, Instance: in.id,
			Held: held, Accepted: ok, RetryAfter: retryAfter})
	}
	if ok && a.sleep(serviceLatency) != nil {
		return 0, false
	}
	date := r.s.now.Add(r.offset).UTC().Format(http.TimeFormat)
	if a.sleep(uniform(r.rng, net[0], net[1])) != nil {
		return 0, false
	}
	if l, isLearner := in.pace.(interface{ Answered(string, time.Duration) }); isLearner {
		l.Answered(date, r.s.now.Sub(sent))
	}
	return retryAfter, ok
}

func (r *run) result() *Result {
	cfg := r.cfg
	res := &Result{Config: cfg, Window: cfg.Duration, Holds: r.holds, GivenUp: r.givenUp, TakeErrors: r.errs,
		Store: r.st.stats(), TakeP99: percentile(r.takes, 0.99), SlotP99: percentile(r.slotWts, 0.99)}
	slices.SortFunc(r.calls, func(a, b call) int { return a.at.Compare(b.at) })
	total := 0
	for _, c := range r.calls {
		if c.accepted {
			total++
		}
	}
	if len(r.calls) > 0 {
		from := r.start.Add(r.from())
		for _, c := range r.calls {
			if c.at.Before(from) || !c.at.Before(from.Add(cfg.Duration)) {
				continue
			}
			if c.accepted {
				res.Accepted++
			} else {
				res.Refused++
			}
		}
	}
	res.Offered = int(cfg.Rate * cfg.Duration.Minutes())
	switch cfg.Load {
	case Backlog, Burst, AtRate:
		res.Share = float64(res.Accepted) / float64(res.Offered)
	case Light:
		res.Share = float64(total) / max(float64(r.arrivals()), 1)
	}
	var ps pacer.Stats
	for _, p := range r.shared {
		ps = ps.Plus(p.Stats())
	}
	res.Slots, res.Writes, res.Conflicts, res.Reads, res.Aimed = ps.Slots, ps.Writes, ps.Conflicts, ps.Reads, ps.AimedSlots
	if !ps.FirstAimed.IsZero() {
		res.LearntAfter = ps.FirstAimed.Sub(r.start)
	}
	if res.Slots > 0 {
		res.WritesPerSlot = float64(res.Writes) / float64(res.Slots)
		res.ConflictsPerSlot = float64(res.Conflicts) / float64(res.Slots)
		res.ReadsPerSlot = float64(res.Reads) / float64(res.Slots)
	}
	res.WriteUnitsPerSecond = res.Store.WriteUnits / (r.from() + cfg.Duration + tail).Seconds()
	return res
}

// arrivals is how many uploads a light run offered.
func (r *run) arrivals() int { return r.q.arrived }

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(int(float64(len(s))*p), len(s)-1)]
}
