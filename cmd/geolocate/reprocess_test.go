package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/shared/reprocessmsg"
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

// TestSendRunBatches: one message per object in batches of at most 10,
// each a reprocess message the predictor reads.
func TestSendRunBatches(t *testing.T) {
	var todo []ledger.Record
	for i := range 23 {
		todo = append(todo, rec(fmt.Sprintf("k%d.jpg", i), "", ledger.StatusSucceeded, 0, 1))
	}
	var sizes []int
	var first reprocessmsg.Message
	err := sendRun(context.Background(), func(_ context.Context, b []sqstypes.SendMessageBatchRequestEntry) error {
		sizes = append(sizes, len(b))
		if first.Reprocess == nil {
			return json.Unmarshal([]byte(*b[0].MessageBody), &first)
		}
		return nil
	}, "r", "global_v0.2", 1, todo)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sizes, []int{10, 10, 3}) {
		t.Errorf("batches %v, want 10, 10, 3", sizes)
	}
	if o := first.Reprocess; o == nil || o.Run != "r" || o.ModelID != "global_v0.2" || o.Key != "k0.jpg" || o.VersionID != "v1" || o.CreditsPerCall != 1 {
		t.Errorf("first message %+v", first.Reprocess)
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
