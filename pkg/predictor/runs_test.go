package predictor

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/shared/jobmsg"
)

// runMessage is a reprocess job's message for u in run, asking model at
// price credits; the job (one per run) is made on first use.
func (e *testEnv) runMessage(id, run, model string, price int, u upload) sqsMessage {
	e.t.Helper()
	body, err := jobmsg.Body(jobmsg.Object{Job: e.runJob(run), Kind: jobmsg.KindReprocess, Pos: "0/0", Run: run, ModelID: model,
		CreditsPerCall: price, Bucket: u.Bucket, Key: u.Key, VersionID: u.VersionID, ETag: u.ETag, Size: u.Size})
	if err != nil {
		e.t.Fatal(err)
	}
	return sqsMessage{id: id, body: body}
}

// runJob is the id of run's reprocess job in the test's table.
func (e *testEnv) runJob(run string) string {
	e.t.Helper()
	if id, ok := e.runJobs[run]; ok {
		return id
	}
	j, err := e.jobs.Create(context.Background(), jobs.Spec{Kind: jobs.KindReprocess, Run: run, Selection: "status=succeeded"})
	if err != nil {
		e.t.Fatal(err)
	}
	e.runJobs[run] = j.ID
	return j.ID
}

func (e *testEnv) runRecord(u upload, run string) *ledger.Record {
	e.t.Helper()
	r := refOf(u)
	r.Run = run
	rec, err := e.store.Lookup(context.Background(), r)
	if err != nil {
		e.t.Fatal(err)
	}
	if rec == nil {
		e.t.Fatalf("no record of %s", r)
	}
	return rec
}

func (e *testEnv) startRun(name, model string, capCredits int) {
	e.t.Helper()
	if _, created, err := e.store.StartRun(context.Background(), ledger.Run{Name: name, ModelID: model, Cap: capCredits, Price: 1}); err != nil || !created {
		e.t.Fatalf("StartRun(%s) = %t, %v", name, created, err)
	}
}

// TestRunPaysOncePerObjectAndRun: a run calls again for objects run 0
// already paid for, with the run's model, once per object whatever is
// redelivered; a copy within the run reuses the run's own answer (never
// run 0's, which the same bytes already have); each run record keeps the
// result it replaced; the run's spending is what the calls charged.
func TestRunPaysOncePerObjectAndRun(t *testing.T) {
	e := newTestEnv(t, nil)
	img := harbourJPEG()
	a := e.put("2024/harbour.jpg", img)
	acopy := e.put("backup/harbour.jpg", img)
	c := e.put("2024/other.jpg", testJPEG(t, 7))
	for _, u := range []upload{a, acopy, c} {
		if failed := e.invokeSQS(sqsBatch(uploadMessage("up-"+u.Key, u))); len(failed) != 0 {
			t.Fatalf("upload %s retried: %v", u.Key, failed)
		}
	}
	if n := len(e.predictCalls()); n != 2 {
		t.Fatalf("run 0 made %d calls, want 2 (the copy reused)", n)
	}

	const run, model = "newer", geosim.ModelGlobalDefault
	e.startRun(run, model, 100)
	for round := range 2 { // the second round is a redelivery of every message
		for _, u := range []upload{a, acopy, c} {
			if failed := e.invokeSQS(sqsBatch(e.runMessage("run-"+u.Key, run, model, 1, u))); len(failed) != 0 {
				t.Fatalf("round %d: %s retried: %v", round, u.Key, failed)
			}
		}
	}
	calls := e.predictCalls()
	if len(calls) != 4 {
		t.Fatalf("%d calls in all, want 4: 2 for run 0 and 2 for the run (its copy reused within it)", len(calls))
	}
	for _, call := range calls[2:] {
		if call.ModelRequested != model {
			t.Errorf("run call asked model %q, want %q", call.ModelRequested, model)
		}
	}
	ra, rcopy, rc := e.runRecord(a, run), e.runRecord(acopy, run), e.runRecord(c, run)
	zero := e.record(a)
	if ra.Status != ledger.StatusSucceeded || ra.CreditsConsumed == 0 || ra.ReusedFrom != "" || ra.Run != run {
		t.Errorf("run record of a: %s credits %d reused_from %q run %q; want succeeded, paid, its own answer", ra.Status, ra.CreditsConsumed, ra.ReusedFrom, ra.Run)
	}
	if ra.Previous == nil || ra.Previous.Run != "" || ra.Previous.Place != zero.Place || len(ra.History) != 1 {
		t.Errorf("run record of a: previous %+v history %d; want run 0's result (%s)", ra.Previous, len(ra.History), zero.Place)
	}
	aRun := refOf(a)
	aRun.Run = run
	if rcopy.CreditsConsumed != 0 || rcopy.ReusedFrom != aRun.String() || !strings.Contains(rcopy.ReusedFrom, "run "+run) {
		t.Errorf("run record of the copy: credits %d reused_from %q; want 0 and %q (the run's own payer)", rcopy.CreditsConsumed, rcopy.ReusedFrom, aRun.String())
	}
	if rcopy.Previous == nil || rcopy.Previous.Run != "" {
		t.Errorf("run record of the copy: previous %+v, want its own run 0 result", rcopy.Previous)
	}
	if rc.Status != ledger.StatusSucceeded || rc.CreditsConsumed == 0 {
		t.Errorf("run record of c: %s credits %d", rc.Status, rc.CreditsConsumed)
	}
	if zero.Run != "" || zero.Previous != nil || e.record(acopy).ReusedFrom != refOf(a).String() {
		t.Errorf("run 0 records changed by the run")
	}
	got, err := e.store.GetRun(context.Background(), run)
	if err != nil || got.Spent != ra.CreditsConsumed+rc.CreditsConsumed || got.Remaining != 100-got.Spent {
		t.Errorf("run after its calls = %+v, %v; want spent %d", got, err, ra.CreditsConsumed+rc.CreditsConsumed)
	}
	// A third run replacing this one's result keeps both earlier ones.
	e.startRun("third", model, 10)
	body, err := jobmsg.Body(jobmsg.Object{Job: e.runJob("third"), Kind: jobmsg.KindReprocess, Run: "third", ModelID: model, CreditsPerCall: 1, Replaces: run,
		Bucket: c.Bucket, Key: c.Key, VersionID: c.VersionID, ETag: c.ETag, Size: c.Size})
	if err != nil {
		t.Fatal(err)
	}
	if failed := e.invokeSQS(sqsBatch(sqsMessage{id: "third", body: body})); len(failed) != 0 {
		t.Fatalf("third run retried: %v", failed)
	}
	third := e.runRecord(c, "third")
	if third.Previous == nil || third.Previous.Run != run || len(third.History) != 2 || third.History[0].Run != "" || third.History[1].Run != run {
		t.Errorf("third run: previous %+v, history %+v; want run %s's, after run 0's", third.Previous, third.History, run)
	}
}

// TestRunCapStopsCalls: a run with a cap of 2 credits at 1 a call calls
// for two objects, however many it holds; the others wait with the cap as
// their cause and their messages are not returned (only the operator can
// raise the cap).
func TestRunCapStopsCalls(t *testing.T) {
	e := newTestEnv(t, nil)
	var ups []upload
	for i := range 4 {
		ups = append(ups, e.put("p/"+string(rune('a'+i))+".jpg", testJPEG(t, 20+i)))
	}
	const run = "capped"
	e.startRun(run, geosim.ModelGlobalDefault, 2)
	for _, u := range ups {
		if failed := e.invokeSQS(sqsBatch(e.runMessage("m-"+u.Key, run, geosim.ModelGlobalDefault, 1, u))); len(failed) != 0 {
			t.Fatalf("%s retried: %v", u.Key, failed)
		}
	}
	if n := len(e.predictCalls()); n != 2 {
		t.Fatalf("%d calls under a cap of 2 credits, want 2", n)
	}
	waiting := 0
	for _, u := range ups {
		rec := e.runRecord(u, run)
		if rec.Status == ledger.StatusWaiting && rec.ErrorCode == ReasonRunCapReached {
			waiting++
		}
	}
	if waiting != 2 {
		t.Errorf("%d objects wait for the cap, want 2", waiting)
	}
	got, _ := e.store.GetRun(context.Background(), run)
	if got.Spent != 2 || got.Remaining != 0 {
		t.Errorf("run spent %d remaining %d, want 2 and 0", got.Spent, got.Remaining)
	}
}

// TestRunVanishedAttemptIsOutcomeUnknown: a run's attempt that claimed and
// vanished is finalised as outcome_unknown for that run and never called
// again, as run 0's is.
func TestRunVanishedAttemptIsOutcomeUnknown(t *testing.T) {
	e := newTestEnv(t, nil)
	u := e.put("gone.jpg", testJPEG(t, 3))
	const run = "vanish"
	e.startRun(run, geosim.ModelGlobalDefault, 10)
	r := refOf(u)
	r.Run = run
	if _, got, err := e.store.Claim(context.Background(), r, time.Second); err != nil || got != ledger.ClaimAcquired {
		t.Fatalf("claim = %s, %v", got, err)
	}
	time.Sleep(2 * time.Second) // the lease runs out: stored in whole seconds
	if failed := e.invokeSQS(sqsBatch(e.runMessage("m", run, geosim.ModelGlobalDefault, 1, u))); len(failed) != 0 {
		t.Fatalf("retried: %v", failed)
	}
	if n := len(e.predictCalls()); n != 0 {
		t.Errorf("%d calls after a vanished attempt, want 0", n)
	}
	if rec := e.runRecord(u, run); rec.Status != ledger.StatusFailed || rec.ErrorCode != ledger.ErrorCodeOutcomeUnknown {
		t.Errorf("run record = %s/%s, want failed/outcome_unknown", rec.Status, rec.ErrorCode)
	}
	if rec := e.record(u); rec != nil {
		t.Errorf("run 0 record written by the run: %+v", rec)
	}
}

// TestJobSampleEventDecodes: events/sqs-job.json is a reprocess job's
// message the predictor reads.
func TestJobSampleEventDecodes(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "events", "sqs-job.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	n, err := decodeNotification([]byte(ev.Records[0].Body))
	if err != nil || len(n.Uploads) != 1 {
		t.Fatalf("decode = %+v, %v", n, err)
	}
	u := n.Uploads[0]
	if u.Job != "j-20261202-k3v7qa" || u.JobPos != "0/0" || u.Run != "global-v0.3" || u.Model != "global_v0.3" || u.Price != 1 ||
		u.Key != "harbour at dusk.jpg" || !u.SizeKnown {
		t.Errorf("decoded %+v", u)
	}
	if _, err := decodeNotification([]byte(`{"geolocate_job": {"job": "j", "kind": "reprocess", "run": "a#b", "bucket": "b", "key": "k"}}`)); err == nil {
		t.Error("a run name with '#' decoded")
	}
	if n, err := decodeNotification([]byte(`{"geolocate_reprocess": {"run": "r", "bucket": "b", "key": "k"}}`)); err != nil || len(n.Uploads) != 0 {
		t.Errorf("the old reprocess message decoded as work: %+v, %v (jobs replace it)", n, err)
	}
}
