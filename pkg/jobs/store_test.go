package jobs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
)

func TestMain(m *testing.M) { awspartstest.Main(m) }

var start = time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)

func newStore(t *testing.T) (*jobs.Store, *simclock.Clock, jobs.DynamoDBAPI, string) {
	t.Helper()
	client, table := awspartstest.DynamoDB(t)
	clk := simclock.New(start)
	return jobs.New(client, table, func(o *jobs.Options) { o.Clock = clk.Now }), clk, client, table
}

func TestCreateGetList(t *testing.T) {
	s, clk, _, _ := newStore(t)
	ctx := context.Background()
	a, err := s.Create(ctx, jobs.Spec{Kind: jobs.KindBackfill, Bucket: "photos", Prefix: "2024/"})
	if err != nil {
		t.Fatal(err)
	}
	if err := jobs.ValidateID(a.ID); err != nil || a.State != jobs.StateListing || !a.Created.Equal(start) {
		t.Fatalf("created %+v (%v)", a, err)
	}
	clk.Advance(time.Second)
	b, err := s.Create(ctx, jobs.Spec{Kind: jobs.KindReprocess, Run: "v3", ModelID: "global_v0.3", Price: 2, Selection: "status=succeeded since=7d"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, a.ID)
	if err != nil || got.Bucket != "photos" || got.Prefix != "2024/" || got.Kind != jobs.KindBackfill {
		t.Errorf("Get = %+v, %v", got, err)
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID {
		t.Fatalf("List = %+v, %v; want b then a", list, err)
	}
	if list[0].Selection != "status=succeeded since=7d" || list[0].Price != 2 {
		t.Errorf("reprocess job read back as %+v", list[0])
	}
	if _, err := s.Get(ctx, "j-20261202-zzzzzz"); !errors.Is(err, jobs.ErrNotFound) {
		t.Errorf("Get of an unknown id: %v", err)
	}
	if _, err := s.Create(ctx, jobs.Spec{Kind: jobs.KindBackfill}); err == nil {
		t.Error("a backfill without a bucket was created")
	}
}

func TestPauseResumeCancel(t *testing.T) {
	s, _, _, _ := newStore(t)
	ctx := context.Background()
	j, err := s.Create(ctx, jobs.Spec{Kind: jobs.KindBackfill, Bucket: "photos"})
	if err != nil {
		t.Fatal(err)
	}
	state := func() jobs.Job {
		t.Helper()
		got, err := s.Get(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if err := s.Pause(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	if got := state(); got.State != jobs.StatePaused || got.Held != jobs.HeldPaused {
		t.Errorf("paused: %s held %q", got.State, got.Held)
	}
	if err := s.Pause(ctx, j.ID); err != nil {
		t.Errorf("pausing a paused job: %v", err)
	}
	if err := s.Resume(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	if got := state(); got.State != jobs.StateListing || got.Held != "" {
		t.Errorf("resumed: %s held %q, want listing (its listing is not done)", got.State, got.Held)
	}
	if st, err := s.State(ctx, j.ID); err != nil || st != jobs.StateListing {
		t.Errorf("State = %s, %v", st, err)
	}
	if err := s.Cancel(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	if got := state(); got.State != jobs.StateCancelled {
		t.Errorf("cancelled: %s", got.State)
	}
	for name, op := range map[string]func(context.Context, string) error{"pause": s.Pause, "resume": s.Resume} {
		if err := op(ctx, j.ID); !errors.Is(err, jobs.ErrFinal) {
			t.Errorf("%s of a cancelled job: %v, want ErrFinal", name, err)
		}
	}
	if err := s.Pause(ctx, "j-20261202-zzzzzz"); err == nil {
		t.Error("paused a job that does not exist")
	}
}

func TestAddEndCounts(t *testing.T) {
	s, clk, _, _ := newStore(t)
	ctx := context.Background()
	j, err := s.Create(ctx, jobs.Spec{Kind: jobs.KindBackfill, Bucket: "photos"})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Minute)
	for _, o := range []jobs.Outcome{jobs.OutcomeDone, jobs.OutcomeDone, jobs.OutcomeFailed, jobs.OutcomeSkipped} {
		if err := s.AddEnd(ctx, j.ID, o, 2, clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Get(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Done != 2 || got.Failed != 1 || got.Skipped != 1 || got.CreditsSpent != 8 || !got.LastProgress.Equal(start.Add(time.Minute)) {
		t.Errorf("counters %+v", got)
	}
	if err := s.AddEnd(ctx, "j-20261202-zzzzzz", jobs.OutcomeDone, 1, clk.Now()); !errors.Is(err, jobs.ErrNotFound) {
		t.Errorf("AddEnd of a missing job: %v (it must not create one)", err)
	}
}
