package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/monitor"
	"github.com/geolocate-aws/geolocate/pkg/shared/s3event"
)

// sweepInterval is how often progress checks the records of pending uploads.
const sweepInterval = 250 * time.Millisecond

// finishTimeout bounds the work done after the run proper (last record
// reads, the monitor), which also happens after a Ctrl-C in watch mode.
const finishTimeout = 90 * time.Second

// Run runs the pipeline on opts.ImagesDir and returns what became of every
// upload. The inputs (the images folder, the service variables) are checked
// before anything is started, so a mistake costs one error and no wait. Without Watch it returns once every message has been deleted or
// dead-lettered; with Watch it keeps going until ctx is done, which then is
// the normal end (nil error). It stops everything it started before
// returning. When ctx is cancelled during a one-pass run, it returns the
// partial summary and ctx's error.
func Run(ctx context.Context, opts Options) (*Summary, error) {
	opts.setDefaults()
	begin := time.Now()
	say := func(format string, args ...any) { fmt.Fprintf(opts.Progress, format+"\n", args...) }

	// Inputs first: a wrong folder or a service that does not answer is
	// one error line, before a JVM is started or a file uploaded.
	if err := checkImagesDir(opts.ImagesDir, opts.Watch); err != nil {
		return nil, err
	}

	svc, err := startService(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer svc.stop()
	say("service   %s", svc.describe())

	say("starting  S3 (gofakes3) and DynamoDB Local (first start takes a few seconds)")
	aws, err := startLocalAWS(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer aws.close()
	say("ready     %s bucket %s (S3 at %s), table %s (DynamoDB Local at %s)",
		bucketMode(opts), opts.Bucket, aws.s3.Endpoint(), opts.Table, aws.ddb.Endpoint())

	events, err := startEvents(ctx, opts, aws, say)
	if err != nil {
		return nil, err
	}
	if events != nil {
		defer events.stop() // on an early return; finish stops it otherwise
	}

	queue := sqsqueue.New(
		// The stack's rule: visibility timeout at least six times the
		// function timeout, so a slow batch is never delivered twice.
		sqsqueue.WithVisibilityTimeout(6*opts.FunctionTimeout),
		sqsqueue.WithMaxReceiveCount(opts.MaxReceiveCount),
		sqsqueue.Duplicate(opts.DuplicateRate),
	)
	// Every "retry" line says why: the causes come from the functions'
	// own log lines, read as they are written.
	reasons := newRetryReasons()
	opts.FunctionLogs = io.MultiWriter(opts.FunctionLogs, reasons)
	env := functionEnv(opts, svc)
	jobEnv(env, opts)
	handler, err := newPredictor(env, aws, queue, opts)
	if err != nil {
		return nil, err
	}
	mon, err := newMonitor(env, aws, opts)
	if err != nil {
		return nil, err
	}
	jr, err := newJobRig(env, aws, queue, opts, say)
	if err != nil {
		return nil, fmt.Errorf("job feeder: %w", err)
	}
	// The job feeder on its schedule, as EventBridge runs it in the stack.
	feedingCtx, stopFeeding := context.WithCancel(ctx)
	defer stopFeeding()
	feedingDone := make(chan struct{})
	go func() { defer close(feedingDone); jr.schedule(feedingCtx, JobSchedule) }()
	published := newAWSPublisher(opts.Metrics, queue)
	readingCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	readingDone := make(chan struct{})
	go func() { defer close(readingDone); published.readQueueEveryMinute(readingCtx) }()
	// A first credit reading before any upload, as the scheduled monitor
	// would have taken: with the one at the end the report says what two
	// readings give. Over a run of seconds that is no forecast (they span
	// less than monitor.MinForecastSpan); a run of five minutes or more
	// (WATCH=1) gets one.
	if svc.backend {
		// The backend's credit summary takes no API keys: the operator
		// declares the balance the web application shows, and the monitor
		// estimates from it. The simulator's balance stands for that.
		if err := declareSimulatorBalance(ctx, svc.sim, aws, opts); err != nil {
			return nil, err
		}
		say("monitor   the service takes no API keys on its credit summary: declared its balance, as an operator would (geolocate credits --declare)")
	}
	say("monitor   first credit reading, before the uploads")
	if _, err := published.runMonitor(ctx, mon); err != nil {
		say("monitor   first reading failed (the report will have no forecast): %v", err)
	}

	p := &pipeline{
		opts:     opts,
		aws:      aws,
		queue:    queue,
		say:      say,
		reasons:  reasons,
		jobs:     jr,
		giveUp:   make(chan error, 1),
		uploaded: map[string]fileState{},
		told:     map[skippedPath]bool{},
		tracker: &tracker{
			store:    ledger.New(aws.ddb.Client(), opts.Table),
			queue:    queue,
			progress: opts.Progress,
			onResult: opts.OnResult,
		},
	}
	poller := &sqsqueue.Poller{
		Queue:       queue,
		Handler:     handler.Handle,
		Concurrency: opts.Concurrency,
		BatchSize:   opts.BatchSize,
		Timeout:     opts.FunctionTimeout,
		RetryDelay:  opts.RetryDelay,
		OnBatch: func(res sqsqueue.BatchResult) {
			p.reportBatch(res)
			published.batch(res)
		},
	}

	runErr := p.run(ctx, poller)

	finishCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	if err := p.tracker.sweep(finishCtx); err != nil && runErr == nil {
		runErr = err
	}
	summary := &Summary{
		Service:          svc.describe(),
		Simulated:        svc.sim != nil,
		Bucket:           opts.Bucket,
		Versioned:        !opts.Unversioned,
		Table:            opts.Table,
		S3Endpoint:       aws.s3.Endpoint(),
		DynamoDBEndpoint: aws.ddb.Endpoint(),
		Results:          p.tracker.snapshot(),
		DeadLetters:      queue.DeadLetters(),
		Queue:            poller.Stats(),
		QueuePeak:        p.queuePeak,
	}
	if events != nil {
		var err error
		summary.Events, summary.EventErrors, err = events.finish(finishCtx)
		if err != nil && runErr == nil {
			runErr = err
		}
	}
	if svc.sim != nil {
		summary.PredictCalls = predictCalls(svc.sim)
		summary.CreditsCharged = svc.sim.Charged(geosim.DefaultOrg)
	}
	if runErr == nil {
		say("monitor   reading credits and models")
		if summary.Monitor, err = published.runMonitor(finishCtx, mon); err != nil {
			summary.MonitorError = err.Error()
		}
	} else {
		summary.MonitorError = "not run: " + runErr.Error()
	}
	stopFeeding()
	<-feedingDone
	if summary.Jobs, err = jr.states(finishCtx); err != nil && runErr == nil {
		runErr = fmt.Errorf("read the run's jobs: %w", err)
	}
	stopReading()
	<-readingDone
	summary.Elapsed = time.Since(begin)
	return summary, runErr
}

// pipeline is the state of one run.
type pipeline struct {
	opts    Options
	aws     *localAWS
	queue   *sqsqueue.Queue
	tracker *tracker
	say     func(format string, args ...any)
	reasons *retryReasons
	jobs    *jobRig
	// reprocessJob is the Reprocess run's job once started.
	reprocessJob string
	// queuePeak is Summary.QueuePeak.
	queuePeak int
	// giveUp receives why the run stops early (every call failing alike);
	// reportBatch sends at most one.
	giveUp chan error

	uploaded map[string]fileState // relative path -> state last uploaded
	lastScan map[string]fileState // watch mode: state at the previous scan
	told     map[skippedPath]bool // skipped paths already reported
}

// run uploads the images and drives the poller: until the queue drains, or
// in watch mode until ctx is done.
func (p *pipeline) run(ctx context.Context, poller *sqsqueue.Poller) error {
	// With Backfill, the first pass's files are objects that predate the
	// pipeline: put unannounced, for the backfill job to find.
	n, err := p.uploadChanged(ctx, false, !p.opts.Backfill)
	if err != nil {
		return err
	}
	if n == 0 && !p.opts.Watch {
		p.say("nothing   no files in %s", p.opts.ImagesDir)
		return nil
	}
	if p.opts.Backfill {
		if err := p.startBackfill(ctx, n); err != nil {
			return err
		}
	} else {
		p.say("queued    %d upload notification%s; processing with %d instance%s, batches of up to %d",
			n, plural(n), p.opts.Concurrency, plural(p.opts.Concurrency), p.opts.BatchSize)
	}
	// A one-pass run with jobs ends when they are done, not when the queue
	// is first empty: a job's messages reach it a window at a time.
	withJobs := p.opts.Backfill || p.opts.Reprocess != nil

	pollCtx, stopPolling := context.WithCancel(ctx)
	defer stopPolling()
	pollerDone := make(chan error, 1)
	go func() {
		if p.opts.Watch || withJobs {
			pollerDone <- poller.Run(pollCtx)
		} else {
			pollerDone <- poller.RunUntilDrained(pollCtx)
		}
	}()

	sweep := time.NewTicker(sweepInterval)
	defer sweep.Stop()
	scan := time.NewTicker(p.opts.WatchInterval)
	defer scan.Stop()
	if !p.opts.Watch {
		scan.Stop()
	} else {
		p.say("watching  %s (Ctrl-C to stop)", p.opts.ImagesDir)
	}
	for {
		select {
		case err := <-pollerDone:
			if p.opts.Watch && errors.Is(err, context.Canceled) && ctx.Err() != nil {
				return nil // Ctrl-C is how watch mode ends
			}
			if withJobs && !p.opts.Watch && ctx.Err() == nil {
				return nil // stopped below, the jobs done
			}
			return err
		case err := <-p.giveUp:
			stopPolling()
			<-pollerDone
			return err
		case <-sweep.C:
			p.queuePeak = max(p.queuePeak, p.queue.Len())
			if err := p.tracker.sweep(ctx); err != nil && ctx.Err() == nil {
				p.say("warning   %v", err)
			}
			if !withJobs {
				continue
			}
			finished, err := p.jobsStep(ctx)
			if err != nil && ctx.Err() == nil {
				p.say("warning   %v", err)
			}
			if finished && !p.opts.Watch {
				stopPolling()
				<-pollerDone
				return nil
			}
		case <-scan.C:
			if _, err := p.uploadChanged(ctx, true, true); err != nil && ctx.Err() == nil {
				p.say("warning   %v", err)
			}
		}
	}
}

// uploadChanged uploads the files that are new or changed since their last
// upload and announces each on the queue. With stable set, a file is only
// taken once it looks the same on two scans in a row, so one still being
// written is not uploaded half-done.
func (p *pipeline) uploadChanged(ctx context.Context, stable, announce bool) (int, error) {
	found, err := scanDir(p.opts.ImagesDir)
	if err != nil {
		return 0, err
	}
	p.reportSkipped(found.skipped)
	previous := p.lastScan
	p.lastScan = found.files
	n := 0
	for _, rel := range found.paths {
		state := found.files[rel]
		if last, ok := p.uploaded[rel]; ok && last == state {
			continue
		}
		if stable && previous[rel] != state {
			continue
		}
		if err := p.upload(ctx, rel, announce); err != nil {
			return n, err
		}
		p.uploaded[rel] = state
		n++
	}
	return n, nil
}

// reportSkipped says once what is not uploaded and why; watch mode scans
// every second and must not repeat itself.
func (p *pipeline) reportSkipped(skipped []skippedPath) {
	for _, sk := range skipped {
		if !p.told[sk] {
			p.told[sk] = true
			p.say("skipped   %s (%s)", sk.Path, sk.Reason)
		}
	}
}

// upload puts one file in the bucket, keyed by its path below the images
// folder, and with announce sends the notification S3 (or, in EventBridge
// mode, the stack's uploads rule) would: with the version id PutObject
// reported, none on an unversioned bucket.
func (p *pipeline) upload(ctx context.Context, rel string, announce bool) error {
	u, err := putFile(ctx, p.aws.s3.Client(), p.opts.Bucket, p.opts.KeyPrefix+rel, localPath(p.opts.ImagesDir, rel))
	if err != nil {
		return err
	}
	if !announce {
		p.tracker.add(u)
		p.say("put       %s (%d bytes), unannounced", u.Key, u.Size)
		return nil
	}
	event := s3event.Body
	if p.opts.Notifications == NotificationsEventBridge {
		event = EventBridgeEventBody
	}
	body, err := event(s3event.ObjectCreated{
		Bucket: u.Bucket, Key: u.Key, Size: u.Size, ETag: u.ETag, VersionID: u.VersionID, Time: u.At,
	})
	if err != nil {
		return err
	}
	u.MessageID = p.queue.Send(body)
	p.tracker.add(u)
	p.say("uploaded  %s (%d bytes)", u.Key, u.Size)
	return nil
}

// reportBatch prints one line per invocation that did not simply succeed.
func (p *pipeline) reportBatch(r sqsqueue.BatchResult) {
	switch {
	case r.Err != nil:
		p.reasons.take(r.Failed)
		p.say("retry     invocation with %d message%s failed: %v", len(r.Messages), plural(len(r.Messages)), r.Err)
	case len(r.Failed) > 0:
		p.say("retry     %d of %d message%s returned for another delivery: %s",
			len(r.Failed), len(r.Messages), plural(len(r.Messages)), p.reasons.take(r.Failed))
	}
	if cause, ok := p.reasons.hopeless(); ok {
		select {
		case p.giveUp <- fmt.Errorf("stopped early: the last %d calls all failed with %s and none succeeded since; the uploads left stay queued instead of being retried until the dead-letter queue",
			sameFailureLimit, cause):
		default: // already said
		}
	}
}

func predictCalls(sim *geosim.Server) int {
	n := 0
	for _, c := range sim.Calls() {
		if c.Endpoint == geosim.PathPredict {
			n++
		}
	}
	return n
}

// declareSimulatorBalance declares the simulator's balance as the anchor
// of the monitor's credit estimate.
func declareSimulatorBalance(ctx context.Context, sim *geosim.Server, aws *localAWS, opts Options) error {
	b, _ := sim.Balance(geosim.DefaultOrg)
	h := monitor.NewHistory(aws.ddb.Client(), opts.Table, PipelineName, 0)
	if err := h.Declare(ctx, monitor.Declared{Remaining: float64(b.Available), At: time.Now(), By: "geolocate local"}); err != nil {
		return fmt.Errorf("declare the simulator's balance: %w", err)
	}
	return nil
}
