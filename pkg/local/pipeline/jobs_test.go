package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// TestRunBackfillsAndReprocessesAsJobs: with Backfill the files are put
// unannounced and a backfill job brings every one to its record, fed by
// the job feeder on its schedule; Reprocess then runs a reprocess job over
// the succeeded records. Both jobs end done, with every object they
// listed ended, and the run returns once they are.
func TestRunBackfillsAndReprocessesAsJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the job feeder on its real 1-minute schedule: two minutes or more")
	}
	dir, want := imagesDir(t)
	ddb := awspartstest.SharedDynamoDB(t)
	table := "backfill-jobs-" + fmt.Sprint(time.Now().UnixNano())
	var progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	sum, err := Run(ctx, Options{
		ImagesDir: dir, KeyPrefix: "archive/", Getenv: noServiceEnv, Progress: &progress, DynamoDB: ddb,
		Table:     table,
		Backfill:  true,
		Reprocess: &Reprocess{Run: "again", Price: 1, Cap: 100},
	})
	if err != nil {
		t.Fatalf("Run: %v\nprogress:\n%s", err, progress.String())
	}
	checkResults(t, sum, want)
	if len(sum.Jobs) != 2 {
		t.Fatalf("%d jobs, want the backfill and the reprocess:\n%s", len(sum.Jobs), progress.String())
	}
	backfill, rerun := sum.Jobs[0], sum.Jobs[1]
	if backfill.Kind != jobs.KindBackfill || backfill.State != jobs.StateDone || backfill.Listed != int64(len(want)) || backfill.Ended() != backfill.Listed {
		t.Errorf("backfill job %+v: want done, every file listed and ended", backfill)
	}
	if !strings.Contains(progress.String(), "put       archive/") || strings.Contains(progress.String(), "uploaded  archive/") {
		t.Errorf("the files were announced, not put for the backfill:\n%s", progress.String())
	}

	// The reprocess job covers the succeeded files, each ended in the run,
	// and pays once per distinct photo (a copy's answer is reused).
	wantRun := succeededFiles(want)
	if rerun.Kind != jobs.KindReprocess || rerun.State != jobs.StateDone || rerun.Listed != int64(wantRun) || rerun.Ended() != rerun.Listed ||
		rerun.CreditsSpent != int64(succeeded(want)) {
		t.Errorf("reprocess job %+v: want done over the %d succeeded files, %d credits", rerun, wantRun, succeeded(want))
	}
	recs, err := ledger.New(ddb.Client(), table).Query(context.Background(), ledger.QueryInput{Run: "again", Since: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	final := 0
	for _, r := range recs {
		if r.Final() {
			final++
		}
	}
	if final != wantRun {
		t.Errorf("%d final records in run again, want %d", final, wantRun)
	}
}

// TestBackfillJobInRealTime runs a backfill job in real time through
// pipeline.Run's in-process queue, the path `make run` takes, at
// ratePerMinute=120 and jobWindowMinutes=1: the job is listed within
// seconds of its creation, the queue never holds more than about a minute
// of calls (the window at the job's rate, plus one batch), every photo is
// recorded and the job ends done. It is small (JOB_PHOTOS raises it): the
// issue's 300-photo measurement runs through the CLI against the served
// stack (cmd/geolocate's TestBackfillJobAgainstTheServedLocalStack).
func TestBackfillJobInRealTime(t *testing.T) {
	if testing.Short() {
		t.Skip("photos at 120 a minute in real time")
	}
	n := 40
	if v := os.Getenv("JOB_PHOTOS"); v != "" {
		fmt.Sscan(v, &n)
	}
	dir := t.TempDir()
	for i := range n {
		writeFile(t, dir, fmt.Sprintf("p%04d.jpg", i), exiftest.JPEG(nil, exiftest.Gradient(16+i%40, 12+i/40), 0))
	}
	env := map[string]string{envvars.RatePerMinute: "120", envvars.JobWindowMinutes: "1"}
	ddb := awspartstest.SharedDynamoDB(t)
	table := "realtime-jobs-" + fmt.Sprint(time.Now().UnixNano())
	var progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	// Watch the job's listing from the table, as geolocate jobs would.
	listed := make(chan time.Duration, 1)
	begin := time.Now()
	go func() {
		store := jobs.New(ddb.Client(), table)
		for ctx.Err() == nil {
			if list, err := store.List(ctx); err == nil && len(list) == 1 && list[0].ListingDone {
				listed <- time.Since(list[0].Created)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	sum, err := Run(ctx, Options{ImagesDir: dir, Getenv: func(k string) string { return env[k] }, Progress: &progress,
		DynamoDB: ddb, Table: table, Backfill: true})
	if err != nil {
		t.Fatalf("Run: %v\nprogress:\n%s", err, progress.String())
	}
	elapsed := time.Since(begin)
	select {
	case d := <-listed:
		t.Logf("listing of %d objects done %v after the job's creation", n, d.Round(time.Millisecond))
		if d > 10*time.Second {
			t.Errorf("listing took %v, want under 10 s", d)
		}
	default:
		t.Error("the job's listing was never seen done")
	}
	if len(sum.Jobs) != 1 || sum.Jobs[0].State != jobs.StateDone || sum.Jobs[0].Listed != int64(n) || sum.Jobs[0].Ended() != int64(n) {
		t.Fatalf("jobs %+v: want one, done, %d listed and ended", sum.Jobs, n)
	}
	recorded := 0
	for _, r := range sum.Results {
		if r.Record != nil && r.Record.Status == ledger.StatusSucceeded {
			recorded++
		}
	}
	job := sum.Jobs[0]
	// About a minute of calls: the window (1 minute at the job's rate)
	// plus one SendMessageBatch of the next feeder run.
	bound := int(job.FeedRate) + 10
	t.Logf("%d photos at %.1f calls a minute (window 1 min): %d recorded, queue peak %d (bound %d), %d dead letters, run %v",
		n, job.FeedRate, recorded, sum.QueuePeak, bound, len(sum.DeadLetters), elapsed.Round(time.Second))
	if recorded != n || len(sum.DeadLetters) != 0 {
		t.Errorf("%d of %d photos recorded, %d dead letters", recorded, n, len(sum.DeadLetters))
	}
	if sum.QueuePeak > bound || sum.QueuePeak == 0 {
		t.Errorf("the queue held up to %d messages, want at most about a minute of calls (%d)", sum.QueuePeak, bound)
	}
	if min := time.Duration(float64(n) / job.FeedRate * float64(time.Minute)); job.FeedRate <= 0 || elapsed < min*9/10 {
		t.Errorf("the run took %v: faster than the job's rate allows (%v)", elapsed, min)
	}
}
