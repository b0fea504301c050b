package pipeline

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// JobSchedule is the job feeder's schedule in the stack, rate(1 minute):
// the rig runs it as often, on the same clock as the rest of the run.
const JobSchedule = time.Minute

// localQueueURL is the upload queue's URL in the functions' environment
// (QUEUE_URL): what SQS would name the local queue.
var localQueueURL = fmt.Sprintf("https://sqs.%s.amazonaws.com/%s/%s", sqsqueue.DefaultRegion, sqsqueue.DefaultAccountID, sqsqueue.DefaultName)

// jobEnv adds to the functions' environment what the stack gives the job
// feeder: the queue it feeds and the queue's visibility timeout and
// redrive count, which settling counts on.
func jobEnv(env map[string]string, opts Options) {
	env[envvars.QueueURL] = localQueueURL
	env[envvars.QueueVisibility] = (6 * opts.FunctionTimeout).String()
	env[envvars.MaxReceiveCount] = strconv.Itoa(opts.MaxReceiveCount)
}

// jobRig is the job engine of a run: the feeder function, run on its
// schedule and once when a job is created (as geolocate backfill starts
// it), and the jobs the run itself created, which a one-pass run waits for.
type jobRig struct {
	store  *jobs.Store
	feeder *jobs.Feeder
	say    func(format string, args ...any)
	kick   chan struct{}
	// rate is the stack's calls a minute, price the credits a call of the
	// stack's model is assumed to cost: what geolocate backfill reads from
	// the stack.
	rate  float64
	price int

	mu   sync.Mutex
	mine []string // ids of the jobs this run created
	runs int      // feeder runs so far
	last jobs.Report
}

// newJobRig builds the feeder the way its composition root does
// (functions/jobfeeder), from the environment map, with the clients
// pointed at the local parts.
func newJobRig(env map[string]string, aws *localAWS, queue *sqsqueue.Queue, opts Options, say func(string, ...any)) (*jobRig, error) {
	cfg, err := jobs.LoadConfig(getenvFrom(env))
	if err != nil {
		return nil, err
	}
	logger := lambdarun.NewLogger(opts.FunctionLogs, cfg.LogLevel)
	store := jobs.New(aws.ddb.Client(), cfg.TableName)
	feeder := jobs.NewFeeder(store, aws.s3.Client(), &sqsqueue.Sender{Queue: queue, URL: localQueueURL}, cfg.QueueURL,
		cfg.Options, func(o *jobs.FeederOptions) { o.Logger = logger })
	price := predictor.Config{ModelID: env[envvars.ModelID]}.ExpectedCost()
	return &jobRig{store: store, feeder: feeder, say: say, kick: make(chan struct{}, 1), rate: cfg.RatePerMinute, price: price}, nil
}

// create creates a job and starts the feeder at once, as the CLI does.
func (r *jobRig) create(ctx context.Context, spec jobs.Spec) (jobs.Job, error) {
	job, err := r.store.Create(ctx, spec)
	if err != nil {
		return jobs.Job{}, err
	}
	r.mu.Lock()
	r.mine = append(r.mine, job.ID)
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default: // a run is already due
	}
	return job, nil
}

// schedule runs the feeder every JobSchedule and on each kick until ctx
// is done. A run that fails is said and the schedule goes on, as
// EventBridge invokes the function again the next minute.
func (r *jobRig) schedule(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-r.kick:
		}
		r.runOnce(ctx)
	}
}

func (r *jobRig) runOnce(ctx context.Context) {
	rep, err := r.feeder.Run(ctx)
	r.mu.Lock()
	r.runs++
	r.last = rep
	r.mu.Unlock()
	switch {
	case err != nil && ctx.Err() == nil:
		r.say("jobs      feeder run failed: %v", err)
	case err == nil && (rep.Listed > 0 || rep.Sent > 0 || len(rep.Finished) > 0 || len(rep.Errors) > 0):
		r.say("jobs      feeder: %d job(s), %d listed, %d sent, %d finished%s", rep.Jobs, rep.Listed, rep.Sent, len(rep.Finished), feederErrors(rep))
	}
}

func feederErrors(rep jobs.Report) string {
	if len(rep.Errors) == 0 {
		return ""
	}
	return fmt.Sprintf("; errors: %v", rep.Errors)
}

// settled reports whether every job the run created is done or cancelled.
func (r *jobRig) settled(ctx context.Context) (bool, error) {
	r.mu.Lock()
	ids := append([]string(nil), r.mine...)
	r.mu.Unlock()
	for _, id := range ids {
		j, err := r.store.Get(ctx, id)
		if err != nil {
			return false, err
		}
		if j.State.Active() {
			return false, nil
		}
	}
	return true, nil
}

// states are the run's own jobs as they are now.
func (r *jobRig) states(ctx context.Context) ([]jobs.Job, error) {
	r.mu.Lock()
	ids := append([]string(nil), r.mine...)
	r.mu.Unlock()
	out := make([]jobs.Job, 0, len(ids))
	for _, id := range ids {
		j, err := r.store.Get(ctx, id)
		if err != nil {
			return out, err
		}
		out = append(out, j)
	}
	return out, nil
}

// startBackfill creates the run's backfill job over the files it put, as
// geolocate backfill --bucket B --prefix P would.
func (p *pipeline) startBackfill(ctx context.Context, n int) error {
	job, err := p.jobs.create(ctx, jobs.Spec{Kind: jobs.KindBackfill, Bucket: p.opts.Bucket, Prefix: p.opts.KeyPrefix,
		Price: p.jobs.price, RatePerMinute: p.jobs.rate})
	if err != nil {
		return fmt.Errorf("create the backfill job: %w", err)
	}
	p.say("backfill  job %s over s3://%s/%s (%d object%s): the job feeder lists and feeds them at %.1f calls a minute, every %s",
		job.ID, p.opts.Bucket, p.opts.KeyPrefix, n, plural(n), jobs.Rate(job.RatePerMinute), JobSchedule)
	return nil
}

// startReprocess starts the Reprocess run as geolocate reprocess does:
// the run's item with its cap, then its job.
func (p *pipeline) startReprocess(ctx context.Context) error {
	rp := p.opts.Reprocess
	sel := rp.Selection
	if sel == "" {
		sel = jobs.Selection{Status: ledger.StatusSucceeded, Since: "1d", Set: map[string]bool{"since": true}}.String()
	}
	if _, err := jobs.ParseSelection(sel); err != nil {
		return fmt.Errorf("reprocess run %s: %w", rp.Run, err)
	}
	store := ledger.New(p.aws.ddb.Client(), p.opts.Table)
	if _, _, err := store.StartRun(ctx, ledger.Run{Name: rp.Run, ModelID: rp.ModelID, Selection: sel, Price: rp.Price, Cap: rp.Cap}); err != nil {
		return fmt.Errorf("reprocess run %s: %w", rp.Run, err)
	}
	job, err := p.jobs.create(ctx, jobs.Spec{Kind: jobs.KindReprocess, Run: rp.Run, ModelID: rp.ModelID, Price: rp.Price,
		Selection: sel, RatePerMinute: p.jobs.rate})
	if err != nil {
		return fmt.Errorf("create the reprocess job: %w", err)
	}
	p.reprocessJob = job.ID
	p.say("reprocess job %s: run %s, model %s, %s, cap %d credits", job.ID, rp.Run, rp.ModelID, sel, rp.Cap)
	return nil
}

// jobsStep moves a run with jobs on: it starts the Reprocess run once
// every upload has settled and the queue is empty, and reports whether
// the run is finished (its jobs done, the queue empty).
func (p *pipeline) jobsStep(ctx context.Context) (bool, error) {
	if p.queue.Len() > 0 || p.tracker.pending() > 0 {
		return false, nil
	}
	settled, err := p.jobs.settled(ctx)
	if err != nil || !settled {
		return false, err
	}
	if p.opts.Reprocess != nil && p.reprocessJob == "" {
		return false, p.startReprocess(ctx)
	}
	return true, nil
}
