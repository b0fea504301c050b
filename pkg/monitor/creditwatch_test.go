package monitor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// backendHarness is a monitor against the simulator's backend profile (the
// credit summary and the model list refuse API keys), with its key header
// and, when client is set, the credit history in a DynamoDB Local table.
func backendHarness(t *testing.T, client *dynamodb.Client, table string, edit func(*Config)) (*geosim.Server, *harness) {
	t.Helper()
	sim, url := newSim(t, geosim.WithProfile(geosim.ProfileBackend), geosim.WithKeyHeader(geosim.KeyHeader))
	cfg := testConfig()
	cfg.TableName = table
	if edit != nil {
		edit(&cfg)
	}
	var history *History
	if client != nil {
		history = NewHistory(codeClient(client), table, cfg.PipelineName, cfg.HistoryTTL)
	}
	return sim, newHarness(t, url, cfg, history)
}

// TestSummaryRefusingKeysIsHealthy: the refusal is a known state, said once
// in the report and the log; the run is healthy, so MonitorHeartbeat does
// not page; the models come from the public list.
func TestSummaryRefusingKeysIsHealthy(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	_, h := backendHarness(t, client, table, nil)
	for run := range 3 {
		rep, pts := h.run(t)
		if !rep.Healthy || len(rep.Reasons) != 0 {
			t.Fatalf("run %d: unhealthy: %v", run, rep.Reasons)
		}
		pts.want(t, metricnames.MonitorHealthy, 1)
		pts.want(t, metricnames.CreditSummaryReadable, 0)
		pts.wantAbsent(t, metricnames.CreditsRemaining, metricnames.CreditsEstimated)
		wantContains(t, "credit note", rep.CreditNote, "does not let API keys read the credit summary", "geolocate credits --declare")
		for _, w := range append(rep.Warnings, rep.Reasons...) {
			if strings.Contains(w, "credit summary") {
				t.Errorf("the state is said again among warnings or reasons: %q", w)
			}
		}
		if rep.Models == nil || !rep.Models.PublicOnly || rep.Models.Ready == 0 {
			t.Errorf("models %+v: want the public list", rep.Models)
		}
		pts.want(t, metricnames.ConfiguredModelAvailable, 1)
	}
	// Without the table there is nothing to estimate from: still healthy.
	_, bare := backendHarness(t, nil, "", nil)
	rep, pts := bare.run(t)
	pts.want(t, metricnames.MonitorHealthy, 1)
	wantContains(t, "credit note", rep.CreditNote, "only OutOfCredits")
	if n := strings.Count(h.logs.String(), `"msg":"credit watch"`); n != 1 {
		t.Errorf("the credit state was logged %d times in 3 runs, want once", n)
	}
	if h.keys.refreshes != 0 {
		t.Errorf("the key was re-read %d times: a refusal of the endpoint says nothing about the key", h.keys.refreshes)
	}
}

// record writes a final record whose last update is at.
func record(t *testing.T, store *ledger.Store, clock *time.Time, at time.Time, key string, credits int, failCode string) {
	t.Helper()
	*clock = at
	ctx := context.Background()
	claim, _, err := store.Claim(ctx, ledger.ObjectRef{Bucket: "uploads", Key: key, VersionID: "v1"}, time.Minute)
	if err != nil || !claim.Acquired() {
		t.Fatalf("claim %s: %v", key, err)
	}
	if failCode != "" {
		err = store.Fail(ctx, claim, failCode, "test", false)
	} else {
		err = store.Complete(ctx, claim, ledger.Record{CreditsConsumed: credits})
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestEstimateFromDeclaredBalance: with a declared balance, the estimate is
// that balance minus what the records show consumed since, counted once
// across runs, calls that may have charged counted at the model's cost;
// CreditsLow's CreditsEstimated and the forecast follow it.
func TestEstimateFromDeclaredBalance(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	_, h := backendHarness(t, client, table, func(c *Config) { c.RecordSettle = time.Minute })
	var clock time.Time
	store := ledger.New(client, table, func(o *ledger.Options) { o.Clock = func() time.Time { return clock } })
	hist := NewHistory(codeClient(client), table, "test-pipeline", time.Hour)

	record(t, store, &clock, t0.Add(-time.Hour), "before.jpg", 1, "") // before the declaration
	if err := hist.Declare(context.Background(), Declared{Remaining: 100, At: t0, By: "test"}); err != nil {
		t.Fatal(err)
	}
	record(t, store, &clock, t0.Add(10*time.Minute), "a.jpg", 1, "")
	record(t, store, &clock, t0.Add(20*time.Minute), "b.jpg", 3, "")
	record(t, store, &clock, t0.Add(30*time.Minute), "lost.jpg", 0, ledger.ErrorCodeOutcomeUnknown)
	record(t, store, &clock, t0.Add(40*time.Minute), "bad.jpg", 0, "validation_error")  // never charged
	record(t, store, &clock, t0.Add(59*time.Minute+30*time.Second), "young.jpg", 1, "") // within RecordSettle

	h.now = t0.Add(time.Hour)
	rep, pts := h.run(t)
	if !rep.Healthy {
		t.Fatalf("unhealthy: %v", rep.Reasons)
	}
	pts.want(t, metricnames.CreditsEstimated, 100-1-3-1)
	pts.wantAbsent(t, metricnames.CreditsRemaining)
	c := rep.Credits
	if c == nil || c.Source != SourceEstimate || c.AnchorSource != SourceDeclared || !c.AnchorAt.Equal(t0) ||
		*c.ConsumedSince != 4 || *c.UncertainCalls != 1 {
		t.Fatalf("credits %+v", c)
	}
	wantContains(t, "credit note", rep.CreditNote, "estimated from the balance declared", "4 credits", "1 calls that may have charged")

	// The next run counts only what is new: young.jpg and c.jpg.
	record(t, store, &clock, t0.Add(80*time.Minute), "c.jpg", 1, "")
	h.now = t0.Add(2 * time.Hour)
	rep, pts = h.run(t)
	pts.want(t, metricnames.CreditsEstimated, 100-1-3-1-1-1)
	if *rep.Credits.ConsumedSince != 6 {
		t.Errorf("consumed %d, want 6: each record counted once", *rep.Credits.ConsumedSince)
	}
	// Two estimates an hour apart: 2 credits an hour is 48 a day.
	pts.want(t, metricnames.CreditBurnPerDay, 48)

	// A new declaration (a top-up read in the web application) restarts it.
	if err := hist.Declare(context.Background(), Declared{Remaining: 500, At: t0.Add(2*time.Hour + time.Minute)}); err != nil {
		t.Fatal(err)
	}
	h.now = t0.Add(3 * time.Hour)
	_, pts = h.run(t)
	pts.want(t, metricnames.CreditsEstimated, 500)
}

// TestEstimateFromLastSummaryReading: when the summary stops taking keys,
// the estimate starts from the last balance it showed.
func TestEstimateFromLastSummaryReading(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	sim, h := backendHarness(t, client, table, func(c *Config) { c.RecordSettle = 0 })
	sim.SetKeysOnlyOnPredict(false)
	sim.AddAccount(geosim.DefaultOrg, 700, 0)
	h.now = t0
	_, pts := h.run(t)
	pts.want(t, metricnames.CreditsRemaining, 700)
	pts.want(t, metricnames.CreditSummaryReadable, 1)

	var clock time.Time
	store := ledger.New(client, table, func(o *ledger.Options) { o.Clock = func() time.Time { return clock } })
	record(t, store, &clock, t0.Add(time.Minute), "a.jpg", 3, "")
	sim.SetKeysOnlyOnPredict(true)
	h.now = t0.Add(5 * time.Minute)
	rep, pts := h.run(t)
	pts.want(t, metricnames.CreditsEstimated, 697)
	pts.want(t, metricnames.CreditSummaryReadable, 0)
	if !rep.Healthy || rep.Credits.AnchorSource != SourceSummary {
		t.Errorf("report %+v", rep)
	}
	wantContains(t, "credit note", rep.CreditNote, "the last balance read from the summary")
}

// TestPinnedModelAbsentFromThePublicList: the configured model may be a
// whitelist one the public list cannot show: no ConfiguredModelAvailable,
// rather than a false alarm, and still healthy.
func TestPinnedModelAbsentFromThePublicList(t *testing.T) {
	_, h := backendHarness(t, nil, "", func(c *Config) { c.ModelID = geosim.ModelPropertyWL })
	rep, pts := h.run(t)
	if !rep.Healthy || !rep.Models.ConfiguredUnknown {
		t.Fatalf("report %+v", rep)
	}
	pts.wantAbsent(t, metricnames.ConfiguredModelAvailable)
	wantContains(t, "warnings", fmt.Sprint(rep.Warnings), "not in the public model list")
}

func TestMaybeChargedCodesAreThePredictors(t *testing.T) {
	for _, code := range []string{predictor.CodeOutcomeUnknown, predictor.CodeMalformedResponse} {
		found := false
		for _, c := range maybeChargedCodes {
			found = found || c == code
		}
		if !found {
			t.Errorf("the predictor's maybe-charged code %q is not counted by the estimate", code)
		}
	}
}

// TestModelIDBreakingCloudWatchRules: a model id from the service that
// CloudWatch would refuse as a dimension value goes out as a stand-in, and
// is logged once, instead of silently losing the metric.
func TestModelIDBreakingCloudWatchRules(t *testing.T) {
	sim, url := newSim(t)
	sim.AddModel(geosim.Model{ID: "glöbal\tv9", Type: geosim.TypeGlobal})
	h := newHarness(t, url, testConfig(), nil)
	for range 2 {
		rep, pts := h.run(t)
		if !rep.Healthy {
			t.Fatalf("unhealthy: %v", rep.Reasons)
		}
		var standIn string
		for _, p := range pts {
			if p.Name == metricnames.ModelReady && strings.HasPrefix(p.Dims[metricnames.DimModelID], "gl__bal_v9~") {
				standIn = p.Dims[metricnames.DimModelID]
			}
		}
		if standIn == "" {
			t.Errorf("no ModelReady for the bad id's stand-in: %+v", pts)
		}
	}
	if n := strings.Count(h.logs.String(), "published as a stand-in"); n != 1 {
		t.Errorf("logged %d times in two runs, want once", n)
	}
}
