package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

func runRef(key, run string) ledger.ObjectRef {
	r := ref(key)
	r.Run = run
	return r
}

func TestRunKeysLeaveRunZeroAlone(t *testing.T) {
	r := ref("a.jpg")
	if got := r.SortKey(); got != "V#v1" {
		t.Errorf("run 0 sort key = %q, want V#v1 (today's)", got)
	}
	r.Run = "m2"
	if got := r.SortKey(); got != "V#v1#R#m2" {
		t.Errorf("run sort key = %q, want V#v1#R#m2", got)
	}
	if got := r.PartitionKey(); got != "OBJ#uploads#a.jpg" {
		t.Errorf("run partition key = %q, want the object's", got)
	}
	for _, bad := range []string{"0", "", "a#b", "a b", string(make([]byte, 65))} {
		if err := ledger.ValidateRunName(bad); err == nil {
			t.Errorf("ValidateRunName(%q) = nil, want an error", bad)
		}
	}
}

// TestRunClaimIsPerRun: the same object version is claimed once per run:
// run 0's final record does not stop a run, a run's final record stops a
// redelivery of that run only, and a run's vanished attempt becomes
// outcome_unknown for that run, leaving run 0 and other runs untouched.
func TestRunClaimIsPerRun(t *testing.T) {
	s, clk, _, _ := newStore(t)
	ctx := context.Background()
	base := ref("a.jpg")

	c0 := mustClaim(t, s, base, ledger.ClaimAcquired)
	if err := s.Complete(ctx, c0, ledger.Record{ModelID: "m1", Place: "Lyon", Latitude: ptr(45.76), Longitude: ptr(4.83), CreditsConsumed: 1}); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, s, base, ledger.ClaimDone)

	r1 := runRef("a.jpg", "r1")
	c1 := mustClaim(t, s, r1, ledger.ClaimAcquired)
	mustClaim(t, s, r1, ledger.ClaimBusy)
	prev := mustLookup(t, s, base)
	res := ledger.Record{ModelID: "m2", Place: "Paris", Latitude: ptr(48.85), Longitude: ptr(2.35), CreditsConsumed: 1}
	ledger.WithHistory(&res, prev)
	clk.Advance(time.Second)
	if err := s.Complete(ctx, c1, res); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, s, r1, ledger.ClaimDone)
	got := mustLookup(t, s, r1)
	if got.Run != "r1" || got.SK != "V#v1#R#r1" || got.Previous == nil || got.Previous.Place != "Lyon" || got.Previous.Run != "" {
		t.Errorf("run r1 record = run %q sk %q previous %+v; want r1, V#v1#R#r1, run 0's Lyon", got.Run, got.SK, got.Previous)
	}
	if zero := mustLookup(t, s, base); zero.Place != "Lyon" || zero.Run != "" || zero.Previous != nil {
		t.Errorf("run 0 record changed by run r1: place %q run %q previous %+v", zero.Place, zero.Run, zero.Previous)
	}

	// A run whose attempt vanished after its claim: outcome_unknown, its
	// own record only.
	r2 := runRef("a.jpg", "r2")
	mustClaim(t, s, r2, ledger.ClaimAcquired)
	clk.Advance(2 * time.Minute)
	exp := mustClaim(t, s, r2, ledger.ClaimExpired)
	if err := s.MarkOutcomeUnknown(ctx, exp.Record); err != nil {
		t.Fatal(err)
	}
	if rec := mustLookup(t, s, r2); rec.Status != ledger.StatusFailed || rec.ErrorCode != ledger.ErrorCodeOutcomeUnknown || rec.Run != "r2" {
		t.Errorf("vanished run r2 attempt = %s/%s run %q, want failed/outcome_unknown in r2", rec.Status, rec.ErrorCode, rec.Run)
	}
	mustClaim(t, s, r2, ledger.ClaimDone)
	if rec := mustLookup(t, s, r1); rec.Status != ledger.StatusSucceeded {
		t.Errorf("run r1 record became %s after r2's attempt vanished", rec.Status)
	}

	// Query by run sees the run's records only.
	byRun, err := s.Query(ctx, ledger.QueryInput{Run: "r1", Since: start.Add(-time.Hour)})
	if err != nil || len(byRun) != 1 || byRun[0].Run != "r1" {
		t.Errorf("Query(run r1) = %d records, %v; want the one r1 record", len(byRun), err)
	}
}

func TestHistoryIsBounded(t *testing.T) {
	var rec ledger.Record
	for i := range ledger.MaxHistory + 5 {
		next := ledger.Record{Run: fmt.Sprintf("r%d", i), Place: fmt.Sprintf("p%d", i)}
		ledger.WithHistory(&next, &rec)
		rec = next
	}
	if len(rec.History) != ledger.MaxHistory {
		t.Fatalf("history holds %d entries, want %d", len(rec.History), ledger.MaxHistory)
	}
	last := rec.History[len(rec.History)-1]
	if last.Run != fmt.Sprintf("r%d", ledger.MaxHistory+3) || rec.Previous == nil || rec.Previous.Run != last.Run {
		t.Errorf("history ends with %+v, previous %+v; want the run before the last", last, rec.Previous)
	}
}

func TestRunCapNeverExceededUnderConcurrency(t *testing.T) {
	s, _, _, _ := newStore(t)
	ctx := context.Background()
	const (
		workers = 25
		cost    = 3
		capCr   = 31 // room for 10 reservations, not 11
	)
	if _, created, err := s.StartRun(ctx, ledger.Run{Name: "cap", ModelID: "m2", Cap: capCr, Price: cost}); err != nil || !created {
		t.Fatalf("StartRun = %t, %v", created, err)
	}
	var granted atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			ok, err := s.ReserveRunCredits(ctx, "cap", cost)
			if err != nil {
				t.Errorf("ReserveRunCredits: %v", err)
			}
			if ok {
				granted.Add(1)
			}
		})
	}
	wg.Wait()
	if granted.Load() != 10 {
		t.Errorf("granted %d reservations of %d under a cap of %d, want 10", granted.Load(), cost, capCr)
	}
	run, err := s.GetRun(ctx, "cap")
	if err != nil || run.Spent != 30 || run.Remaining != 1 {
		t.Fatalf("run after reservations = %+v, %v; want spent 30, remaining 1", run, err)
	}
	if err := s.ReleaseRunCredits(ctx, "cap", 3); err != nil {
		t.Fatal(err)
	}
	if err := s.ReleaseRunCredits(ctx, "cap", 100); !errors.Is(err, ledger.ErrReleaseExceedsReserved) {
		t.Errorf("releasing more than spent = %v, want ErrReleaseExceedsReserved", err)
	}
	if err := s.RecordRunOverspend(ctx, "cap", 5); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.ReserveRunCredits(ctx, "cap", 1); err != nil || ok {
		t.Errorf("reservation after an overspend past the cap = %t, %v; want refused", ok, err)
	}
	run, _ = s.GetRun(ctx, "cap")
	if run.Spent != 32 || run.Remaining != -1 {
		t.Errorf("run after release and overspend = spent %d remaining %d, want 32 and -1", run.Spent, run.Remaining)
	}
	if ok, err := s.ReserveRunCredits(ctx, "absent", 1); err != nil || ok {
		t.Errorf("reservation on an absent run = %t, %v; want refused", ok, err)
	}
}

func TestStartRunResumes(t *testing.T) {
	s, _, _, _ := newStore(t)
	ctx := context.Background()
	first, created, err := s.StartRun(ctx, ledger.Run{Name: "again", ModelID: "m2", Cap: 10, Selection: "--prefix a/"})
	if err != nil || !created {
		t.Fatalf("StartRun = %t, %v", created, err)
	}
	if ok, err := s.ReserveRunCredits(ctx, "again", 4); !ok || err != nil {
		t.Fatalf("reserve = %t, %v", ok, err)
	}
	again, created, err := s.StartRun(ctx, ledger.Run{Name: "again", ModelID: "other", Cap: 99})
	if err != nil || created {
		t.Fatalf("StartRun of an existing run = created %t, %v; want the existing run", created, err)
	}
	if again.ModelID != "m2" || again.Cap != 10 || again.Spent != 4 || again.Selection != first.Selection || !again.StartedAt.Equal(first.StartedAt) {
		t.Errorf("resumed run = %+v, want the first one's (%+v) with 4 spent", again, first)
	}
	if err := s.RaiseRunCap(ctx, "again", 10, 20); err != nil {
		t.Fatal(err)
	}
	if err := s.RaiseRunCap(ctx, "again", 10, 30); err == nil {
		t.Error("raising from a stale cap succeeded")
	}
	if err := s.SetRunProgress(ctx, "again", 7, start.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	runs, err := s.ListRuns(ctx)
	if err != nil || len(runs) != 1 || runs[0].Cap != 20 || runs[0].Remaining != 16 || runs[0].Selected != 7 || runs[0].FinishedAt.IsZero() {
		t.Errorf("ListRuns = %+v, %v; want one run, cap 20, remaining 16, 7 selected, finished", runs, err)
	}
}
