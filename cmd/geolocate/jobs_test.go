package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// feederFunctions is the stack's Lambda as the job commands see it: the
// predictor's configuration (fakeFunctions, read for the rate) and the job
// feeder function, which an Event invocation runs once in the background,
// as Lambda runs an asynchronous invocation: the real pkg/jobs feeder on
// the test's table, bucket and queue.
type feederFunctions struct {
	*fakeFunctions
	name   string
	feeder *jobs.Feeder

	mu      sync.Mutex
	invoked []*lambda.InvokeInput
	runs    sync.WaitGroup
}

func (f *feederFunctions) Invoke(_ context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	f.mu.Lock()
	f.invoked = append(f.invoked, in)
	f.mu.Unlock()
	if aws.ToString(in.FunctionName) != f.name {
		return nil, &smithy.GenericAPIError{Code: "ResourceNotFoundException", Message: "Function not found: " + aws.ToString(in.FunctionName)}
	}
	if in.InvocationType == lambdatypes.InvocationTypeEvent {
		f.runs.Go(func() { _, _ = f.feeder.Run(context.Background()) })
		return &lambda.InvokeOutput{StatusCode: 202}, nil
	}
	if _, err := f.feeder.Run(context.Background()); err != nil {
		return nil, err
	}
	return &lambda.InvokeOutput{StatusCode: 200}, nil
}

func (f *feederFunctions) invocations() []*lambda.InvokeInput {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*lambda.InvokeInput(nil), f.invoked...)
}

// jobStack is a deployed stack for the job commands: its outputs, a bucket,
// the results table, the upload queue, the predictor (whose configuration
// gives the rate) and the job feeder.
type jobStack struct {
	s3        *s3.Client
	bucket    string
	table     string
	ddb       tableAPI
	records   *ledger.Store
	jobs      *jobs.Store
	queues    *fakeQueues
	functions *feederFunctions
}

const (
	jobStackQueueURL = "https://sqs.example/uploads"
	jobStackFeeder   = "Geo-JobFeeder"
)

func newJobStack(t *testing.T, predictorEnv map[string]string) *jobStack {
	t.Helper()
	s3c, bucket := awspartstest.S3(t)
	ddb, table := awspartstest.DynamoDB(t)
	const queueArn, fnArn = "arn:aws:sqs:eu-west-1:123456789012:uploads", "arn:aws:lambda:eu-west-1:123456789012:function:predictor"
	queues := &fakeQueues{attrs: map[string]map[string]string{jobStackQueueURL: {"QueueArn": queueArn}}}
	store := jobs.New(ddb, table)
	s := &jobStack{s3: s3c, bucket: bucket, table: table, ddb: ddb, records: ledger.New(ddb, table), jobs: store, queues: queues}
	s.functions = &feederFunctions{
		fakeFunctions: &fakeFunctions{
			mappings: map[string][]lambdatypes.EventSourceMappingConfiguration{queueArn: {{FunctionArn: aws.String(fnArn), State: aws.String("Enabled")}}},
			env:      map[string]map[string]string{fnArn: predictorEnv},
		},
		name:   jobStackFeeder,
		feeder: jobs.NewFeeder(store, s3c, queues, jobStackQueueURL, func(o *jobs.FeederOptions) { o.RatePerMinute = 30; o.MaxConcurrency = 2 }),
	}
	useAWS(t, &awsClients{objects: s3c, tables: ddb, queues: queues, functions: s.functions,
		stacks: fakeStacks{name: defaultStackName, outputs: map[string]string{
			outputTableName: table, outputQueueURL: jobStackQueueURL, outputBucketName: bucket, outputJobFeederFunctionName: jobStackFeeder,
		}}})
	t.Cleanup(s.functions.runs.Wait)
	return s
}

// onlyJob is the one job the stack holds.
func (s *jobStack) onlyJob(t *testing.T) jobs.Job {
	t.Helper()
	list, err := s.jobs.List(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("jobs = %+v, %v; want exactly one", list, err)
	}
	return list[0]
}

// TestBackfillCreatesAJobAndReturns: backfill creates a backfill job with
// the operator's bucket and prefix and the stack's rate, starts the feeder
// once (an Event invocation of the stack's JobFeederFunctionName), and
// returns within seconds, printing the job, its size as far as the listing
// got, the rate and how to follow it. It sends nothing itself.
func TestBackfillCreatesAJobAndReturns(t *testing.T) {
	s := newJobStack(t, map[string]string{envvars.RatePerMinute: "60"})
	objects := map[string]string{"other/skip.jpg": "outside the prefix"}
	for i := range 23 {
		objects[fmt.Sprintf("photos/img-%02d.jpg", i)] = fmt.Sprintf("image %d", i)
	}
	putObjects(t, s.s3, s.bucket, objects)

	start := time.Now()
	r := runCLI(t, nil, nil, "backfill", "--prefix", "photos/")
	if took := time.Since(start); r.code != 0 || took > kickWait+3*time.Second {
		t.Fatalf("exit %d after %v (want 0 within seconds): %s%s", r.code, took, r.stdout, r.stderr)
	}
	job := s.onlyJob(t)
	if job.Kind != jobs.KindBackfill || job.Bucket != s.bucket || job.Prefix != "photos/" || job.Requeue {
		t.Errorf("job %+v: want a backfill of the stack's bucket, prefix photos/", job.Spec)
	}
	if job.RatePerMinute != 60 {
		t.Errorf("job rate %g, want the stack's predictor's 60", job.RatePerMinute)
	}
	inv := s.functions.invocations()
	if len(inv) != 1 || inv[0].InvocationType != lambdatypes.InvocationTypeEvent || aws.ToString(inv[0].FunctionName) != jobStackFeeder {
		t.Errorf("invocations %+v: want one Event invocation of %s", inv, jobStackFeeder)
	}
	for _, want := range []string{"job " + job.ID + " created: backfill s3://" + s.bucket + "/photos/", "rate: " + fmt.Sprintf("%.1f", jobs.Rate(60)) + " calls a minute",
		"geolocate jobs show " + job.ID, "nothing here needs to stay open"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	// The size: known when the listing ended within the wait, else what
	// the listing reached, in the job's own figures.
	if got := job; got.ListingDone {
		if !strings.Contains(r.stdout, fmt.Sprintf("size: %d object(s)", got.Listed)) {
			t.Errorf("listing done, but the size is not printed:\n%s", r.stdout)
		}
	} else if !strings.Contains(r.stdout, "size: listing in the account:") {
		t.Errorf("listing under way, but not said:\n%s", r.stdout)
	}

	t.Run("a second backfill of the same prefix joins the first", func(t *testing.T) {
		r := runCLI(t, nil, nil, "backfill", "--prefix", "photos/")
		if r.code != 0 || !strings.Contains(r.stdout, "job "+job.ID+" already backfills") {
			t.Errorf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
		}
		if list, _ := s.jobs.List(context.Background()); len(list) != 1 {
			t.Errorf("%d jobs, want still one", len(list))
		}
	})
}

// TestBackfillWithoutTheFeederWaitsForTheSchedule: a stack without the
// feeder's output (or the permission to invoke it) still gets its job,
// which the feeder's schedule starts within a minute; the command says so.
func TestBackfillWithoutTheFeederWaitsForTheSchedule(t *testing.T) {
	s := newJobStack(t, nil)
	s.functions.name = "another-function"
	r := runCLI(t, nil, nil, "backfill", "--bucket", s.bucket)
	if r.code != 0 || !strings.Contains(r.stderr, "the listing starts at its next scheduled run, within a minute") {
		t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if job := s.onlyJob(t); job.State != jobs.StateListing || job.Listed != 0 {
		t.Errorf("job %s %s, %d listed: want created, not yet listed", job.ID, job.State, job.Listed)
	}
	// Unset in the predictor's configuration, the rate is the setting's default.
	if !strings.Contains(r.stdout, fmt.Sprintf("rate: %.1f calls a minute", jobs.Rate(30))) {
		t.Errorf("an unset rate is not the default 30:\n%s", r.stdout)
	}
}

// TestBackfillRetiredFlagsAreRefused: the CLI's own sender is gone, and so
// are its flags: said in one line, nothing created.
func TestBackfillRetiredFlagsAreRefused(t *testing.T) {
	s := newJobStack(t, nil)
	for _, args := range [][]string{
		{"backfill", "--bucket", s.bucket, "--queue-url", "q"},
		{"backfill", "--bucket", s.bucket, "--follow", "--dry-run"},
		{"backfill", "--bucket", s.bucket, "--count-reuse"},
	} {
		r := runCLI(t, nil, nil, args...)
		if r.code != exitUsage || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q; want a usage error", args, r.code, r.stdout)
		}
	}
	if r := runCLI(t, nil, nil, "backfill", "--bucket", s.bucket, "--queue-url", "q"); !strings.Contains(r.stderr, "--queue-url no longer applies: the job feeds the stack's upload queue") {
		t.Errorf("--queue-url: %s", r.stderr)
	}
	if list, _ := s.jobs.List(context.Background()); len(list) != 0 {
		t.Errorf("%d jobs created by refused commands", len(list))
	}
}

// TestJobsCommands: jobs lists, shows (also as JSON), pauses, resumes and
// cancels; an unknown id is one line.
func TestJobsCommands(t *testing.T) {
	s := newJobStack(t, nil)
	ctx := context.Background()
	backfill, err := s.jobs.Create(ctx, jobs.Spec{Kind: jobs.KindBackfill, Bucket: s.bucket, Prefix: "2026/", Price: 1, RatePerMinute: 30})
	if err != nil {
		t.Fatal(err)
	}
	rerun, err := s.jobs.Create(ctx, jobs.Spec{Kind: jobs.KindReprocess, Run: "try-v0.3", ModelID: "global_v0.3", Price: 1,
		Selection: "status=succeeded sample=50", RatePerMinute: 30})
	if err != nil {
		t.Fatal(err)
	}

	r := runCLI(t, nil, nil, "jobs")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") {
		t.Fatalf("jobs: exit %d, want a header and two rows:\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, col := range []string{"KIND", "STATE", "DONE", "REMAINING", "CREDITS", "RATE/MIN", "STARTED", "ETA"} {
		if !strings.Contains(lines[0], col) {
			t.Errorf("header lacks %s: %s", col, lines[0])
		}
	}
	if !strings.Contains(r.stdout, backfill.ID) || !strings.Contains(r.stdout, "run try-v0.3, model global_v0.3") {
		t.Errorf("rows:\n%s", r.stdout)
	}

	r = runCLI(t, nil, nil, "jobs", "show", backfill.ID, "--json")
	var got struct {
		ID        string
		State     jobs.State
		Bucket    string
		Remaining int64 `json:"remaining"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &got) != nil || got.ID != backfill.ID || got.Bucket != s.bucket || got.State != jobs.StateListing {
		t.Errorf("show --json: exit %d, %+v:\n%s%s", r.code, got, r.stdout, r.stderr)
	}
	if r = runCLI(t, nil, nil, "jobs", "--stack", defaultStackName, "show", rerun.ID); r.code != 0 || !strings.Contains(r.stdout, "job "+rerun.ID+": reprocess run try-v0.3") {
		t.Errorf("show: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}

	for _, step := range []struct {
		verb string
		want jobs.State
	}{{"pause", jobs.StatePaused}, {"resume", jobs.StateListing}, {"cancel", jobs.StateCancelled}} {
		r := runCLI(t, nil, nil, "jobs", step.verb, backfill.ID)
		j, err := s.jobs.Get(ctx, backfill.ID)
		if r.code != 0 || err != nil || j.State != step.want || !strings.Contains(r.stdout, "within a minute") {
			t.Errorf("jobs %s: exit %d, state %s (%v), want %s:\n%s%s", step.verb, r.code, j.State, err, step.want, r.stdout, r.stderr)
		}
	}
	if r := runCLI(t, nil, nil, "jobs", "resume", backfill.ID); r.code != 1 || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("resuming a cancelled job: exit %d, %q; want one error line", r.code, r.stderr)
	}

	const unknown = "j-20261202-aaaaaa"
	for _, verb := range []string{"show", "pause", "cancel"} {
		assertOneLineError(t, runCLI(t, nil, nil, "jobs", verb, unknown), "jobs: no job "+unknown)
	}
	for _, args := range [][]string{{"jobs", "show"}, {"jobs", "stop", backfill.ID}, {"jobs", "pause", backfill.ID, "--json"}} {
		if r := runCLI(t, nil, nil, args...); r.code != exitUsage {
			t.Errorf("%v: exit %d, want a usage error", args, r.code)
		}
	}
}

// TestFollowStopsWatchingNotTheJob: --follow prints the job's progress
// as it moves; Ctrl-C ends the watching and says the job goes on, which
// it does; a job that ends ends the watching by itself.
func TestFollowStopsWatchingNotTheJob(t *testing.T) {
	saved := followEvery
	followEvery = 20 * time.Millisecond
	t.Cleanup(func() { followEvery = saved })
	s := newJobStack(t, nil)
	job, err := s.jobs.Create(context.Background(), jobs.Spec{Kind: jobs.KindBackfill, Bucket: s.bucket, Price: 1, RatePerMinute: 10})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c := &cli{stdout: &out, stderr: &out}
	ctx, interrupt := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer interrupt()
	if err := followJob(ctx, c, s.jobs, job.ID); err != nil {
		t.Fatalf("followJob: %v", err)
	}
	if !strings.Contains(out.String(), "following job "+job.ID+"; Ctrl-C stops watching, not the job") ||
		!strings.Contains(out.String(), "stopped watching; job "+job.ID+" goes on in the account") ||
		strings.Count(out.String(), " listing: ") != 1 {
		t.Errorf("output (want one progress line, the job unchanged):\n%s", out.String())
	}
	if j, err := s.jobs.Get(context.Background(), job.ID); err != nil || !j.State.Active() {
		t.Errorf("after Ctrl-C the job is %s (%v), want it still active", j.State, err)
	}

	out.Reset()
	done := make(chan error, 1)
	go func() { done <- followJob(context.Background(), c, s.jobs, job.ID) }()
	time.Sleep(50 * time.Millisecond)
	if err := s.jobs.Cancel(context.Background(), job.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil || !strings.Contains(out.String(), "cancelled:") {
			t.Errorf("follow of a cancelled job: %v\n%s", err, out.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("following a cancelled job did not end")
	}
}

// A backfill of a bucket the stack's predictor does not read is refused
// before any job exists: every object would be ignored (other_bucket).
func TestBackfillRefusesABucketThePredictorDoesNotRead(t *testing.T) {
	for _, tt := range []struct {
		name  string
		stack stackPredictor
		want  bool
	}{
		{"the stack's bucket", stackPredictor{bucket: "photos", bucketKnown: true}, false},
		{"another bucket", stackPredictor{bucket: "other", bucketKnown: true}, true},
		{"a predictor that reads any bucket", stackPredictor{bucketKnown: true}, false},
		{"configuration unread: the feeder decides", stackPredictor{bucket: "other"}, false},
	} {
		err := tt.stack.refuses("photos")
		if (err != nil) != tt.want {
			t.Errorf("%s: refuses = %v, want refused %v", tt.name, err, tt.want)
		}
		if err != nil && (!strings.Contains(err.Error(), "s3://photos is not the stack's bucket") || !strings.Contains(err.Error(), "s3://other only")) {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}
