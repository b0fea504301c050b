package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/bench"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/s3event"
)

// throughputConfig is the load: the service's limit and latency, and the
// pipeline's shape.
type throughputConfig struct {
	RatePerMinute float64 // R: the simulator's limit and GEO_RATE_PER_MINUTE
	SimBurst      int     // the simulator's token bucket burst
	// SlidingLog limits the simulator with the service's own limiter, a
	// sliding log of whole-second timestamps (R per 60 s), instead of the
	// token bucket of SimBurst.
	SlidingLog bool
	Latency    time.Duration // L: the simulator's latency per prediction
	Instances  int           // N: concurrent function instances (GEO_MAX_CONCURRENCY)
	BatchSize  int
	Duration   time.Duration // how long uploads arrive, at UploadRate
	// UploadRate is how many uploads arrive a minute; 0 means R.
	UploadRate float64
	RetryDelay time.Duration // local shortening of the visibility timeout for failed messages
	// Pacing is GEO_PACING: predictor.PacingShared or PacingInstance.
	Pacing string
	// ConfiguredRate is GEO_RATE_PER_MINUTE; 0 means R (correctly set).
	ConfiguredRate float64
	// Skew spreads the instances' clocks evenly over [-Skew, +Skew].
	Skew time.Duration
	// Copies is the share of uploads that are exact copies of an earlier
	// photo under another key (issue 37): every other copy is uploaded at
	// the same instant as its original, the rest later.
	Copies float64
	// ServiceOffset sets the simulator's clock this far from the
	// instances' (see pacing.go).
	ServiceOffset time.Duration
}

// configuredRate is the rate the pipeline is told.
func (c throughputConfig) configuredRate() float64 {
	if c.ConfiguredRate > 0 {
		return c.ConfiguredRate
	}
	return c.RatePerMinute
}

// uploadRate is how many uploads arrive a minute.
func (c throughputConfig) uploadRate() float64 {
	if c.UploadRate > 0 {
		return c.UploadRate
	}
	return c.RatePerMinute
}

// skewOf is instance i's clock offset.
func (c throughputConfig) skewOf(i int) time.Duration {
	if c.Skew == 0 || c.Instances < 2 {
		return 0
	}
	return -c.Skew + time.Duration(i)*2*c.Skew/time.Duration(c.Instances-1)
}

type throughputResult struct {
	Config            throughputConfig
	Uploads           int
	Succeeded         int
	OtherFinal        int // rejected or failed records
	DeadLetters       int
	Lost              int // neither a final record nor a dead letter
	Calls, Status429  int
	Charged           int
	AchievedPerMinute float64
	UploadToRecord    bench.Stats
	Invocations       int
	PacerWrites       int64         // UpdateItem requests of the shared pacers
	PacerConflicts    int64         // of which conditional failures
	Widenings         int64         // 429s that widened the shared spacing
	Pacers            []pacer.Stats // each shared pacer's counters
	Started           time.Time     // the run's first upload
	FinalSpacing      time.Duration
	Settled           settling
	BilledSeconds     float64 // sum over invocations, each rounded up to 1 ms
	VisibilityChanges int     // messages delayed by the handlers (ChangeMessageVisibility)
	LogBytes          int64
	Usage             bench.Usage
	RecordBytes       int // the first succeeded record's size (cost.go)
	Elapsed           time.Duration

	// With Copies: distinct photos among the uploads, records reused from
	// another object's answer, and the copies sent at the same instant as
	// their original: how many, how many a different instance received
	// first, and the longest gap between the two sends.
	Distinct, Reused    int
	SameInstantPairs    int
	PairsOnTwoInstances int
	SameInstantGapMax   time.Duration
}

// measureThroughput uploads images at rate R for the configured duration
// while N instances, each its own handler configured as the stack
// configures it, drain the queue against a rate-limited simulator: setup,
// run, then collection of what happened.
func measureThroughput(ctx context.Context, e *localEnv, st stack, tc throughputConfig, progress func(string, ...any)) (*throughputResult, error) {
	rig, err := setupThroughput(ctx, e, st, tc)
	if err != nil {
		return nil, err
	}
	defer rig.close()
	uploads, err := rig.uploadAtRate(ctx, e, progress)
	if err != nil {
		return nil, err
	}
	rig.drain(ctx)
	res, err := rig.collect(ctx, e, uploads, progress)
	if err != nil {
		return nil, err
	}
	res.RecordBytes, err = recordBytes(ctx, e, uploads)
	return res, err
}

// throughputRig is one throughput run's simulator, queue and instances.
type throughputRig struct {
	tc      throughputConfig
	sim     *geosim.Server
	stopSim func()
	counter *bench.RequestCounter
	logs    *countingWriter
	queue   *sqsqueue.Queue
	shared  []*pacer.Shared // the instances' shared pacers, for their counters
	start   time.Time
	prefix  string // keys and the schedule unique to this run

	stop    context.CancelFunc // stops the pollers
	pollers sync.WaitGroup

	mu          sync.Mutex
	receivedBy  map[string]int // message id -> the instance that first received it
	invocations int
	billed      float64 // seconds, each invocation rounded up to 1 ms
	// visibility counts the messages the handlers delayed (held for a
	// slot, or waiting for credits, the key or the budget).
	visibility atomic.Int64
}

// setupThroughput starts the simulator and N instances polling the queue,
// each its own handler with its own pacer: a client of the shared schedule,
// or its own limiter at R/N.
func setupThroughput(ctx context.Context, e *localEnv, st stack, tc throughputConfig) (*throughputRig, error) {
	sim, simURL, stopSim, err := startSimulator(tc.limiter(), geosim.WithLatency(tc.Latency))
	if err != nil {
		return nil, err
	}
	r := &throughputRig{tc: tc, sim: sim, stopSim: stopSim, counter: newCounter(), logs: &countingWriter{},
		queue: sqsqueue.New(
			sqsqueue.WithVisibilityTimeout(6*st.Timeout), // the stack's queue setting
			sqsqueue.WithMaxReceiveCount(benchMaxReceiveCount)),
		start: time.Now(), receivedBy: map[string]int{}}
	// A second run must not find the first's records or slots.
	r.prefix = fmt.Sprintf("throughput-%d/", r.start.UnixNano())
	s3c, ddbc := e.counted(r.counter)
	runCtx, stop := context.WithCancel(ctx)
	r.stop = stop
	for i := range tc.Instances {
		env := functionEnv(st, simURL, tc.configuredRate(), tc.Instances)
		env[envvars.Pacing] = tc.Pacing
		env[envvars.PipelineName] = strings.TrimSuffix(r.prefix, "/")
		skew := tc.skewOf(i)
		pace, err := newPacer(env, ddbc, func() time.Time { return time.Now().Add(skew) }, tc.pacerOptions()...)
		if err != nil {
			r.close()
			return nil, err
		}
		if s, ok := pace.(*pacer.Shared); ok {
			r.shared = append(r.shared, s)
		}
		h, err := newHandler(env, s3c, ddbc, r.logs, pace, countingVisibility{next: sqsqueue.Visibility{Queue: r.queue}, n: &r.visibility})
		if err != nil {
			r.close()
			return nil, err
		}
		p := &sqsqueue.Poller{
			Queue: r.queue, Handler: h.Handle, Concurrency: 1, BatchSize: tc.BatchSize,
			Timeout: st.Timeout, RetryDelay: tc.RetryDelay,
			OnBatch: func(res sqsqueue.BatchResult) {
				r.mu.Lock()
				for _, m := range res.Messages {
					if _, ok := r.receivedBy[m.MessageId]; !ok {
						r.receivedBy[m.MessageId] = i
					}
				}
				r.invocations++
				r.billed += bench.BilledSeconds(res.Duration.Seconds())
				r.mu.Unlock()
			},
		}
		r.pollers.Go(func() { _ = p.Run(runCtx) })
	}
	return r, nil
}

// close stops the pollers and the simulator.
func (r *throughputRig) close() {
	r.stop()
	r.pollers.Wait()
	r.stopSim()
}

// upload is one planned upload: the photo it carries (uploads with the same
// content are exact copies) and whether it is sent at the same instant as
// the upload before it.
type upload struct {
	content     int
	sameInstant bool
}

// planUploads lays out total uploads of which a share are copies of an
// earlier photo: every other copy is of the upload just before it, sent at
// the same instant (so two instances can receive the two at once), the
// others of the photo three distinct photos back, uploaded well before.
func planUploads(total int, copies float64) []upload {
	plan := make([]upload, 0, total)
	distinct, nCopies := 0, 0
	for i := range total {
		if i > 0 && int(float64(i+1)*copies) > int(float64(i)*copies) {
			u := upload{content: plan[i-1].content, sameInstant: true}
			if nCopies%2 == 1 {
				u = upload{content: max(distinct-3, 0)}
			}
			nCopies++
			plan = append(plan, u)
			continue
		}
		plan = append(plan, upload{content: distinct})
		distinct++
	}
	return plan
}

// sent is one upload as made: its notification and the queue's message id.
type sent struct {
	obj         s3event.ObjectCreated
	id          string
	content     int
	sameInstant bool
	gap         time.Duration // after the upload before it, for sameInstant
}

// uploadAtRate puts UploadRate images a minute for the run's duration and
// notifies the queue of each, as S3 does; a copy sent at the same instant
// as its original goes right after it, not at a slot of its own.
func (r *throughputRig) uploadAtRate(ctx context.Context, e *localEnv, progress func(string, ...any)) ([]sent, error) {
	tc := r.tc
	plan := planUploads(int(tc.uploadRate()*tc.Duration.Minutes()), tc.Copies)
	interval := time.Duration(float64(time.Minute) / tc.uploadRate())
	uploads := make([]sent, 0, len(plan))
	img := fakeJPEG(300<<10, 7)
	distinctAt := len(img) / 2
	for img[distinctAt-1] == 0xFF { // not the stuffed byte of an 0xFF
		distinctAt++
	}
	slot := 0
	var last time.Time
	for i, u := range plan {
		if !u.sameInstant {
			if wait := time.Until(r.start.Add(time.Duration(slot) * interval)); wait > 0 {
				time.Sleep(wait)
			}
			slot++
		}
		// Distinct photos, cheaply: the run and a counter in the
		// entropy-coded data (metadata would be blanked by
		// uploadMetadata=strip). With reuseResults=content a photo of an
		// earlier run would be reused with no call: every run's are its own.
		copy(img[distinctAt:], fmt.Sprintf("%s%08d", r.prefix, u.content))
		obj, err := e.put(ctx, fmt.Sprintf("%s%05d.jpg", r.prefix, i), img)
		if err != nil {
			return nil, err
		}
		body, err := s3event.Body(obj)
		if err != nil {
			return nil, err
		}
		if u.sameInstant {
			// Let an instance take the original first, as SQS's pollers
			// would spread two messages over two receives.
			for by := time.Now().Add(20 * time.Millisecond); r.queue.Depth() > 0 && time.Now().Before(by); {
				time.Sleep(time.Millisecond)
			}
		}
		s := sent{obj: obj, id: r.queue.Send(body), content: u.content, sameInstant: u.sameInstant}
		now := time.Now()
		if u.sameInstant {
			s.gap = now.Sub(last)
		}
		last = now
		uploads = append(uploads, s)
		if (i+1)%(len(plan)/4+1) == 0 {
			progress("throughput: %d/%d uploads, queue depth %d", i+1, len(plan), r.queue.Depth())
		}
	}
	return uploads, nil
}

// drain waits until the queue is empty (two minutes at most), then stops
// the instances.
func (r *throughputRig) drain(ctx context.Context) {
	drainBy := time.Now().Add(2 * time.Minute)
	for r.queue.Len() > 0 && time.Now().Before(drainBy) && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	r.stop()
	r.pollers.Wait()
}

// collect reads what the run did: the records, the calls the simulator
// saw, the dead letters, the pacers' counters and the AWS usage.
func (r *throughputRig) collect(ctx context.Context, e *localEnv, uploads []sent, progress func(string, ...any)) (*throughputResult, error) {
	tc := r.tc
	res := &throughputResult{Config: tc, Uploads: len(uploads), Invocations: r.invocations, BilledSeconds: r.billed,
		VisibilityChanges: int(r.visibility.Load()),
		LogBytes:          r.logs.n.Load(), Usage: r.counter.Snapshot(), Elapsed: time.Since(r.start), Charged: r.sim.Charged(geosim.DefaultOrg)}
	for _, s := range r.shared {
		st := s.Stats()
		res.PacerWrites += st.Writes
		res.PacerConflicts += st.Conflicts
		res.Widenings += st.Widenings
		res.FinalSpacing = max(res.FinalSpacing, s.Interval())
		res.Pacers = append(res.Pacers, st)
	}
	res.Started = r.start
	if len(r.shared) > 0 {
		progress("throughput: pacer writes %d (%d conflicts), %d widenings, spacing at the end %v (1/R = %v)",
			res.PacerWrites, res.PacerConflicts, res.Widenings, res.FinalSpacing, time.Duration(float64(time.Minute)/tc.configuredRate()))
	}
	var calls []geosim.Call
	for _, c := range r.sim.Calls() {
		if c.Endpoint != geosim.PathPredict {
			continue
		}
		calls = append(calls, c)
		res.Calls++
		if c.Status == http.StatusTooManyRequests {
			res.Status429++
		}
	}
	res.Settled = settle(calls)
	dead := map[string]bool{}
	for _, m := range r.queue.DeadLetters() {
		dead[m.Body] = true
	}
	res.DeadLetters = len(dead)
	var latencies []time.Duration
	var done []time.Time
	distinct := map[int]bool{}
	for i, u := range uploads {
		obj := u.obj
		distinct[u.content] = true
		if u.sameInstant {
			res.SameInstantPairs++
			res.SameInstantGapMax = max(res.SameInstantGapMax, u.gap)
			a, okA := r.receivedBy[uploads[i-1].id]
			b, okB := r.receivedBy[u.id]
			if okA && okB && a != b {
				res.PairsOnTwoInstances++
			}
		}
		rec, err := e.store.Lookup(ctx, refOf(obj))
		if err != nil {
			return nil, err
		}
		if rec != nil && rec.ReusedFrom != "" {
			res.Reused++
		}
		switch {
		case rec != nil && rec.Status == ledger.StatusSucceeded:
			res.Succeeded++
			latencies = append(latencies, rec.UpdatedAt.Sub(obj.Time))
			done = append(done, rec.UpdatedAt)
		case rec != nil && rec.Status != ledger.StatusInProgress:
			res.OtherFinal++
		default:
			body, _ := s3event.Body(obj)
			if !dead[body] {
				res.Lost++
			}
		}
	}
	res.Distinct = len(distinct)
	res.UploadToRecord = bench.Summarize(latencies)
	if len(done) > 1 {
		slices.SortFunc(done, func(a, b time.Time) int { return a.Compare(b) })
		span := done[len(done)-1].Sub(done[0])
		res.AchievedPerMinute = float64(len(done)-1) / span.Minutes()
	}
	return res, nil
}

// settling describes how the calls settled: from the first call after which
// every window of settleWindow calls has at most settleMax429 of 429s.
type settling struct {
	OK        bool
	After     time.Duration // from the first call
	CallsTo   int           // calls before settling
	PerMinute float64       // accepted calls a minute once settled
	Share429  float64       // share of 429s once settled
}

const (
	settleWindow = 50
	settleMax429 = 0.05
)

func settle(calls []geosim.Call) settling {
	if len(calls) < settleWindow {
		return settling{}
	}
	slices.SortFunc(calls, func(a, b geosim.Call) int { return a.Time.Compare(b.Time) })
	bad := make([]int, len(calls)+1) // prefix sums of 429s
	for i, c := range calls {
		bad[i+1] = bad[i]
		if c.Status == http.StatusTooManyRequests {
			bad[i+1]++
		}
	}
	from := -1
	for i := len(calls) - settleWindow; i >= 0; i-- {
		if float64(bad[i+settleWindow]-bad[i]) > settleMax429*settleWindow {
			break
		}
		from = i
	}
	if from < 0 {
		return settling{}
	}
	rest := calls[from:]
	accepted := 0
	for _, c := range rest {
		if c.Status != http.StatusTooManyRequests {
			accepted++
		}
	}
	s := settling{OK: true, After: rest[0].Time.Sub(calls[0].Time), CallsTo: from,
		Share429: float64(len(rest)-accepted) / float64(len(rest))}
	if span := rest[len(rest)-1].Time.Sub(rest[0].Time); span > 0 {
		s.PerMinute = float64(accepted-1) / span.Minutes()
	}
	return s
}
