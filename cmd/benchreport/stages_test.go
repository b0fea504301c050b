package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
)

// TestMain lets the test binary act as the memory stage's launcher, as the
// driver does (measureRSSOf re-executes its own binary).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == rssLauncherArg {
		os.Exit(runRSSLauncher(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// Every stage that runs against the local parts runs here on tiny inputs,
// against one DynamoDB Local (its start is most of the test's time), and
// the report is written from what they measured: the memory stage on one
// typical photo (its hostile photos take minutes to make), the cold start
// once. The gobench stage runs `go test -bench` itself and is not run here.
// Skipped under -short: it starts DynamoDB Local (Java) and builds the
// predictor.
func TestStagesOnTinyInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts DynamoDB Local")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e, err := startEnv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	st := stack{MemoryMB: 512, BatchSize: 5, Timeout: 30 * time.Second, MonitorMinutes: 5}
	quiet := func(string, ...any) {}
	r := &results{Stack: st, Started: time.Now()}

	t.Run("memory and cold start", func(t *testing.T) {
		root, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		goos, goarch := hostPlatform()
		bin, err := buildFunction(ctx, root, t.TempDir(), "predictor", goos, goarch)
		if err != nil {
			t.Fatal(err)
		}
		m, err := measureRSS(ctx, e, st, bin, t.TempDir(), 300<<10, "typical", predictor.UploadMetadataStrip)
		if err != nil {
			t.Fatal(err)
		}
		// The two readings of the peak agree: within 10%, or 4 MiB for a
		// peak this small, since wait4's maxrss can hold a few MB of the
		// launcher's pages (seen 2.4 MB above VmHWM at 18 MB) and is not
		// always above the polled VmHWM either (seen 52 KiB below it).
		lo, hi := min(m.MaxRSS, m.OwnHWM), max(m.MaxRSS, m.OwnHWM)
		if lo < 1<<20 || hi-lo > max(lo/10, 4<<20) || m.Status != "succeeded" {
			t.Errorf("peak RSS readings %d (VmHWM) and %d (wait4), record %s", m.OwnHWM, m.MaxRSS, m.Status)
		}
		r.Memory = []rssResult{*m}
		if r.Cold, err = measureColdStarts(ctx, e, st, bin, 1); err != nil {
			t.Fatal(err)
		}
		if c := r.Cold; c.Ready.N != 1 || c.Ready.Median <= 0 || c.FirstResponse.Median <= c.Ready.Median {
			t.Errorf("cold start: ready %v, first answer %v", c.Ready, c.FirstResponse)
		}
	})

	t.Run("overhead", func(t *testing.T) {
		if r.Overhead, err = measureOverhead(ctx, e, st, overheadConfig{Images: 3, Warmup: 1, CompareReuse: true}, quiet); err != nil {
			t.Fatal(err)
		}
		o := r.Overhead
		if o.Charged != 3 || o.HandlerWall.N != 3 || o.FloorWall.N != 3 || o.ReuseOffWall.N != 3 {
			t.Errorf("charged %d, samples %d/%d/%d; want 3 of each", o.Charged, o.HandlerWall.N, o.FloorWall.N, o.ReuseOffWall.N)
		}
		// The content identity's writes are counted apart, and only on the
		// handler that has it.
		if o.Usage.Items[contentPrefix].Requests() < 3 || o.ReuseOffUsage.Items[contentPrefix].Requests() != 0 {
			t.Errorf("content ledger requests: content %+v, off %+v", o.Usage.Items, o.ReuseOffUsage.Items)
		}
		// A second run pays for its own photos: the first run's answers
		// are not reused, and both sides wait for the service.
		const l = 30 * time.Millisecond
		if r.OverheadAtLatency, err = measureOverhead(ctx, e, st, overheadConfig{Images: 2, Latency: l}, quiet); err != nil {
			t.Fatal(err)
		}
		if w := r.OverheadAtLatency; w.Charged != 2 || w.FloorWall.Min < l || w.HandlerWall.Min < l {
			t.Errorf("at %v: charged %d, floor min %v, handler min %v", l, w.Charged, w.FloorWall.Min, w.HandlerWall.Min)
		}
	})

	base := throughputConfig{RatePerMinute: 600, SimBurst: 2, Latency: 10 * time.Millisecond, Instances: 2,
		BatchSize: st.BatchSize, Duration: 2 * time.Second, RetryDelay: 200 * time.Millisecond, Pacing: predictor.PacingShared}
	t.Run("throughput", func(t *testing.T) {
		if r.Throughput, err = measureThroughput(ctx, e, st, base, quiet); err != nil {
			t.Fatal(err)
		}
		real := base
		real.SlidingLog, real.UploadRate = true, pacer.Rate(base.RatePerMinute)
		if r.RealRate, err = measureThroughput(ctx, e, st, real, quiet); err != nil {
			t.Fatal(err)
		}
		for _, x := range []*throughputResult{r.Throughput, r.RealRate} {
			if x.Uploads < 15 || x.Succeeded != x.Uploads || x.Lost != 0 || x.Charged != x.Uploads {
				t.Errorf("uploads %d, succeeded %d, lost %d, charged %d", x.Uploads, x.Succeeded, x.Lost, x.Charged)
			}
		}
	})

	t.Run("reuse", func(t *testing.T) {
		c := base
		c.Copies = 0.3
		if r.Reuse, err = measureThroughput(ctx, e, st, c, quiet); err != nil {
			t.Fatal(err)
		}
		x := r.Reuse
		if x.Distinct >= x.Uploads || x.Charged != x.Distinct || x.Reused != x.Uploads-x.Distinct || x.Lost != 0 {
			t.Errorf("uploads %d, distinct %d, charged %d, reused %d, lost %d", x.Uploads, x.Distinct, x.Charged, x.Reused, x.Lost)
		}
		if x.SameInstantPairs == 0 || x.Usage.Items[contentPrefix].Requests() == 0 {
			t.Errorf("%d copies at the same instant, content ledger %+v", x.SameInstantPairs, x.Usage.Items)
		}
	})

	t.Run("reprocess", func(t *testing.T) {
		c := reprocessConfig{Photos: 4, Cap: 5, Rig: base}
		x, err := measureReprocess(ctx, e, st, c, quiet)
		if r.Reprocess = x; err != nil {
			t.Fatal(err)
		}
		// The run alone: its own photos paid once each, its messages'
		// records read and written, none of the uploads' own S3
		// notifications counted.
		obj := x.T.Usage.Items["OBJ#"]
		if n := x.T.Usage.Count(opTransactWrite); n < 4 {
			t.Errorf("%d credit reservations for 4 photos", n)
		}
		// Fed by the job feeder in batches of up to ten; each
		// reservation's transaction counted with its units (2 under 1 KB).
		if run := x.T.Usage.Items[ledger.RunPartition]; run.TableUnits < 2*4 {
			t.Errorf("RUN usage %+v: want the 4 reservations' units counted", run)
		}
		if x.Selected != 4 || x.Charged != 4 || x.Spent != 4 || x.DistinctPaid != 4 || x.SendBatches < 1 || x.SendBatches > 4 ||
			obj.Writes < 4 || x.T.Usage.Count("S3.GetObject") < 4 || x.T.Invocations == 0 || x.T.BilledSeconds <= 0 {
			t.Errorf("selected %d, charged %d, spent %d, distinct paid %d, batches %d, OBJ# %+v, GETs %d, invocations %d, billed %v",
				x.Selected, x.Charged, x.Spent, x.DistinctPaid, x.SendBatches, obj, x.T.Usage.Count("S3.GetObject"), x.T.Invocations, x.T.BilledSeconds)
		}
		// A cap below the photos is refused before anything is uploaded.
		if _, err := measureReprocess(ctx, e, st, reprocessConfig{Photos: 4, Cap: 3, Rig: base}, quiet); err == nil {
			t.Error("a cap of 3 for 4 photos was accepted")
		}
	})

	t.Run("jobcost", func(t *testing.T) {
		// After throughput: the enrichment is timed over its records.
		if r.JobCost, err = measureJobCost(ctx, e, 250, quiet); err != nil {
			t.Fatal(err)
		}
		j := r.JobCost
		if j.Job.Objects != 250 || j.Job.FeederRuns < 2 || j.Job.ListRequests != 1 || j.Job.SendRequests < 25 ||
			j.Job.Feeder.WriteUnits <= 0 || j.Job.Ends.WriteUnits < 250 || j.EnrichRecords == 0 || j.EnrichOne <= 0 || j.EnrichTen < j.EnrichOne {
			t.Errorf("jobcost: %+v", j)
		}
		// The enrichment is priced in the cost section's lines, once per
		// result event at one record a batch.
		u := r.perImageUsage(r.RealRate)
		if u.EnrichInvocations <= 0 || u.EnrichInvocations > 1 || u.EnrichBilledSeconds < 0.001*u.EnrichInvocations || u.EnrichMemoryMB != 128 {
			t.Errorf("enrichment usage per image: %+v", u)
		}
	})

	t.Run("pacing", func(t *testing.T) {
		po := pacingOptions{Rate: 600, Instances: []int{2}, Duration: time.Second,
			SlidingRate: 600, SlidingInstances: []int{1}, SlidingDuration: time.Second}
		if r.Pacing, err = measurePacing(ctx, e, st, base, po, quiet); err != nil {
			t.Fatal(err)
		}
		kinds := map[string]int{}
		for _, p := range r.Pacing {
			kinds[p.Kind]++
			if p.Result.Lost != 0 {
				t.Errorf("%s run lost %d", p.Kind, p.Result.Lost)
			}
		}
		if kinds["sliding"] != 1 || kinds["compare"] != 4 || kinds["misconfigured"] != 2 {
			t.Errorf("runs by kind = %v", kinds)
		}
	})

	md := string(r.markdown())
	for _, want := range []string{"## Memory", "## Cold start", "## Overhead ratio", "Measured behind the service's latency", "## Throughput against the rate limit",
		"### At the service's real rate", "## Paying once per photo", "## Pacing", "## Cost per 1,000 images",
		"Overhead ratio behind a 30ms service, measured", "Upload to record at the real rate with no backlog", "Credits with 30% exact copies",
		"## Cost of a reprocess run", "Cost of a reprocess run per 1,000 photos",
		"## Cost of a backfill job", "AWS cost of a 1,000,000-object backfill job", "Lambda requests (results pipe enrichment)"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
