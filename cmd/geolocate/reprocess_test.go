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

	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
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
	plan := jobs.PlanRun(records, parsedSelection(t, "--radius-over", "100").Selection, "r")
	var keys []string
	for _, r := range plan.Todo {
		keys = append(keys, r.Key)
	}
	slices.Sort(keys)
	if plan.Selected != 3 || plan.Done != 1 || !slices.Equal(keys, []string{"capped.jpg", "wide.jpg"}) {
		t.Errorf("plan = selected %d done %d todo %v; want 3 selected, done.jpg done, capped.jpg and wide.jpg to send", plan.Selected, plan.Done, keys)
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
	keysOf := func(p jobs.Plan) []string {
		var k []string
		for _, r := range p.Todo {
			k = append(k, r.Key)
		}
		slices.Sort(k)
		return k
	}
	a, again, other := keysOf(jobs.PlanRun(records, sel.Selection, "s1")), keysOf(jobs.PlanRun(slices.Clone(records), sel.Selection, "s1")), keysOf(jobs.PlanRun(records, sel.Selection, "s2"))
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

// reprocessStack is newJobStack with the table's records (seedRecords':
// two succeeded).
func reprocessStack(t *testing.T, env map[string]string) *jobStack {
	t.Helper()
	s := newJobStack(t, env)
	seedRecords(t, s.records)
	return s
}

// TestReprocessCreatesARunAndItsJob: reprocess starts the run (its item,
// with the cap) and a reprocess job carrying the run, the model, the price
// and the selection as stored; it starts the feeder once and returns. The
// dry run's estimate is the job's rate, read from the stack's predictor
// (6 a minute: jobs.Rate 5.3, two objects in 23 s), and creates nothing.
func TestReprocessCreatesARunAndItsJob(t *testing.T) {
	s := reprocessStack(t, map[string]string{envvars.RatePerMinute: "6"})
	ctx := context.Background()
	args := func(run string, more ...string) []string {
		return append([]string{"reprocess", "--default-model", "--credits-per-call", "1", "--max-credits", "5", "--run", run, "--since", "1d"}, more...)
	}
	r := runCLI(t, nil, nil, args("dry", "--dry-run")...)
	if r.code != 0 || !strings.Contains(r.stdout, "selected 2 object(s) (status=succeeded since=1d); 0 already done in this run, 2 to send") ||
		!strings.Contains(r.stdout, fmt.Sprintf("at most 2 credit(s); about %s at %.1f calls a minute", (time.Duration(2/jobs.Rate(6)*float64(time.Minute))).Round(time.Second), jobs.Rate(6))) {
		t.Fatalf("dry run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if run, _ := s.records.GetRun(ctx, "dry"); run != nil || len(s.functions.invocations()) != 0 {
		t.Fatalf("the dry run created run %+v or started the feeder", run)
	}

	r = runCLI(t, nil, nil, args("r1")...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	run, err := s.records.GetRun(ctx, "r1")
	if err != nil || run == nil || run.Cap != 5 || run.Price != 1 || run.Selection != "status=succeeded since=1d" {
		t.Fatalf("run item %+v, %v; want cap 5, price 1 and the selection", run, err)
	}
	job := s.onlyJob(t)
	if job.Kind != jobs.KindReprocess || job.Run != "r1" || job.ModelID != "" || job.Price != 1 || job.Selection != run.Selection || job.RatePerMinute != 6 {
		t.Errorf("job %+v: want the run's reprocess job on the stack's rate, 6", job.Spec)
	}
	if inv := s.functions.invocations(); len(inv) != 1 || inv[0].InvocationType != lambdatypes.InvocationTypeEvent {
		t.Errorf("feeder invocations %+v, want one Event", inv)
	}
	if !strings.Contains(r.stdout, "job "+job.ID+" created: reprocess run r1, model (default model)") {
		t.Errorf("stdout:\n%s", r.stdout)
	}

	t.Run("resumed while its job runs: the cap is raised, no second job", func(t *testing.T) {
		r := runCLI(t, nil, nil, append(args("r1"), "--max-credits", "8")...)
		if r.code != 0 || !strings.Contains(r.stdout, "cap raised from 5 to 8") || !strings.Contains(r.stdout, "run r1 already has job "+job.ID) {
			t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if list, _ := s.jobs.List(ctx); len(list) != 1 {
			t.Errorf("%d jobs, want one", len(list))
		}
	})
}

// TestReprocessRefusesTheSendersFlags: --send-rate and --queue-url belonged
// to the CLI's own sender, which the job replaced.
func TestReprocessRefusesTheSendersFlags(t *testing.T) {
	s := reprocessStack(t, nil)
	for flag, why := range map[string]string{"--send-rate": "--send-rate no longer applies: the job feeds the queue in the account",
		"--queue-url": "--queue-url no longer applies"} {
		r := runCLI(t, nil, nil, "reprocess", "--default-model", "--max-credits", "5", flag, "1")
		if r.code != exitUsage || !strings.Contains(r.stderr, why) || r.stdout != "" {
			t.Errorf("%s: exit %d, stderr %q", flag, r.code, r.stderr)
		}
	}
	if list, _ := s.jobs.List(context.Background()); len(list) != 0 {
		t.Errorf("%d jobs created", len(list))
	}
}

// TestReprocessWithoutTheStacksRate: an unreadable predictor configuration
// is said, and the job feeds at its feeder's rate; --rate stands in for it.
func TestReprocessWithoutTheStacksRate(t *testing.T) {
	s := reprocessStack(t, nil)
	s.functions.listErr = errors.New("AccessDeniedException: not authorized to perform lambda:ListEventSourceMappings")
	r := runCLI(t, nil, nil, "reprocess", "--default-model", "--credits-per-call", "1", "--dry-run", "--since", "1d")
	if r.code != 0 || !strings.Contains(r.stderr, "--rate gives it") || !strings.Contains(r.stdout, "depends on the stack's rate") {
		t.Errorf("unreadable configuration: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, nil, nil, "reprocess", "--default-model", "--credits-per-call", "1", "--dry-run", "--since", "1d", "--rate", "61")
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("about 2s at %.1f calls a minute", jobs.Rate(61))) {
		t.Errorf("--rate 61: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
