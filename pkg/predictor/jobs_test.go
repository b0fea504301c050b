package predictor

import (
	"context"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/shared/jobmsg"
)

// backfillMessage is a backfill job's message for u.
func (e *testEnv) backfillMessage(id, job, pos string, u upload) sqsMessage {
	e.t.Helper()
	body, err := jobmsg.Body(jobmsg.Object{Job: job, Kind: jobmsg.KindBackfill, Pos: pos, Bucket: u.Bucket, Key: u.Key,
		VersionID: u.VersionID, ETag: u.ETag, Size: u.Size})
	if err != nil {
		e.t.Fatal(err)
	}
	return sqsMessage{id: id, body: body}
}

func (e *testEnv) newBackfillJob() string {
	e.t.Helper()
	j, err := e.jobs.Create(context.Background(), jobs.Spec{Kind: jobs.KindBackfill, Bucket: e.bucket})
	if err != nil {
		e.t.Fatal(err)
	}
	return j.ID
}

func (e *testEnv) getJob(id string) jobs.Job {
	e.t.Helper()
	j, err := e.jobs.Get(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

// TestBackfillJobMessageIsAnUpload: a backfill's message records the
// upload's own record (run 0), once, and its end and credits are added to
// the job; a redelivery is counted skipped and charges nothing.
func TestBackfillJobMessageIsAnUpload(t *testing.T) {
	e := newTestEnv(t, nil)
	u := e.put("archive/harbour.jpg", harbourJPEG())
	job := e.newBackfillJob()
	if failed := e.invokeSQS(sqsBatch(e.backfillMessage("m1", job, "0/0", u))); len(failed) != 0 {
		t.Fatalf("retried: %v", failed)
	}
	rec := e.record(u)
	if rec == nil || rec.Status != ledger.StatusSucceeded || rec.Run != "" {
		t.Fatalf("record %+v, want run 0's succeeded", rec)
	}
	got := e.getJob(job)
	if got.Done != 1 || got.CreditsSpent != int64(rec.CreditsConsumed) || rec.CreditsConsumed == 0 || !got.LastProgress.After(got.Created) {
		t.Errorf("job after one object: done %d, credits %d (record %d), last progress %v", got.Done, got.CreditsSpent,
			rec.CreditsConsumed, got.LastProgress)
	}
	if failed := e.invokeSQS(sqsBatch(e.backfillMessage("m2", job, "0/0", u))); len(failed) != 0 {
		t.Fatalf("redelivery retried: %v", failed)
	}
	if n := len(e.predictCalls()); n != 1 {
		t.Errorf("%d calls, want 1 (the redelivery is a duplicate)", n)
	}
	if got := e.getJob(job); got.Done != 1 || got.Skipped != 1 || got.CreditsSpent != int64(rec.CreditsConsumed) {
		t.Errorf("after the redelivery: %+v", got)
	}
}

// TestPausedJobMessageIsDroppedForTheResume: a paused job's message is
// acknowledged with nothing claimed, called or charged, and its position
// is kept for the feeder to send again.
func TestPausedJobMessageIsDroppedForTheResume(t *testing.T) {
	e := newTestEnv(t, nil)
	u := e.put("archive/harbour.jpg", harbourJPEG())
	job := e.newBackfillJob()
	if err := e.jobs.Pause(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if failed := e.invokeSQS(sqsBatch(e.backfillMessage("m1", job, "3/7", u))); len(failed) != 0 {
		t.Fatalf("retried: %v", failed)
	}
	if rec := e.record(u); rec != nil || len(e.predictCalls()) != 0 {
		t.Errorf("a paused job's object was processed: record %+v, %d calls", rec, len(e.predictCalls()))
	}
	if got := e.getJob(job); got.Dropped != 1 || got.Ended() != 0 {
		t.Errorf("job %+v, want one dropped, none ended", got)
	}
}

// TestCancelledJobMessageIsDropped: a cancelled (or deleted) job's message
// is acknowledged with nothing claimed, called or charged.
func TestCancelledJobMessageIsDropped(t *testing.T) {
	e := newTestEnv(t, nil)
	u := e.put("archive/harbour.jpg", harbourJPEG())
	job := e.newBackfillJob()
	if err := e.jobs.Cancel(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	msgs := []sqsMessage{e.backfillMessage("m1", job, "0/0", u), e.backfillMessage("m2", "j-20261202-gonexx", "0/1", u)}
	if failed := e.invokeSQS(sqsBatch(msgs...)); len(failed) != 0 {
		t.Fatalf("retried: %v", failed)
	}
	if rec := e.record(u); rec != nil || len(e.predictCalls()) != 0 {
		t.Errorf("a cancelled job's object was processed: record %+v, %d calls", rec, len(e.predictCalls()))
	}
	if got := e.getJob(job); got.Dropped != 0 || got.Ended() != 0 {
		t.Errorf("job %+v", got)
	}
}
