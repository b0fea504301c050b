package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/bench"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/pipeline"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
)

// reprocessAtOnce is the stage's run at 225c1b0 (cmd/benchreport/REPORT.md
// then, R=600/min, N=4), when geolocate reprocess sent a run all at once:
// what sending at the rate is measured against.
var reprocessAtOnce = struct {
	Commit                        string
	Photos                        int
	Returned, S3Gets, SQSRequests float64 // per photo
	USD                           float64 // AWS per 1,000 photos
}{Commit: "225c1b0", Photos: 200, Returned: 1.03, S3Gets: 2.04, SQSRequests: 2.47, USD: 0.0244}

// reprocessConfig is the reprocess stage's load: Photos distinct uploads
// through the throughput rig (Rig's rate and shape), then one run over all
// of them with a cap of Cap credits.
type reprocessConfig struct {
	Photos int
	// Cap is the run's --max-credits; it must cover every photo (each is
	// one credit with the default model), or the run would hold the rest
	// waiting and the stage would never see them finish.
	Cap int
	Rig throughputConfig
}

// reprocessResult is what one reprocess run cost, the run alone: every
// figure is the difference between the end of the run and the moment the
// uploads' records were all final, before the run was created.
type reprocessResult struct {
	Config   reprocessConfig
	Run      string
	Selected int // objects the run's job listed (its selection in the table)
	// Succeeded are the run's own final records that succeeded.
	Succeeded int
	// Charged is what the simulator charged during the run; Spent what the
	// run's item says it spent; PaidCalls the charged calls and
	// DistinctPaid the distinct photos (file digests) among them.
	Charged, Spent, PaidCalls, DistinctPaid int
	// SendRate is the calls a minute the run's job feeds at (jobs.Rate of
	// the rig's rate).
	SendRate float64
	// SendBatches are the SendMessageBatch requests the job feeder made.
	SendBatches int
	// RecordBytes and UploadRecordBytes are the billed sizes of the first
	// photo's record in the run (with the replaced result and its history)
	// and of its upload's record.
	RecordBytes, UploadRecordBytes int
	// T holds the run's figures shaped as a throughput run's, so that it is
	// priced by perImageUsage, the cost section's method.
	T       throughputResult
	Elapsed time.Duration
}

// check is the stage's invariant: the run paid one credit per photo it
// selected, within its cap, and no photo twice.
func (x *reprocessResult) check() error {
	var errs []error
	if x.Charged != x.Selected || x.Spent != x.Charged || x.Charged > x.Config.Cap {
		errs = append(errs, fmt.Errorf("run %s: %d photos selected, %d credits charged, %d spent by the run's item, cap %d",
			x.Run, x.Selected, x.Charged, x.Spent, x.Config.Cap))
	}
	if x.PaidCalls != x.DistinctPaid {
		errs = append(errs, fmt.Errorf("run %s: %d paid calls for %d distinct photos: a photo was paid twice", x.Run, x.PaidCalls, x.DistinctPaid))
	}
	if x.Succeeded != x.Selected {
		errs = append(errs, fmt.Errorf("run %s: %d of %d records succeeded", x.Run, x.Succeeded, x.Selected))
	}
	return errors.Join(errs...)
}

// measureReprocess uploads the photos through the throughput rig, waits
// for their records, then does what geolocate reprocess does (start the
// run, create its job) and runs the job feeder on its schedule, which
// selects in the table and feeds the rig's queue, and lets the same
// instances process the run. The
// stage's error says when the invariant (check) fails; the result is
// returned with it, for the report.
func measureReprocess(ctx context.Context, e *localEnv, st stack, c reprocessConfig, progress func(string, ...any)) (*reprocessResult, error) {
	if c.Photos <= 0 || c.Cap < c.Photos {
		return nil, fmt.Errorf("reprocess: %d photos with a cap of %d credits: give a positive number of photos and a cap that covers them", c.Photos, c.Cap)
	}
	tc := c.Rig
	// uploadAtRate sends int(rate * minutes) uploads: half an upload more
	// keeps float rounding from losing the last one.
	tc.Duration = time.Duration((float64(c.Photos) + 0.5) / tc.uploadRate() * float64(time.Minute))
	rig, err := setupThroughput(ctx, e, st, tc)
	if err != nil {
		return nil, err
	}
	defer rig.close()
	uploads, err := rig.uploadAtRate(ctx, e, progress)
	if err != nil {
		return nil, err
	}
	refs := make([]ledger.ObjectRef, len(uploads))
	for i, u := range uploads {
		refs[i] = refOf(u.obj)
	}
	if err := waitFinal(ctx, e.store, refs, rig.queue, time.Minute); err != nil {
		return nil, fmt.Errorf("reprocess: the uploads: %w", err)
	}
	progress("reprocess: %d uploads recorded; starting the run", len(uploads))

	before, charged0, calls0 := rig.figures(), rig.sim.Charged(geosim.DefaultOrg), len(rig.sim.Calls())
	res := &reprocessResult{Config: c, Run: fmt.Sprintf("bench-%d", rig.start.UnixNano())}
	start := time.Now()
	// The CLI's and the feeder's reads and writes are the run's cost too:
	// their clients count.
	s3c, ddbc := e.counted(rig.counter)
	store := ledger.New(ddbc, tableName)
	// The run as geolocate reprocess starts it: its item with the cap,
	// then a reprocess job whose feeder selects from the table in the
	// account (the uploads' window: since the rig started, their prefix).
	sel := jobs.Selection{Status: ledger.StatusSucceeded, Prefix: rig.prefix, Since: rig.start.UTC().Format(time.RFC3339),
		Set: map[string]bool{"prefix": true, "since": true}}
	run, _, err := store.StartRun(ctx, ledger.Run{Name: res.Run, Selection: sel.String(), Price: 1, Cap: c.Cap})
	if err != nil {
		return nil, err
	}
	js := jobs.New(ddbc, tableName)
	job, err := js.Create(ctx, jobs.Spec{Kind: jobs.KindReprocess, Run: run.Name, Price: run.Price, Selection: sel.String(), RatePerMinute: tc.configuredRate()})
	if err != nil {
		return nil, fmt.Errorf("reprocess: %w", err)
	}
	sender := &sqsqueue.Sender{Queue: rig.queue, URL: reprocessQueueURL}
	feeder := jobs.NewFeeder(js, s3c, sender, reprocessQueueURL, func(o *jobs.FeederOptions) {
		o.RatePerMinute, o.MaxConcurrency = tc.configuredRate(), tc.Instances
	})
	// The feeder on its schedule, as EventBridge runs it: once at the
	// start (the CLI's kick), then every minute until the job is done.
	feeding, stopFeeding := context.WithCancel(ctx)
	defer stopFeeding()
	fed := make(chan error, 1)
	go func() { fed <- feedUntilDone(feeding, feeder, js, job.ID) }()
	runRefs, err := listedRefs(ctx, js, store, job.ID, run.Name)
	if err != nil {
		return nil, err
	}
	res.Selected = len(runRefs)
	if err := waitFinal(ctx, e.store, runRefs, rig.queue, 2*time.Minute); err != nil {
		return nil, fmt.Errorf("reprocess: run %s: %w", run.Name, err)
	}
	if err := <-fed; err != nil {
		return nil, fmt.Errorf("reprocess: job %s: %w", job.ID, err)
	}
	res.SendBatches = int(sender.Batches())
	if done, err := js.Get(ctx, job.ID); err == nil {
		res.SendRate = done.FeedRate
	}
	// Stopping the pollers waits for the last batch's billing.
	rig.stop()
	rig.pollers.Wait()
	res.Elapsed = time.Since(start)

	var done []time.Time
	for _, ref := range runRefs {
		rec, err := e.store.Lookup(ctx, ref)
		if err != nil {
			return nil, err
		}
		if rec != nil && rec.Status == ledger.StatusSucceeded {
			res.Succeeded++
			done = append(done, rec.UpdatedAt)
		}
	}
	after, err := store.GetRun(ctx, run.Name)
	if err != nil {
		return nil, err
	}
	res.Spent = after.Spent
	res.Charged = rig.sim.Charged(geosim.DefaultOrg) - charged0
	paid := map[string]bool{}
	for _, call := range rig.sim.Calls()[calls0:] {
		if call.Endpoint == geosim.PathPredict && call.Charged > 0 {
			res.PaidCalls++
			paid[call.FileSHA256] = true
		}
	}
	res.DistinctPaid = len(paid)
	if res.RecordBytes, err = recordBytesOf(ctx, e, runRefs[:1]); err != nil {
		return nil, err
	}
	first := runRefs[0]
	first.Run = ""
	if res.UploadRecordBytes, err = recordBytesOf(ctx, e, []ledger.ObjectRef{first}); err != nil {
		return nil, err
	}
	now := rig.figures()
	res.T = throughputResult{Config: tc, Uploads: res.Selected, Succeeded: res.Succeeded, Charged: res.Charged,
		Invocations: now.invocations - before.invocations, BilledSeconds: now.billed - before.billed,
		VisibilityChanges: now.visibility - before.visibility, LogBytes: now.logBytes - before.logBytes,
		Usage: now.usage.Sub(before.usage), Elapsed: res.Elapsed}
	if len(done) > 1 {
		slices.SortFunc(done, func(a, b time.Time) int { return a.Compare(b) })
		res.T.AchievedPerMinute = float64(len(done)-1) / done[len(done)-1].Sub(done[0]).Minutes()
	}
	return res, res.check()
}

// reprocessQueueURL names the rig's queue to the feeder.
const reprocessQueueURL = "https://sqs.local/bench-uploads"

// feedUntilDone runs the feeder at once and then every
// pipeline.JobSchedule, as the stack's schedule does, until the job is
// done or ctx ends.
func feedUntilDone(ctx context.Context, f *jobs.Feeder, js *jobs.Store, id string) error {
	tick := time.NewTicker(pipeline.JobSchedule)
	defer tick.Stop()
	for {
		if _, err := f.Run(ctx); err != nil {
			return err
		}
		j, err := js.Get(ctx, id)
		if err != nil {
			return err
		}
		if !j.State.Active() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// listedRefs waits for the job's listing to end and returns the run's
// record of every object it listed (jobs.PlanRun over the same selection,
// read once the listing is done, is what the feeder chunked).
func listedRefs(ctx context.Context, js *jobs.Store, store *ledger.Store, id, run string) ([]ledger.ObjectRef, error) {
	for {
		j, err := js.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if j.ListingDone {
			sel, err := jobs.ParseSelection(j.Selection)
			if err != nil {
				return nil, err
			}
			records, err := store.Query(ctx, sel.Query(j.Created))
			if err != nil {
				return nil, err
			}
			plan := jobs.PlanRun(records, sel, run)
			refs := make([]ledger.ObjectRef, len(plan.Todo))
			for i, r := range plan.Todo {
				refs[i] = ledger.ObjectRef{Bucket: r.Bucket, Key: r.Key, VersionID: r.VersionID, ETag: r.ETag, Run: run}
			}
			if int64(len(refs)) != j.Listed {
				return nil, fmt.Errorf("job %s listed %d objects, its selection holds %d", id, j.Listed, len(refs))
			}
			return refs, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// rigFigures are a throughput rig's running counters at one moment.
type rigFigures struct {
	usage       bench.Usage
	invocations int
	billed      float64
	visibility  int
	logBytes    int64
}

func (r *throughputRig) figures() rigFigures {
	r.mu.Lock()
	defer r.mu.Unlock()
	return rigFigures{usage: r.counter.Snapshot(), invocations: r.invocations, billed: r.billed,
		visibility: int(r.visibility.Load()), logBytes: r.logs.n.Load()}
}

// waitFinal waits until every ref has a final record and q holds no
// message (the last batch is deleted, so its invocation is counted: the
// poller settles a batch just before it reports it), at most within.
func waitFinal(ctx context.Context, store *ledger.Store, refs []ledger.ObjectRef, q *sqsqueue.Queue, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	for pending := refs; ; {
		var still []ledger.ObjectRef
		for _, ref := range pending {
			rec, err := store.Lookup(ctx, ref)
			if err != nil {
				return fmt.Errorf("read the record of %s: %w", ref, err)
			}
			if rec == nil || !rec.Final() {
				still = append(still, ref)
			}
		}
		if pending = still; len(pending) == 0 && q.Len() == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d records not final, %d messages in the queue after %v", len(pending), len(refs), q.Len(), within)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// reprocessUsage is a run's consumption per photo by the cost section's
// method (perImageUsage), with the send as the job feeder makes it (its
// SendMessageBatch requests), not S3's one notification per upload.
func (r *results) reprocessUsage(x *reprocessResult) bench.PerImage {
	u := r.perImageUsage(&x.T)
	n := float64(max(x.T.Succeeded, 1))
	u.SQSRequests += float64(x.SendBatches)/n - 1
	return u
}

const opTransactWrite = "DynamoDB.TransactWriteItems"

// reprocessRows is issue 39's bench row: what a reprocess run costs per
// 1,000 photos, beside the credits check.
func (r *results) reprocessRows() []row {
	x := r.Reprocess
	if x == nil {
		return nil
	}
	lines, total := bench.ListPrices.Per1000(r.reprocessUsage(x))
	return []row{
		{fmt.Sprintf("Credits of a reprocess run over %d photos (cap %d)", x.Selected, x.Config.Cap),
			fmt.Sprintf("%d credits charged, %d spent by the run, %d paid calls for %d distinct photos", x.Charged, x.Spent, x.PaidCalls, x.DistinctPaid),
			"= photos (<= cap), each photo once", verdict(x.check() == nil), "see the reprocess section"},
		{"Cost of a reprocess run per 1,000 photos", fmt.Sprintf("%.0f credits + $%.4f AWS", lines[0].Quantity, total), "none set", "info", ""},
	}
}

func (r *results) reprocessSection(p func(string, ...any)) {
	x := r.Reprocess
	if x == nil {
		return
	}
	c := x.Config
	p("\n## Cost of a reprocess run\n\n")
	arrival := fmt.Sprintf("The run is a reprocess job (`pkg/jobs`), as `geolocate reprocess` creates it: the job feeder, run at once and then on its one-minute schedule, selects from the table in the account and feeds the queue at the job's rate (`jobs.Rate`: %.0f%% of the pacer's rate, fed at %.1f/min), keeping at most `jobWindowMinutes` of calls in the queue, each message's DelaySeconds spreading them over the coming minute (%d SendMessageBatch requests for %d messages), so each arrives about when the pacer has a call slot for it. "+
		"Before the jobs, the CLI sent the run from the operator's terminal; sent all at once (`--send-rate 0`), the run was a backlog the pacer drains at R: a message whose slot was more than a second away went back to the queue holding it and came again (another receive, GET, claim and release); at %s that cost %.2f returned messages, %.2f GETs and %.2f SQS requests per photo, and $%.4f of AWS per 1,000 photos (%d photos, the reservations then priced at a flat 2 units). ",
		100*jobs.Share(c.Rig.configuredRate()), x.SendRate, x.SendBatches, x.Selected,
		reprocessAtOnce.Commit, reprocessAtOnce.Returned, reprocessAtOnce.S3Gets, reprocessAtOnce.SQSRequests, reprocessAtOnce.USD, reprocessAtOnce.Photos)
	p("Issue 39's row. %d distinct photos uploaded through the throughput rig (R=%.0f/min, N=%d, L=%v) and recorded; then what `geolocate reprocess --default-model --max-credits %d` does (the run's item, its job; the feeder's selection through the by-status index, its manifest chunks and job item updates, one job message per record) and the same instances process the run. %s"+
		"The selection here reads only the run's own records (its time window starts with the uploads); a real selection's query reads every record of its window, the prefix filtering after the read: its read units grow with the records in the window, not with the photos selected. Every figure below is the run alone: the request counter's usage, the billed time, the invocations and the credits at the end of the run minus their values once the uploads were recorded.\n\n",
		c.Photos, c.Rig.RatePerMinute, c.Rig.Instances, c.Rig.Latency, c.Cap, arrival)
	n := float64(max(x.T.Succeeded, 1))
	p("| Run %s | |\n|---|---|\n", x.Run)
	p("| Photos selected / succeeded / credits charged / spent by the run / cap | %d / %d / %d / %d / %d |\n", x.Selected, x.Succeeded, x.Charged, x.Spent, c.Cap)
	p("| Paid calls / distinct photos among them | %d / %d |\n", x.PaidCalls, x.DistinctPaid)
	p("| Invocations / billed Lambda time per photo | %d / %.0f ms |\n", x.T.Invocations, 1000*x.T.BilledSeconds/n)
	p("| Messages the handlers returned to wait (a call slot, credits), per photo | %.2f |\n", float64(x.T.VisibilityChanges)/n)
	p("| S3 GETs and HEADs per photo | %.2f |\n", float64(x.T.Usage.Count("S3.GetObject", "S3.HeadObject"))/n)
	p("| SQS requests per photo (sends in batches, receives, deletes, visibility changes) | %.2f |\n", r.reprocessUsage(x).SQSRequests)
	p("| Took | %s |\n\n", x.Elapsed.Round(time.Millisecond))
	p("DynamoDB per photo by item family (the request counter's split by partition key; the selection's query has no key and is under \"other\"):\n\n")
	p("| Item | Reads | Read units | Writes | Write units (table + index) | Failed conditional writes |\n|---|---|---|---|---|---|\n")
	items := x.T.Usage.Items
	var itemReads float64
	for _, k := range sortedKeys(items) {
		iu := items[k]
		itemReads += iu.ReadUnits
		p("| `%s` | %.2f | %.2f | %.2f | %.2f | %.2f |\n", k, float64(iu.Reads)/n, iu.ReadUnits/n, float64(iu.Writes)/n, iu.WriteUnits()/n, float64(iu.Failed)/n)
	}
	p("| other (queries) | - | %.2f | - | - | - |\n\n", math.Max(x.T.Usage.ReadUnits-itemReads, 0)/n)
	p("Of the `%s` writes, %.2f per photo are the run's credit reservations and releases: one-item TransactWriteItems, whose units are the ones DynamoDB Local returns for them (ReturnConsumedCapacity, as for every other write), at the transactional price: \"A transactional write request of an item up to 1 KB requires two write units\" (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html).\n\n",
		ledger.RunPartition, float64(x.T.Usage.Count(opTransactWrite))/n)
	if x.RecordBytes > 0 {
		p("A run's record carries the result it replaces and the earlier ones (`previous`, `history`): the first photo's is %d bytes by DynamoDB's size rules against %d for its upload's, %d write units against %d in the table, and as many again in the by-status index projecting ALL, each time the claim and the record write it.\n\n",
			x.RecordBytes, x.UploadRecordBytes, bench.WriteUnits(x.RecordBytes), bench.WriteUnits(x.UploadRecordBytes))
	}
	lines, total := bench.ListPrices.Per1000(r.reprocessUsage(x))
	p("Per 1,000 photos, priced as the cost section prices uploads (the same lines and prices; SQS counts the job feeder's SendMessageBatch requests instead of S3's notifications):\n\n| Item | Quantity | USD |\n|---|---|---|\n")
	for _, l := range lines {
		if l.UnitPrice == 0 {
			p("| %s | %.0f %s | - |\n", l.Item, l.Quantity, l.Unit)
			continue
		}
		p("| %s | %.4g %s | %.5f |\n", l.Item, l.Quantity, l.Unit, l.USD)
	}
	p("| **AWS total** | | **%.4f** |\n\n", total)
	p("The CLI's own run (one process, seconds) and storage of the records' history are not in the table.\n")
}
