package jobs_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
	"github.com/geolocate-aws/geolocate/pkg/shared/jobmsg"
)

// queue records what a feeder sends; refuse names entries (by position)
// it refuses once each, as SQS reports a partial batch failure.
type queue struct {
	mu     sync.Mutex
	sent   []sent
	refuse map[string]bool
}

type sent struct {
	msg   jobmsg.Object
	delay int32
}

func (q *queue) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(in.Entries) > jobs.BatchMax {
		return nil, fmt.Errorf("%d entries in one batch", len(in.Entries))
	}
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		o, ok, err := jobmsg.Parse([]byte(aws.ToString(e.MessageBody)))
		if !ok || err != nil {
			return nil, fmt.Errorf("body %s: %v", aws.ToString(e.MessageBody), err)
		}
		if q.refuse[o.Pos] {
			delete(q.refuse, o.Pos)
			out.Failed = append(out.Failed, sqstypes.BatchResultErrorEntry{Id: e.Id, Code: aws.String("InternalError")})
			continue
		}
		q.sent = append(q.sent, sent{msg: o, delay: e.DelaySeconds})
		out.Successful = append(out.Successful, sqstypes.SendMessageBatchResultEntry{Id: e.Id})
	}
	return out, nil
}

// take returns and forgets what was sent.
func (q *queue) take() []sent {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := q.sent
	q.sent = nil
	return s
}

type rig struct {
	t      *testing.T
	store  *jobs.Store
	ledger *ledger.Store
	clk    *simclock.Clock
	s3     *s3.Client
	bucket string
	q      *queue
	opts   []func(*jobs.FeederOptions)
}

func newRig(t *testing.T, objects int, optFns ...func(*jobs.FeederOptions)) *rig {
	t.Helper()
	client, table := awspartstest.DynamoDB(t)
	s3c, bucket := awspartstest.S3(t)
	clk := simclock.New(start)
	for i := range objects {
		if _, err := s3c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(fmt.Sprintf("p/%04d.jpg", i)),
			Body: strings.NewReader("jpeg")}); err != nil {
			t.Fatal(err)
		}
	}
	return &rig{t: t, store: jobs.New(client, table, func(o *jobs.Options) { o.Clock = clk.Now }),
		ledger: ledger.New(client, table, func(o *ledger.Options) { o.Clock = clk.Now }),
		clk:    clk, s3: s3c, bucket: bucket, q: &queue{refuse: map[string]bool{}}, opts: optFns}
}

func (r *rig) feeder() *jobs.Feeder {
	opts := append([]func(*jobs.FeederOptions){func(o *jobs.FeederOptions) {
		o.Now, o.RatePerMinute, o.WindowMinutes = r.clk.Now, 30, 2
	}}, r.opts...)
	return jobs.NewFeeder(r.store, r.s3, r.q, "https://sqs.test/uploads", opts...)
}

func (r *rig) run() jobs.Report {
	r.t.Helper()
	rep, err := r.feeder().Run(context.Background())
	if err != nil || len(rep.Errors) > 0 {
		r.t.Fatalf("feeder run: %v %v", err, rep.Errors)
	}
	return rep
}

func (r *rig) job(id string) jobs.Job {
	r.t.Helper()
	j, err := r.store.Get(context.Background(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	return j
}

// end counts every message taken as ended (done), as the predictor would.
func (r *rig) end(msgs []sent) {
	r.t.Helper()
	for _, m := range msgs {
		if err := r.store.AddEnd(context.Background(), m.msg.Job, jobs.OutcomeDone, 1, r.clk.Now()); err != nil {
			r.t.Fatal(err)
		}
	}
}

func TestBackfillFeedsWithinTheWindowAndFinishes(t *testing.T) {
	r := newRig(t, 45, func(o *jobs.FeederOptions) { o.RatePerMinute, o.PageSize, o.ListPages = 0, 10, 2 })
	ctx := context.Background()
	// At 15 a minute a job feeds 10.3 a minute; the window is 2 minutes
	// of that, 21 in flight.
	j, err := r.store.Create(ctx, jobs.Spec{Kind: jobs.KindBackfill, Bucket: r.bucket, Prefix: "p/", RatePerMinute: 15})
	if err != nil {
		t.Fatal(err)
	}
	// Run 1: two pages listed (19 or 20 objects: the in-memory S3 repeats
	// a page's last key at the start of the next), a minute's worth (10)
	// fed, spread over the minute.
	rep := r.run()
	got := r.job(j.ID)
	if rep.Listed < 19 || rep.Listed > 20 || got.Listed != rep.Listed || got.ListingDone || got.Sent != 10 {
		t.Fatalf("after run 1: report %+v, job listed %d sent %d done %v", rep, got.Listed, got.Sent, got.ListingDone)
	}
	first := r.q.take()
	for i, m := range first {
		if want := int32(i * 60 / 10); m.delay != want {
			t.Errorf("message %d delayed %d s, want %d (spread over the minute)", i, m.delay, want)
		}
		if m.msg.Kind != jobmsg.KindBackfill || m.msg.Bucket != r.bucket || m.msg.VersionID == "" || m.msg.Size != 4 {
			t.Errorf("message %+v", m.msg)
		}
	}
	// Run 2, a minute later, nothing ended: 10 more.
	r.clk.Advance(time.Minute)
	r.run()
	second := r.q.take()
	// Run 3: 20 in flight, the window has room for one.
	r.clk.Advance(time.Minute)
	r.run()
	third := r.q.take()
	if window := int(math.Ceil(2 * jobs.Rate(15))); len(first) != 10 || len(second) != 10 || len(third) != window-20 {
		t.Fatalf("runs fed %d, %d and %d, want 10, 10 and %d (a window of %d)", len(first), len(second), len(third), window-20, window)
	}
	if got := r.job(j.ID); got.FeedRate != jobs.Rate(15) || got.ETA(r.clk.Now()).IsZero() {
		t.Errorf("feed rate %v, want %v; ETA %v", got.FeedRate, jobs.Rate(15), got.ETA(r.clk.Now()))
	}
	all := append(append(first, second...), third...)
	r.end(all)
	for range 10 {
		r.clk.Advance(time.Minute)
		r.run()
		batch := r.q.take()
		all = append(all, batch...)
		r.end(batch)
	}
	got = r.job(j.ID)
	if got.State != jobs.StateDone || got.Listed != 45 || got.Sent != 45 || got.Done != 45 || got.Remaining() != 0 {
		t.Fatalf("job at the end: %+v", got)
	}
	seen := map[string]bool{}
	for _, m := range all {
		if seen[m.msg.Key] {
			t.Errorf("%s sent twice", m.msg.Key)
		}
		seen[m.msg.Key] = true
	}
	if len(seen) != 45 {
		t.Errorf("%d distinct objects sent, want 45", len(seen))
	}
	if rep := r.run(); rep.Jobs != 0 {
		t.Errorf("a done job is still active: %+v", rep)
	}
}

func TestBackfillSkipsObjectsAlreadyDone(t *testing.T) {
	r := newRig(t, 3)
	ctx := context.Background()
	// p/0001.jpg has a final record (its upload was processed).
	vs, err := r.s3.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: &r.bucket, Prefix: aws.String("p/0001")})
	if err != nil || len(vs.Versions) != 1 {
		t.Fatal(err)
	}
	v := vs.Versions[0]
	ref := ledger.ObjectRef{Bucket: r.bucket, Key: *v.Key, VersionID: *v.VersionId, ETag: strings.Trim(*v.ETag, `"`)}
	claim, _, err := r.ledger.Claim(ctx, ref, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.ledger.Complete(ctx, claim, ledger.Record{}); err != nil {
		t.Fatal(err)
	}
	j, err := r.store.Create(ctx, jobs.Spec{Kind: jobs.KindBackfill, Bucket: r.bucket, RatePerMinute: 30})
	if err != nil {
		t.Fatal(err)
	}
	r.run()
	msgs := r.q.take()
	got := r.job(j.ID)
	if len(msgs) != 2 || got.Listed != 3 || got.Skipped != 1 || got.Remaining() != 2 {
		t.Fatalf("sent %d, job %+v; want 2 sent, 3 listed, 1 skipped", len(msgs), got)
	}
	for _, m := range msgs {
		if m.msg.Key == *v.Key {
			t.Errorf("%s sent though done", m.msg.Key)
		}
	}
	r.end(msgs)
	r.clk.Advance(time.Minute)
	r.run()
	if got := r.job(j.ID); got.State != jobs.StateDone {
		t.Errorf("state %s, want done", got.State)
	}
}

func TestPartialBatchFailureIsSentNextRun(t *testing.T) {
	r := newRig(t, 12)
	ctx := context.Background()
	j, err := r.store.Create(ctx, jobs.Spec{Kind: jobs.KindBackfill, Bucket: r.bucket, RatePerMinute: 30})
	if err != nil {
		t.Fatal(err)
	}
	r.q.refuse[jobs.Position(0, 3)] = true
	r.run()
	first := r.q.take()
	if got := r.job(j.ID); len(first) != 11 || got.Sent != 11 {
		t.Fatalf("sent %d (job says %d), want 11 of 12", len(first), got.Sent)
	}
	r.clk.Advance(time.Minute)
	r.run()
	second := r.q.take()
	if len(second) != 1 || second[0].msg.Pos != jobs.Position(0, 3) {
		t.Fatalf("next run sent %+v, want the refused one", second)
	}
	r.end(append(first, second...))
	r.clk.Advance(time.Minute)
	r.run()
	if got := r.job(j.ID); got.State != jobs.StateDone || got.Sent != 12 {
		t.Errorf("job %+v", got)
	}
}

func TestOverlappingRunsNeverSendAPositionTwice(t *testing.T) {
	r := newRig(t, 40)
	ctx := context.Background()
	if _, err := r.store.Create(ctx, jobs.Spec{Kind: jobs.KindBackfill, Bucket: r.bucket, RatePerMinute: 600}); err != nil {
		t.Fatal(err)
	}
	// EventBridge delivers the same minute's event to four instances.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := r.feeder().Run(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for _, m := range r.q.take() {
		seen[m.msg.Pos]++
	}
	for pos, n := range seen {
		if n > 1 {
			t.Errorf("position %s sent %d times", pos, n)
		}
	}
	if len(seen) != 40 {
		t.Errorf("%d positions sent, want all 40 by the run that held the lease", len(seen))
	}
}

func TestPauseHoldsAndResumeSendsTheDropped(t *testing.T) {
	r := newRig(t, 5)
	ctx := context.Background()
	// At 5 a minute a job feeds 3.4 a minute.
	j, err := r.store.Create(ctx, jobs.Spec{Kind: jobs.KindBackfill, Bucket: r.bucket, RatePerMinute: 5})
	if err != nil {
		t.Fatal(err)
	}
	r.run()
	first := r.q.take()
	if len(first) != 3 {
		t.Fatalf("fed %d, want 3", len(first))
	}
	if err := r.store.Pause(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	// The predictor ends one and drops two while paused.
	r.end(first[:1])
	for _, m := range first[1:] {
		if err := r.store.Drop(ctx, j.ID, m.msg.Pos); err != nil {
			t.Fatal(err)
		}
	}
	r.clk.Advance(time.Minute)
	if rep := r.run(); rep.Held[jobs.HeldPaused] != 1 || len(r.q.take()) != 0 {
		t.Fatalf("a paused job was fed: %+v", rep)
	}
	if err := r.store.Resume(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	r.clk.Advance(time.Minute)
	r.run()
	// Two minutes since it last fed (the catch-up's most): the two
	// dropped first, then the last two of the manifest.
	again := r.q.take()
	if len(again) != 4 || again[0].msg.Pos != first[1].msg.Pos || again[1].msg.Pos != first[2].msg.Pos {
		t.Fatalf("after resume sent %+v; want the two dropped first", again)
	}
	r.end(again)
	r.clk.Advance(time.Minute)
	r.run()
	if got := r.job(j.ID); got.State != jobs.StateDone || got.Done != 5 || got.Sent != 5 || len(r.q.take()) != 0 {
		t.Errorf("job %+v", got)
	}
}

func TestUnsettledMessagesSettleAfterTheQueueHorizon(t *testing.T) {
	r := newRig(t, 4, func(o *jobs.FeederOptions) { o.Visibility, o.MaxReceiveCount = time.Minute, 3 })
	ctx := context.Background()
	j, err := r.store.Create(ctx, jobs.Spec{Kind: jobs.KindBackfill, Bucket: r.bucket, RatePerMinute: 30})
	if err != nil {
		t.Fatal(err)
	}
	r.run()
	msgs := r.q.take()
	r.end(msgs[:3]) // the fourth dead-letters: it never ends
	r.clk.Advance(time.Minute)
	r.run()
	if got := r.job(j.ID); got.State == jobs.StateDone {
		t.Fatal("done with a message in flight")
	}
	// 3 receives x 1 minute + the 2-minute window: past it the message
	// cannot still be in the queue.
	r.clk.Advance(5 * time.Minute)
	r.run()
	if got := r.job(j.ID); got.State != jobs.StateDone || got.Done != 3 {
		t.Errorf("job %+v, want done with 3 recorded", got)
	}
}

func TestBudgetSpentHoldsFeeding(t *testing.T) {
	r := newRig(t, 3, func(o *jobs.FeederOptions) { o.DailyBudget = 5 })
	ctx := context.Background()
	j, err := r.store.Create(ctx, jobs.Spec{Kind: jobs.KindBackfill, Bucket: r.bucket, RatePerMinute: 30})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := r.ledger.ReserveCredits(ctx, start.Format("2006-01-02"), 5, 5); !ok || err != nil {
		t.Fatal(ok, err)
	}
	rep := r.run()
	if got := r.job(j.ID); rep.Held[jobs.HeldBudget] != 1 || got.Held != jobs.HeldBudget || len(r.q.take()) != 0 {
		t.Fatalf("fed with the day's budget spent: %+v, job held %q", rep, got.Held)
	}
	r.clk.Advance(24 * time.Hour) // a new UTC day
	r.run()
	if got := r.job(j.ID); got.Held != "" || len(r.q.take()) != 3 {
		t.Errorf("the next day: held %q", got.Held)
	}
}

func TestCancelledJobIsForgotten(t *testing.T) {
	r := newRig(t, 10)
	ctx := context.Background()
	j, err := r.store.Create(ctx, jobs.Spec{Kind: jobs.KindBackfill, Bucket: r.bucket, RatePerMinute: 5})
	if err != nil {
		t.Fatal(err)
	}
	r.run()
	if n := len(r.q.take()); n != 3 {
		t.Fatalf("fed %d, want 3", n)
	}
	if err := r.store.Cancel(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	r.clk.Advance(time.Minute)
	if rep := r.run(); rep.Jobs != 0 || len(r.q.take()) != 0 {
		t.Errorf("a cancelled job was fed: %+v", rep)
	}
}

func TestReprocessListsTheSelectionAcrossBuckets(t *testing.T) {
	r := newRig(t, 0)
	ctx := context.Background()
	// Three succeeded uploads in two buckets, one failed: the selection
	// (status=succeeded) is the three.
	for i, obj := range []struct {
		bucket, key string
		ok          bool
	}{{"photos", "a.jpg", true}, {"photos", "b.jpg", true}, {"archive", "c.jpg", true}, {"photos", "d.jpg", false}} {
		ref := ledger.ObjectRef{Bucket: obj.bucket, Key: obj.key, VersionID: fmt.Sprintf("v%d", i), ETag: "e"}
		claim, _, err := r.ledger.Claim(ctx, ref, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if obj.ok {
			err = r.ledger.Complete(ctx, claim, ledger.Record{Size: 10})
		} else {
			err = r.ledger.Fail(ctx, claim, "bad", "failed", false)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := r.ledger.StartRun(ctx, ledger.Run{Name: "v3", ModelID: "global_v0.3", Selection: "status=succeeded", Price: 2, Cap: 100}); err != nil {
		t.Fatal(err)
	}
	r.clk.Advance(time.Minute)
	j, err := r.store.Create(ctx, jobs.Spec{Kind: jobs.KindReprocess, Run: "v3", ModelID: "global_v0.3", Price: 2,
		Selection: "status=succeeded", RatePerMinute: 30})
	if err != nil {
		t.Fatal(err)
	}
	r.run()
	msgs := r.q.take()
	got := r.job(j.ID)
	if len(msgs) != 3 || got.Listed != 3 || !got.ListingDone || got.Sent != 3 {
		t.Fatalf("sent %d, job %+v; want the 3 succeeded", len(msgs), got)
	}
	buckets := map[string]int{}
	for _, m := range msgs {
		o := m.msg
		if o.Kind != jobmsg.KindReprocess || o.Run != "v3" || o.ModelID != "global_v0.3" || o.CreditsPerCall != 2 || o.Replaces != "" || o.Size != 10 {
			t.Errorf("message %+v", o)
		}
		buckets[o.Bucket]++
	}
	if buckets["photos"] != 2 || buckets["archive"] != 1 {
		t.Errorf("buckets %v, want each record's own", buckets)
	}
	if run, err := r.ledger.GetRun(ctx, "v3"); err != nil || run.Selected != 3 {
		t.Errorf("run item %+v, %v: want 3 selected", run, err)
	}
}

// A reprocess selection of more records than a job plans is refused with
// the job's Error saying how to split it, nothing listed or sent, and the
// job left active (a run that went out of memory would say nothing).
func TestReprocessRefusesASelectionTooLargeToPlan(t *testing.T) {
	r := newRig(t, 0, func(o *jobs.FeederOptions) { o.PlanRecords = 2 })
	ctx := context.Background()
	for i := range 3 {
		ref := ledger.ObjectRef{Bucket: "photos", Key: fmt.Sprintf("%d.jpg", i), VersionID: fmt.Sprintf("v%d", i), ETag: "e"}
		claim, _, err := r.ledger.Claim(ctx, ref, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.ledger.Complete(ctx, claim, ledger.Record{Size: 10}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := r.ledger.StartRun(ctx, ledger.Run{Name: "big", Selection: "status=succeeded", Price: 1, Cap: 100}); err != nil {
		t.Fatal(err)
	}
	r.clk.Advance(time.Minute)
	j, err := r.store.Create(ctx, jobs.Spec{Kind: jobs.KindReprocess, Run: "big", Price: 1, Selection: "status=succeeded", RatePerMinute: 30})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.feeder().Run(ctx)
	if err != nil || len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "too large") {
		t.Fatalf("feeder run: %v, errors %v: want the job's one error", err, rep.Errors)
	}
	got := r.job(j.ID)
	if msgs := r.q.take(); len(msgs) != 0 || got.Listed != 0 || got.ListingDone || !got.State.Active() ||
		!strings.Contains(got.Error, "more than 2 records") || !strings.Contains(got.Error, "--since/--until") {
		t.Fatalf("sent %d, job %+v: want nothing listed and the bound in its error", len(msgs), got)
	}
}
