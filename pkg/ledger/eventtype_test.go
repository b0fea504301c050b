package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/shared/resultevents"
)

// The results pipe publishes a record's event_type as its detail-type, so
// every write that changes the status must set it for a final status and
// clear it for any other, in that same write.
func TestEventTypeFollowsTheStatus(t *testing.T) {
	s, clk, _, _ := newStore(t)
	ctx := context.Background()
	want := func(r ledger.ObjectRef, status, eventType string) {
		t.Helper()
		rec := mustLookup(t, s, r)
		if rec.Status != status || rec.EventType != eventType {
			t.Errorf("%s: status %q, event_type %q; want %q, %q", r, rec.Status, rec.EventType, status, eventType)
		}
	}

	ok := ref("ok.jpg")
	c := mustClaim(t, s, ok, ledger.ClaimAcquired)
	want(ok, ledger.StatusInProgress, "")
	if err := s.Complete(ctx, c, ledger.Record{Place: "Paris"}); err != nil {
		t.Fatal(err)
	}
	want(ok, ledger.StatusSucceeded, resultevents.DetailTypeGeolocated)

	retried := ref("retried.jpg")
	c = mustClaim(t, s, retried, ledger.ClaimAcquired)
	if err := s.Fail(ctx, c, "rate_limited", "429", true); err != nil {
		t.Fatal(err)
	}
	want(retried, ledger.StatusWaiting, "")
	c = mustClaim(t, s, retried, ledger.ClaimAcquired)
	if err := s.Fail(ctx, c, "unprocessable", "422", false); err != nil {
		t.Fatal(err)
	}
	want(retried, ledger.StatusFailed, resultevents.DetailTypeFailed)
	if err := s.Reopen(ctx, retried, "unprocessable"); err != nil {
		t.Fatal(err)
	}
	want(retried, ledger.StatusWaiting, "")

	rejected := ref("notes.txt")
	if err := s.Reject(ctx, rejected, "not_an_image", "text", ledger.ObjectInfo{}); err != nil {
		t.Fatal(err)
	}
	want(rejected, ledger.StatusRejected, resultevents.DetailTypeRejected)

	unfit := ref("unfit.jpg")
	c = mustClaim(t, s, unfit, ledger.ClaimAcquired)
	if err := s.RejectClaimed(ctx, c, "not_an_image", "text", ledger.ObjectInfo{}); err != nil {
		t.Fatal(err)
	}
	want(unfit, ledger.StatusRejected, resultevents.DetailTypeRejected)

	waiting := ref("waiting.jpg")
	if err := s.MarkWaiting(ctx, waiting, "key_unreadable", "", false); err != nil {
		t.Fatal(err)
	}
	want(waiting, ledger.StatusWaiting, "")

	lost := ref("lost.jpg")
	mustClaim(t, s, lost, ledger.ClaimAcquired)
	clk.Advance(2 * time.Minute)
	expired := mustClaim(t, s, lost, ledger.ClaimExpired)
	if err := s.MarkOutcomeUnknown(ctx, expired.Record); err != nil {
		t.Fatal(err)
	}
	want(lost, ledger.StatusFailed, resultevents.DetailTypeFailed)
}

// resultevents keeps its own copy of the final statuses (the CDK app does
// not link the ledger): they must be the ledger's.
func TestResultEventsStatusesAreTheLedgers(t *testing.T) {
	if resultevents.StatusSucceeded != ledger.StatusSucceeded || resultevents.StatusRejected != ledger.StatusRejected || resultevents.StatusFailed != ledger.StatusFailed {
		t.Errorf("resultevents statuses %v differ from the ledger's", resultevents.FinalStatuses)
	}
	for _, status := range ledger.Statuses {
		final := status == ledger.StatusSucceeded || status == ledger.StatusRejected || status == ledger.StatusFailed
		if got := resultevents.DetailType(status) != ""; got != final {
			t.Errorf("status %s: has a detail type %t, is final %t", status, got, final)
		}
	}
}
