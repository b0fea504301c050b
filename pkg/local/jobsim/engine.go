package jobsim

import (
	"context"
	"fmt"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/shared/jobmsg"
)

// feederEvery is the job feeder's schedule: EventBridge's rate(1 minute).
const feederEvery = time.Minute

const tableName = "results"

// engine is the real job engine (pkg/jobs' Store and Feeder) on the run's
// clock: the results table on minidyn, the listing served by the bucket,
// the feeding sent to the simulated queue. The Feeder runs every simulated
// minute, after the CLI's kick at the job's creation.
type engine struct {
	r      *run
	ctx    context.Context
	db     *countingDB
	store  *jobs.Store
	feeder *jobs.Feeder
	bucket *bucket
	id     string
	// rate is the job's rate (jobs.Rate of the stack's, less the live
	// uploads).
	rate  float64
	runs  int
	walls []time.Duration
	done  bool
	// doneAt is when the job first showed done.
	doneAt time.Time
	// pausedAt and resumedAt are when the operator paused and resumed it.
	pausedAt, resumedAt time.Time
	err                 error
}

func newEngine(ctx context.Context, r *run, cfg Config) (*engine, error) {
	db, err := newCountingDB(ctx)
	if err != nil {
		return nil, err
	}
	e := &engine{r: r, ctx: ctx, db: db, bucket: &bucket{name: bucketName, prefix: prefix, n: cfg.Objects, size: photoSize, written: epoch.Add(-24 * time.Hour)}}
	e.store = jobs.New(db, tableName, func(o *jobs.Options) { o.Clock = r.l.Now })
	e.feeder = jobs.NewFeeder(e.store, e.bucket, sender{q: r.q, url: queueURL}, queueURL, func(o *jobs.FeederOptions) {
		o.Now = r.l.Now
		o.RatePerMinute = cfg.Rate
		o.MaxConcurrency = cfg.Concurrency
		o.WindowMinutes = cfg.Window
		o.Visibility = queueVisibility
		o.MaxReceiveCount = maxReceiveCount
		o.LivePerMinute = max(cfg.LiveRate, 0)
	})
	e.rate = jobs.Rate(cfg.Rate, max(cfg.LiveRate, 0))
	return e, nil
}

// start creates the job as the CLI does, kicks the feeder once and then
// runs it on its schedule.
func (e *engine) start() error {
	j, err := e.store.Create(e.ctx, jobs.Spec{Kind: jobs.KindBackfill, Bucket: bucketName, Prefix: prefix, Price: price,
		RatePerMinute: e.r.cfg.Rate})
	if err != nil {
		return fmt.Errorf("jobsim: create the job: %w", err)
	}
	e.id = j.ID
	if cfg := e.r.cfg; cfg.PauseAt > 0 {
		e.r.l.after(cfg.PauseAt, func() { e.set("pause", e.store.Pause) })
		e.r.l.after(cfg.PauseAt+cfg.PauseFor, func() { e.set("resume", e.store.Resume) })
	}
	var tick func()
	tick = func() {
		e.feed()
		if e.err == nil && !e.done {
			e.r.l.after(feederEvery, tick)
		}
	}
	tick()
	return nil
}

// feed is one scheduled Feeder run, then the job read as the predictor
// and the operator see it.
func (e *engine) feed() {
	began := time.Now()
	rep, err := e.feeder.Run(e.ctx)
	e.walls = append(e.walls, time.Since(began))
	e.runs++
	if err != nil {
		e.fail(fmt.Errorf("jobsim: feeder run %d: %w", e.runs, err))
		return
	}
	if len(rep.Errors) > 0 {
		e.fail(fmt.Errorf("jobsim: feeder run %d: %v", e.runs, rep.Errors))
		return
	}
	j, err := e.store.Get(e.ctx, e.id)
	if err != nil {
		e.fail(fmt.Errorf("jobsim: read the job: %w", err))
		return
	}
	if j.State == jobs.StateDone && !e.done {
		e.done, e.doneAt = true, e.r.l.now
	}
}

// gate is pkg/predictor's jobGate: the job's state through the
// instance's StateCache; a paused job's message is recorded as dropped
// (Store.Drop) for the feeder to send again on resume, a cancelled one's
// only dropped. True when the message ends there.
func (e *engine) gate(in *instance, o jobmsg.Object) bool {
	if in.states == nil {
		in.states = jobs.NewStateCache(e.store, jobs.DefaultStateTTL, e.r.l.Now)
	}
	st, err := in.states.State(e.ctx, o.Job)
	if err != nil {
		e.fail(fmt.Errorf("jobsim: read the job's state: %w", err))
		return true
	}
	switch st {
	case jobs.StatePaused:
		if err := e.store.Drop(e.ctx, o.Job, o.Pos); err != nil {
			e.fail(fmt.Errorf("jobsim: record a dropped message: %w", err))
		}
		return true
	case jobs.StateCancelled:
		return true
	}
	return false
}

// ended adds an object's end to the job's counters as the predictor does
// (Store.AddEnd).
func (e *engine) ended(o jobmsg.Object, outcome jobs.Outcome, credits int) {
	if err := e.store.AddEnd(e.ctx, o.Job, outcome, credits, e.r.l.now); err != nil {
		e.fail(fmt.Errorf("jobsim: add the job's counters: %w", err))
	}
}

// fail keeps the run's first error; the loop stops on it.
func (e *engine) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// eta is the ETA the job shows now.
func (e *engine) eta(now time.Time) time.Time {
	j, err := e.store.Get(e.ctx, e.id)
	if err != nil {
		e.fail(fmt.Errorf("jobsim: read the job: %w", err))
		return time.Time{}
	}
	return j.ETA(now)
}

// set pauses or resumes the job as the operator's command does.
func (e *engine) set(what string, fn func(context.Context, string) error) {
	if err := fn(e.ctx, e.id); err != nil {
		e.fail(fmt.Errorf("jobsim: %s the job: %w", what, err))
	}
	if what == "pause" {
		e.pausedAt = e.r.l.now
	} else {
		e.resumedAt = e.r.l.now
	}
}

// paused reports whether t is more than the predictor's reading's minute
// after the job's pause and before its resume: the job's calls should
// have stopped.
func (e *engine) paused(t time.Time) bool {
	return !e.pausedAt.IsZero() && t.After(e.pausedAt.Add(feederEvery)) && (e.resumedAt.IsZero() || t.Before(e.resumedAt))
}
