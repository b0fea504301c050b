package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// outputJobFeederFunctionName is the stack's output naming the job feeder
// function (infra), which the CLI invokes once after creating a job so
// that its listing starts at once rather than at the next scheduled run.
const outputJobFeederFunctionName = "JobFeederFunctionName"

// Timing of the job commands. The feeder runs once a minute in the
// account; the CLI only watches.
const (
	// kickWait is how long backfill and reprocess wait, after starting
	// the feeder, for the listing to report how far it got: the command
	// returns within seconds whatever the job's size.
	kickWait = 5 * time.Second
	// kickPoll is how often the job is read while waiting.
	kickPoll = 500 * time.Millisecond
)

// followEvery is how often --follow reads the job: the feeder moves it
// once a minute, the predictor's counters as objects end. Tests shorten it.
var followEvery = 10 * time.Second

// jobsAPI is what the job commands need of the table: what jobs.New takes.
type jobsAPI = jobs.DynamoDBAPI

// invokeAPI is Lambda's Invoke, which the CLI uses to start the feeder.
// The Lambda client of awsClients.functions has it; a fake may not, and
// then the job waits for the feeder's schedule.
type invokeAPI interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, optFns ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// runJobs: geolocate jobs [list] | show ID [--json] | pause ID | resume ID
// | cancel ID, [--stack S] [--table T].
func runJobs(ctx context.Context, c *cli, args []string) error {
	fs := c.newFlagSet("jobs", "[list | show ID | pause ID | resume ID | cancel ID]")
	var (
		asJSON = fs.Bool("json", false, "show: the job as JSON")
		loc    stackLocator
	)
	loc.register(fs, true)
	// Flags go anywhere (jobs --stack S show ID --json).
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	sub := "list"
	if len(rest) > 0 {
		sub, rest = rest[0], rest[1:]
	}
	var id string
	switch sub {
	case "list":
		if len(rest) > 0 {
			return usageError{fmt.Errorf("jobs list takes no argument, got %q", rest[0])}
		}
	case "show", "pause", "resume", "cancel":
		if len(rest) != 1 {
			return usageError{fmt.Errorf("jobs %s takes one job id (geolocate jobs lists them)", sub)}
		}
		id = rest[0]
	default:
		return usageError{fmt.Errorf("unknown jobs command %q: list, show, pause, resume or cancel", sub)}
	}
	if *asJSON && sub != "show" {
		return usageError{errors.New("--json goes with jobs show")}
	}
	store, err := openJobs(ctx, c, &loc)
	if err != nil {
		return err
	}
	now := time.Now()
	switch sub {
	case "list":
		list, err := store.List(ctx)
		if err != nil {
			return fmt.Errorf("list jobs: %w", err)
		}
		if len(list) == 0 {
			fmt.Fprintln(c.stderr, "no jobs (geolocate backfill and geolocate reprocess start them)")
			return nil
		}
		return writeJobTable(c.stdout, list, now)
	case "show":
		job, err := getJob(ctx, store, id)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJobJSON(c.stdout, job, now)
		}
		writeJob(c.stdout, job, now)
		return nil
	}
	change := map[string]func(context.Context, string) error{"pause": store.Pause, "resume": store.Resume, "cancel": store.Cancel}[sub]
	if err := change(ctx, id); err != nil {
		if errors.Is(err, jobs.ErrNotFound) {
			return fmt.Errorf("no job %s (geolocate jobs lists them)", id)
		}
		return fmt.Errorf("%s job %s: %w", sub, id, err)
	}
	// The feeder and the predictor read the job's state: feeding stops or
	// starts at the feeder's next run, within a minute, and the messages
	// already queued for a paused or cancelled job are dropped uncalled.
	fmt.Fprintf(c.stdout, "job %s: %s; takes effect within a minute (the feeder's next run)\n", id, map[string]string{
		"pause": "paused (geolocate jobs resume " + id + " goes on)", "resume": "resumed", "cancel": "cancelled",
	}[sub])
	return nil
}

// openJobs is the job store of the table the locator finds.
func openJobs(ctx context.Context, c *cli, loc *stackLocator) (*jobs.Store, error) {
	clients, err := loadAWS(ctx)
	if err != nil {
		return nil, err
	}
	table, err := loc.table(ctx, c, clients)
	if err != nil {
		return nil, err
	}
	return jobs.New(clients.tables, table), nil
}

// getJob reads one job, saying so in one line when there is none.
func getJob(ctx context.Context, store *jobs.Store, id string) (jobs.Job, error) {
	job, err := store.Get(ctx, id)
	if errors.Is(err, jobs.ErrNotFound) {
		return jobs.Job{}, fmt.Errorf("no job %s (geolocate jobs lists them)", id)
	}
	if err != nil {
		return jobs.Job{}, fmt.Errorf("read job %s: %w", id, err)
	}
	return job, nil
}

// timeLayout is how the job commands print times: minutes, UTC.
const timeLayout = "2006-01-02 15:04 UTC"

func writeJobTable(w io.Writer, list []jobs.Job, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATE\tDONE\tREMAINING\tCREDITS\tRATE/MIN\tSTARTED\tETA\tWHAT")
	for _, j := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d\t%.1f\t%s\t%s\t%s\n", j.ID, j.Kind, stateOf(j), j.Ended(), remaining(j),
			j.CreditsSpent, feedRate(j), j.Created.UTC().Format(timeLayout), eta(j, now), what(j))
	}
	return tw.Flush()
}

// writeJob is one job, a line per figure.
func writeJob(w io.Writer, j jobs.Job, now time.Time) {
	fmt.Fprintf(w, "job %s: %s %s, %s\n", j.ID, j.Kind, what(j), stateOf(j))
	fmt.Fprintf(w, "objects:  %s listed, %d sent, %d done (%d succeeded or rejected, %d failed, %d skipped), %s remaining\n",
		listed(j), j.Sent, j.Ended(), j.Done, j.Failed, j.Skipped, remaining(j))
	fmt.Fprintf(w, "credits:  %d spent%s\n", j.CreditsSpent, creditsAhead(j))
	fmt.Fprintf(w, "rate:     %s\n", rateLine(j))
	fmt.Fprintf(w, "started:  %s; last progress %s\n", j.Created.UTC().Format(timeLayout), since(j.LastProgress, now))
	fmt.Fprintf(w, "finish:   %s\n", eta(j, now))
	writeJobError(w, j)
}

// writeJobError is the line of what the job's last feeder run met, if
// anything: jobs show's and a new job's.
func writeJobError(w io.Writer, j jobs.Job) {
	if j.Error != "" {
		fmt.Fprintf(w, "error:    %s (the feeder retries it each minute)\n", j.Error)
	}
}

// jobJSON is jobs show --json: the job as stored, with what the table
// prints derived from it.
type jobJSON struct {
	jobs.Job
	Remaining int64      `json:"remaining"`
	ETA       *time.Time `json:"eta,omitempty"`
}

func writeJobJSON(w io.Writer, j jobs.Job, now time.Time) error {
	out := jobJSON{Job: j, Remaining: j.Remaining()}
	if t := j.ETA(now); !t.IsZero() && j.State != jobs.StateDone && j.State != jobs.StateCancelled {
		out.ETA = &t
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// rateLine says the job's feed rate and where it comes from.
func rateLine(j jobs.Job) string {
	if j.RatePerMinute <= 0 && j.FeedRate <= 0 {
		return "the feeder's (the stack's rate was not read)"
	}
	return fmt.Sprintf("%.1f calls a minute (%.0f%% of what the stack's pacer calls at %g a minute, the rest left to uploads)",
		feedRate(j), 100*jobs.Share(j.RatePerMinute), j.RatePerMinute)
}

// what is the job's object set, as the operator gave it.
func what(j jobs.Job) string {
	switch j.Kind {
	case jobs.KindReprocess:
		return fmt.Sprintf("run %s, model %s (%s)", j.Run, modelName(j.ModelID), j.Selection)
	}
	s := "s3://" + j.Bucket + "/" + j.Prefix
	if j.Requeue {
		s += " (requeue-unknown)"
	}
	return s
}

// stateOf is the job's state, with why feeding waits when it does.
func stateOf(j jobs.Job) string {
	if j.Held != "" && j.State != jobs.StatePaused {
		return string(j.State) + " (held: " + j.Held + ")"
	}
	return string(j.State)
}

// listed is the objects the listing found, marked while it goes on.
func listed(j jobs.Job) string {
	if j.ListingDone {
		return fmt.Sprint(j.Listed)
	}
	return fmt.Sprintf("%d so far (listing)", j.Listed)
}

// remaining is what is left, a lower bound while the listing goes on.
func remaining(j jobs.Job) string {
	if j.ListingDone {
		return fmt.Sprint(j.Remaining())
	}
	return fmt.Sprintf(">=%d", j.Remaining())
}

// creditsAhead is what the rest costs at the job's price.
func creditsAhead(j jobs.Job) string {
	if j.Price <= 0 || j.State == jobs.StateDone || j.State == jobs.StateCancelled {
		return ""
	}
	more := ""
	if !j.ListingDone {
		more = " at least"
	}
	return fmt.Sprintf(";%s %d more at %d credit(s) a call (objects already recorded cost nothing)", more, j.Remaining()*int64(j.Price), j.Price)
}

// eta is when the job finishes at its rate from what remains.
func eta(j jobs.Job, now time.Time) string {
	switch j.State {
	case jobs.StateDone:
		return "done " + j.Updated.UTC().Format(timeLayout)
	case jobs.StateCancelled:
		return "cancelled"
	case jobs.StatePaused:
		return "paused"
	}
	t := j.ETA(now)
	if t.IsZero() {
		return "-"
	}
	s := t.UTC().Format(timeLayout) + " (in " + t.Sub(now).Round(time.Minute).String() + ")"
	if !j.ListingDone {
		s = "after " + s + ", listing"
	}
	return s
}

// since is how long ago t was, "-" for never.
func since(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return now.Sub(t).Round(time.Second).String() + " ago"
}

// stackPredictor is what a new job needs of the stack's predictor: its
// rate (calls a minute; 0 unknown) and the credits a call of its model is
// assumed to cost.
type stackPredictor struct {
	rate  float64
	price int
	// bucket is the one bucket the predictor reads (its BUCKET_NAME);
	// bucketKnown false when its configuration could not be read, and
	// bucket "" with bucketKnown when it reads any.
	bucket      string
	bucketKnown bool
}

// refuses says why a backfill of bucket cannot run on the stack: its
// predictor ignores every object of another bucket (other_bucket), so the
// job would feed the whole bucket through the queue and record nothing.
func (s stackPredictor) refuses(bucket string) error {
	if !s.bucketKnown || s.bucket == "" || s.bucket == bucket {
		return nil
	}
	return usageError{fmt.Errorf("s3://%s is not the stack's bucket: its predictor reads s3://%s only (%s), so every object of the job would be ignored and nothing recorded; "+
		"back up s3://%s, or deploy a stack on %s (the %s setting)", bucket, s.bucket, envvars.BucketName, s.bucket, bucket, settings.ExistingBucketName.Key)}
}

// feedRate is the calls a minute a job feeds at on the stack (jobs.Rate
// of its rate), 0 when the stack's rate is unknown.
func (s stackPredictor) feedRate() float64 {
	if s.rate <= 0 {
		return 0
	}
	return jobs.Rate(s.rate)
}

// feedRate is the calls a minute the job feeds at: what the feeder last
// fed it at, else what it will (jobs.Rate of the stack's rate); 0 unknown.
func feedRate(j jobs.Job) float64 {
	if j.FeedRate > 0 {
		return j.FeedRate
	}
	return stackPredictor{rate: j.RatePerMinute}.feedRate()
}

// readStackPredictor reads the stack's predictor configuration as doctor
// does. rate, when given, is the operator's --rate. What cannot be read is
// said on stderr and left to the feeder: the job runs all the same, only
// its expected finish is unknown.
func readStackPredictor(ctx context.Context, c *cli, d *doctor, rate float64, rateGiven bool) stackPredictor {
	s := stackPredictor{rate: rate, price: predictor.Config{}.ExpectedCost()}
	env, err := d.predictorEnv(ctx)
	if err != nil {
		if !rateGiven {
			fmt.Fprintf(c.stderr, "the stack's rate is unknown (%v): the job feeds at its feeder's rate; --rate gives it for the expected finish\n", err)
		}
		return s
	}
	s.price = predictor.Config{ModelID: env[envvars.ModelID]}.ExpectedCost()
	s.bucket, s.bucketKnown = env[envvars.BucketName], true
	if !rateGiven {
		if s.rate, err = stackRate(ctx, d); err != nil {
			fmt.Fprintf(c.stderr, "%v; the job feeds at its feeder's rate\n", err)
		}
	}
	return s
}

// retiredFlags are the flags of the CLI's own senders, which the jobs
// replaced: given, they are refused with why rather than ignored.
var retiredFlags = []struct{ name, why string }{
	{"send-rate", "the job feeds the queue in the account at the stack's rate less the room uploads need"},
	{"queue-url", "the job feeds the stack's upload queue, the one its feeder is configured with"},
}

// refuseJobFlags registers the retired flags on fs.
func refuseJobFlags(fs *flag.FlagSet) {
	for _, f := range retiredFlags {
		fs.String(f.name, "", "no longer used: "+f.why)
	}
}

// refusedJobFlag is the usage error for a retired flag given, nil if none.
func refusedJobFlag(fs *flag.FlagSet) error {
	for _, f := range retiredFlags {
		if flagGiven(fs, f.name) {
			return usageError{fmt.Errorf("--%s no longer applies: %s", f.name, f.why)}
		}
	}
	return nil
}

// activeJob is the newest job not yet done or cancelled that match
// accepts, nil if none.
func activeJob(ctx context.Context, store *jobs.Store, match func(jobs.Job) bool) (*jobs.Job, error) {
	list, err := store.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	for i := range list {
		if list[i].State.Active() && match(list[i]) {
			return &list[i], nil
		}
	}
	return nil, nil
}

// startJob creates the job, starts the feeder once so that its listing
// starts at once, waits a few seconds for the listing's first figures and
// prints the job's summary. With follow it then watches the job until it
// is done or ctx ends (Ctrl-C: the job goes on in the account).
func startJob(ctx context.Context, c *cli, clients *awsClients, loc *stackLocator, store *jobs.Store, spec jobs.Spec, follow bool) error {
	job, err := store.Create(ctx, spec)
	if err != nil {
		return fmt.Errorf("create the job: %w", err)
	}
	fmt.Fprintf(c.stdout, "job %s created: %s %s\n", job.ID, job.Kind, what(job))
	if err := kickFeeder(ctx, clients, loc); err != nil {
		fmt.Fprintf(c.stderr, "%s: the feeder was not started (%v); the listing starts at its next scheduled run, within a minute\n", job.Kind, err)
	} else {
		job = waitListing(ctx, store, job)
	}
	now := time.Now()
	if job.ListingDone {
		fmt.Fprintf(c.stdout, "size: %d object(s), at most %d credit(s) at %d a call (objects already recorded cost nothing)\n",
			job.Listed, job.Listed*int64(job.Price), job.Price)
	} else {
		fmt.Fprintf(c.stdout, "size: listing in the account: %d so far\n", job.Listed)
	}
	// The feeder's first run may have met one (a reprocess selection too
	// large to plan, a bucket it cannot list): said now, not in a minute.
	writeJobError(c.stdout, job)
	fmt.Fprintf(c.stdout, "rate: %s\n", rateLine(job))
	fmt.Fprintf(c.stdout, "expected finish: %s\n", eta(job, now))
	fmt.Fprintf(c.stdout, "it runs in the account: nothing here needs to stay open. Follow it with geolocate jobs show %s (or --follow); "+
		"geolocate jobs pause|resume|cancel %s\n", job.ID, job.ID)
	if !follow {
		return nil
	}
	return followJob(ctx, c, store, job.ID)
}

// kickFeeder invokes the stack's feeder function asynchronously (as its
// schedule does), so a new job's listing starts now. Without the output
// or the permission the job simply waits for the schedule.
func kickFeeder(ctx context.Context, clients *awsClients, loc *stackLocator) error {
	inv, ok := clients.functions.(invokeAPI)
	if !ok {
		return errors.New("no Lambda client")
	}
	fn, err := loc.output(ctx, clients, outputJobFeederFunctionName)
	if err != nil {
		return err
	}
	// An Event invocation returns once Lambda has queued the event
	// (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async.html):
	// the listing runs in the account, not under this command.
	_, err = inv.Invoke(ctx, &lambda.InvokeInput{
		FunctionName:   aws.String(fn),
		InvocationType: lambdatypes.InvocationTypeEvent,
		Payload:        []byte(`{"source":"geolocate.cli","detail-type":"Job Created","detail":{}}`),
	})
	if err != nil {
		return fmt.Errorf("invoke %s: %w", fn, err)
	}
	return nil
}

// waitListing reads the job until its listing is done or kickWait passed,
// and returns the last reading.
func waitListing(ctx context.Context, store *jobs.Store, job jobs.Job) jobs.Job {
	ctx, cancel := context.WithTimeout(ctx, kickWait)
	defer cancel()
	tick := time.NewTicker(kickPoll)
	defer tick.Stop()
	for !job.ListingDone {
		select {
		case <-ctx.Done():
			return job
		case <-tick.C:
		}
		if j, err := store.Get(ctx, job.ID); err == nil {
			job = j
		}
	}
	return job
}

// followJob prints the job's progress each time it moves, until it is
// done or cancelled, or until ctx ends, which stops the watching only.
func followJob(ctx context.Context, c *cli, store *jobs.Store, id string) error {
	fmt.Fprintf(c.stdout, "following job %s; Ctrl-C stops watching, not the job\n", id)
	tick := time.NewTicker(followEvery)
	defer tick.Stop()
	var last string
	for {
		job, err := getJob(ctx, store, id)
		switch {
		case ctx.Err() != nil:
			fmt.Fprintf(c.stdout, "stopped watching; job %s goes on in the account (geolocate jobs show %s)\n", id, id)
			return nil
		case err != nil:
			return err
		}
		if line := progressLine(job, time.Now()); line != last {
			fmt.Fprintf(c.stdout, "%s %s\n", time.Now().UTC().Format("15:04:05"), line)
			last = line
		}
		if job.State == jobs.StateDone || job.State == jobs.StateCancelled {
			return nil
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// progressLine is one reading of a followed job.
func progressLine(j jobs.Job, now time.Time) string {
	return fmt.Sprintf("%s: %s listed, %d sent, %d done, %s remaining, %d credit(s) spent; %s",
		stateOf(j), listed(j), j.Sent, j.Ended(), remaining(j), j.CreditsSpent, eta(j, now))
}
