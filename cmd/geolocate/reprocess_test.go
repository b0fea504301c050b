package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
	"github.com/geolocate-aws/geolocate/pkg/reprocess"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// parsedSelection parses selection flags as reprocess does.
func parsedSelection(t *testing.T, args ...string) selection {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var s selection
	s.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := s.check(fs); err != nil {
		t.Fatal(err)
	}
	return s
}

var t0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

func rec(key, run, status string, at int, radius float64) ledger.Record {
	return ledger.Record{Bucket: "b", Key: key, VersionID: "v1", Run: run, Status: status, UpdatedAt: t0.Add(time.Duration(at) * time.Minute), RadiusKM: f64(radius), Size: 10}
}

// TestPlanRunSelectsOnLatestAndResumes: the selection judges each version
// on its latest result outside the run; what the run finished is left out,
// what it holds waiting is sent again.
func TestPlanRunSelectsOnLatestAndResumes(t *testing.T) {
	records := []ledger.Record{
		rec("wide.jpg", "", ledger.StatusSucceeded, 0, 300),
		rec("narrow.jpg", "", ledger.StatusSucceeded, 0, 10),
		rec("bad.jpg", "", ledger.StatusRejected, 0, 900),
		rec("done.jpg", "", ledger.StatusSucceeded, 0, 400),
		rec("done.jpg", "r", ledger.StatusSucceeded, 5, 5), // the run's own: not what selects
		rec("capped.jpg", "", ledger.StatusSucceeded, 0, 500),
		rec("capped.jpg", "r", ledger.StatusWaiting, 5, 0),
		rec("improved.jpg", "", ledger.StatusSucceeded, 0, 800),
		rec("improved.jpg", "other", ledger.StatusSucceeded, 3, 20), // a later run's result is the latest
	}
	plan := planRun(records, parsedSelection(t, "--radius-over", "100"), "r")
	var keys []string
	for _, r := range plan.todo {
		keys = append(keys, r.Key)
	}
	slices.Sort(keys)
	if plan.selected != 3 || plan.done != 1 || !slices.Equal(keys, []string{"capped.jpg", "wide.jpg"}) {
		t.Errorf("plan = selected %d done %d todo %v; want 3 selected, done.jpg done, capped.jpg and wide.jpg to send", plan.selected, plan.done, keys)
	}
}

// TestPlanRunSampleIsStable: a sample has the size asked, is the same for
// the same run name (a resumed run draws the same photos) and another for
// another name.
func TestPlanRunSampleIsStable(t *testing.T) {
	var records []ledger.Record
	for i := range 200 {
		records = append(records, rec(fmt.Sprintf("p%03d.jpg", i), "", ledger.StatusSucceeded, i, 50))
	}
	sel := parsedSelection(t, "--sample", "50")
	keysOf := func(p runPlan) []string {
		var k []string
		for _, r := range p.todo {
			k = append(k, r.Key)
		}
		slices.Sort(k)
		return k
	}
	a, again, other := keysOf(planRun(records, sel, "s1")), keysOf(planRun(slices.Clone(records), sel, "s1")), keysOf(planRun(records, sel, "s2"))
	if len(a) != 50 || !slices.Equal(a, again) {
		t.Fatalf("sample of 50 = %d objects, same again %t", len(a), slices.Equal(a, again))
	}
	if slices.Equal(a, other) {
		t.Error("two runs drew the same sample")
	}
}

func TestWilson(t *testing.T) {
	lo, hi := wilson(5, 10)
	if math.Abs(lo-0.2366) > 1e-3 || math.Abs(hi-0.7634) > 1e-3 {
		t.Errorf("wilson(5, 10) = %.4f, %.4f; want 0.2366, 0.7634", lo, hi)
	}
	if lo, hi := wilson(0, 20); lo != 0 || math.Abs(hi-0.1611) > 1e-3 {
		t.Errorf("wilson(0, 20) = %.4f, %.4f; want 0, 0.1611", lo, hi)
	}
}

// TestCompareRunMeasuresTheGain: results that moved, changed place or
// country are counted; on photos with EXIF positions the run that halves
// every error shows a positive median gain whose interval excludes 0.
func TestCompareRunMeasuresTheGain(t *testing.T) {
	var records []ledger.Record
	for i := range 60 {
		before := float64(50 + 10*i)
		prev := &ledger.HistoryEntry{Place: "Lyon", CountryCode: "FR", Latitude: f64(45.76), Longitude: f64(4.83), ErrorKm: f64(before)}
		r := ledger.Record{Run: "r", Status: ledger.StatusSucceeded, Place: "Lyon", CountryCode: "FR",
			Latitude: f64(45.76), Longitude: f64(4.83), ErrorKm: f64(before / 2), Previous: prev}
		if i%3 == 0 {
			r.Place, r.CountryCode, r.Latitude, r.Longitude = "Geneva", "CH", f64(46.20), f64(6.14)
		}
		records = append(records, r)
	}
	records = append(records, ledger.Record{Run: "r", Status: ledger.StatusWaiting}) // not compared
	cmp := compareRun(records)
	if cmp.Compared != 60 || cmp.ChangedPlace != 20 || cmp.ChangedCountry != 20 || cmp.MovedOver1Km != 20 {
		t.Errorf("compared %d, changed place %d country %d moved %d; want 60, 20, 20, 20", cmp.Compared, cmp.ChangedPlace, cmp.ChangedCountry, cmp.MovedOver1Km)
	}
	if cmp.P90MovedKm < 100 || cmp.MedianMovedKm != 0 {
		t.Errorf("moved median %.1f p90 %.1f; want 0 and about 110 (Lyon-Geneva)", cmp.MedianMovedKm, cmp.P90MovedKm)
	}
	g := cmp.MedianGainKm
	if g == nil || math.Abs(g.Value-(cmp.Before.MedianKm.Value-cmp.After.MedianKm.Value)) > 1e-9 || g.Low <= 0 || g.Low > g.Value || g.High < g.Value {
		t.Fatalf("gain %+v; want positive with an interval around it excluding 0", g)
	}
	if b := cmp.Before.MedianKm; b.Low > b.Value || b.High < b.Value {
		t.Errorf("before median interval %+v does not hold its value", b)
	}
	var out strings.Builder
	cmp.write(&out)
	if !strings.Contains(out.String(), "closer on these photos") || !strings.Contains(out.String(), "Wilson") {
		t.Errorf("report:\n%s", out.String())
	}
}

// reprocessStack is a deployed stack's fakes for geolocate reprocess: its
// outputs, its queue, the predictor the queue triggers with env, and the
// table (two succeeded records, seedRecords').
func reprocessStack(t *testing.T, env map[string]string) (*fakeQueues, *fakeFunctions) {
	t.Helper()
	client, table := awspartstest.DynamoDB(t)
	seedRecords(t, ledger.New(client, table))
	const queueURL, queueArn, fnArn = "https://sqs.example/q", "arn:aws:sqs:eu-west-1:123456789012:q", "arn:aws:lambda:eu-west-1:123456789012:function:predictor"
	queues := &fakeQueues{attrs: map[string]map[string]string{queueURL: {"QueueArn": queueArn}}}
	functions := &fakeFunctions{
		mappings: map[string][]lambdatypes.EventSourceMappingConfiguration{queueArn: {{FunctionArn: aws.String(fnArn), State: aws.String("Enabled")}}},
		env:      map[string]map[string]string{fnArn: env}}
	useAWS(t, &awsClients{tables: client, queues: queues, functions: functions,
		stacks: fakeStacks{name: "Geo", outputs: map[string]string{outputTableName: table, outputQueueURL: queueURL}}})
	return queues, functions
}

// fakeSendClock gives the run's Sender a clock that its sleeps move on
// (no real sleeping); interruptAfter > 0 makes that many sleeps end as
// Ctrl-C would.
func fakeSendClock(t *testing.T, interruptAfter int) *simclock.Clock {
	clock := simclock.New(t0)
	sleeps := 0
	saved := reprocessSendOptions
	reprocessSendOptions = []func(*reprocess.Options){func(o *reprocess.Options) {
		o.Clock = clock.Now
		o.Sleep = func(ctx context.Context, d time.Duration) error {
			if sleeps++; sleeps == interruptAfter {
				return context.Canceled
			}
			clock.Advance(d)
			return ctx.Err()
		}
	}}
	t.Cleanup(func() { reprocessSendOptions = saved })
	return clock
}

// TestReprocessSendsAtTheStacksRate: the run is sent a tenth slower than
// the stack's pacer calls, at the rate read from its predictor's
// configuration (6 a minute: 5.9 over the pacer's 61 s, sent at 5.3, a
// message every 11.3 s); the dry run's estimate is that pace; --send-rate 0 sends at once, --rate
// stands in for a configuration that cannot be read.
func TestReprocessSendsAtTheStacksRate(t *testing.T) {
	queues, functions := reprocessStack(t, map[string]string{envvars.RatePerMinute: "6"})
	args := func(run string, more ...string) []string {
		return append([]string{"reprocess", "--stack", "Geo", "--default-model", "--credits-per-call", "1", "--max-credits", "5", "--run", run}, more...)
	}
	interval := time.Duration(float64(time.Minute) / reprocess.SendRate(6))

	clock := fakeSendClock(t, 0)
	r := runCLI(t, nil, nil, args("dry", "--dry-run")...)
	if r.code != 0 || !strings.Contains(r.stdout, "about 23s: sent at 5.3/min, called at 5.9/min") || len(queues.sent) != 0 {
		t.Fatalf("dry run: exit %d, %d sent\n%s%s", r.code, len(queues.sent), r.stdout, r.stderr)
	}
	r = runCLI(t, nil, nil, args("paced")...)
	if r.code != 0 || len(queues.sent) != 2 || clock.Now().Sub(t0) != interval {
		t.Fatalf("paced run: exit %d, %d sent over %v (want 2, one interval of %v)\n%s%s", r.code, len(queues.sent), clock.Now().Sub(t0), interval, r.stdout, r.stderr)
	}

	clock = fakeSendClock(t, 0)
	r = runCLI(t, nil, nil, args("at-once", "--send-rate", "0")...)
	if r.code != 0 || len(queues.sent) != 4 || !clock.Now().Equal(t0) || !strings.Contains(r.stdout, "sent all at once, called at 5.9/min") {
		t.Fatalf("--send-rate 0: exit %d, %d sent in all, clock moved %v\n%s%s", r.code, len(queues.sent), clock.Now().Sub(t0), r.stdout, r.stderr)
	}

	functions.listErr = errors.New("AccessDeniedException: not authorized to perform lambda:ListEventSourceMappings")
	if r = runCLI(t, nil, nil, args("unread", "--dry-run")...); r.code != 1 || !strings.Contains(r.stderr, "pass --rate") {
		t.Errorf("unreadable configuration: exit %d, %s; want an error naming --rate", r.code, r.stderr)
	}
	if r = runCLI(t, nil, nil, args("given", "--dry-run", "--rate", "61")...); r.code != 0 || !strings.Contains(r.stdout, "about 2s: sent at 54.4/min, called at 60.5/min") {
		t.Errorf("--rate 61: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestReprocessStopsOnCtrlC: interrupted between two sends, the command
// says what it sent and that the same command resumes, and exits 1.
func TestReprocessStopsOnCtrlC(t *testing.T) {
	queues, _ := reprocessStack(t, nil) // unset: the setting's default, 30
	fakeSendClock(t, 1)
	r := runCLI(t, nil, nil, "reprocess", "--stack", "Geo", "--default-model", "--credits-per-call", "1", "--max-credits", "5", "--run", "stopped")
	if r.code != 1 || len(queues.sent) != 1 || !strings.Contains(r.stderr, "stopped after sending 1 of 2 object(s): the same command resumes run stopped") {
		t.Errorf("exit %d, %d sent\n%s%s", r.code, len(queues.sent), r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "sent at 26.6/min, called at 29.5/min") {
		t.Errorf("an unset rate is not the default 30:\n%s", r.stdout)
	}
}
