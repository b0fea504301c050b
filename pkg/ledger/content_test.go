package ledger_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsfault"
)

// content is the identity of a photo whose bytes are body, asked with the
// default request.
func content(body string) ledger.ContentRef {
	sum := sha256.Sum256([]byte(body))
	return ledger.ContentRef{SHA256: hex.EncodeToString(sum[:]), Request: "model=default;top_n=default"}
}

func claimContent(t *testing.T, s *ledger.Store, c ledger.ContentRef, r ledger.ObjectRef, maxAge ledger.MaxAge, want ledger.ContentOutcome) *ledger.ContentClaim {
	t.Helper()
	cc, outcome, err := s.ClaimContent(context.Background(), c, r, time.Minute, maxAge)
	if err != nil {
		t.Fatalf("ClaimContent(%s): %v", r, err)
	}
	if outcome != want {
		t.Fatalf("ClaimContent(%s) = %s, want %s (%+v)", r, outcome, want, cc)
	}
	return cc
}

// payWith claims the object r and its content, and completes it with a
// paid answer carrying the content identity, as the predictor does; end
// says whether the content claim is ended afterwards (false: the attempt
// crashed between the two writes).
func payWith(t *testing.T, s *ledger.Store, c ledger.ContentRef, r ledger.ObjectRef, end bool) {
	t.Helper()
	ctx := context.Background()
	oc := mustClaim(t, s, r, ledger.ClaimAcquired)
	cc := claimContent(t, s, c, r, ledger.NoMaxAge, ledger.ContentAcquired)
	err := s.Complete(ctx, oc, ledger.Record{
		PredictionID: "p-" + r.Key, CreditsConsumed: 3, ModelID: "global-v3", Place: "Lyon", CountryCode: "FR",
		Latitude: ptr(45.76), Longitude: ptr(4.84), RoundTripMS: 900, Source: ledger.SourceService,
		ExifLatitude: ptr(1), CapturedAt: "2024-05-01T19:42:10", Size: 1234,
		ContentSHA256: c.SHA256, ContentRequest: c.Request,
	})
	if err != nil {
		t.Fatalf("complete %s: %v", r, err)
	}
	if end {
		if err := s.EndContent(ctx, cc); err != nil {
			t.Fatalf("end content: %v", err)
		}
	}
}

// TestContentCopiesAtOnceMakeOneCall: copies of one photo under twenty keys,
// claimed at the same instant, get one acquired claim; the others are busy
// until its answer is recorded, then reuse it.
func TestContentCopiesAtOnceMakeOneCall(t *testing.T) {
	s, _, _, _ := newStore(t)
	c := content("the same photo")
	const copies = 20
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		outcomes = map[ledger.ContentOutcome]int{}
		winner   ledger.ObjectRef
		claim    *ledger.ContentClaim
	)
	startLine := make(chan struct{})
	for i := range copies {
		r := ref("album" + string(rune('a'+i)) + "/copy.jpg")
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-startLine
			cc, outcome, err := s.ClaimContent(context.Background(), c, r, time.Minute, ledger.NoMaxAge)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("ClaimContent: %v", err)
				return
			}
			outcomes[outcome]++
			if outcome == ledger.ContentAcquired {
				winner, claim = r, cc
			}
		}()
	}
	close(startLine)
	wg.Wait()
	if outcomes[ledger.ContentAcquired] != 1 || outcomes[ledger.ContentBusy] != copies-1 {
		t.Fatalf("outcomes = %v, want 1 acquired and %d busy", outcomes, copies-1)
	}

	oc := mustClaim(t, s, winner, ledger.ClaimAcquired)
	if err := s.Complete(context.Background(), oc, ledger.Record{PredictionID: "p-1", CreditsConsumed: 1,
		ContentSHA256: c.SHA256, ContentRequest: c.Request}); err != nil {
		t.Fatal(err)
	}
	if err := s.EndContent(context.Background(), claim); err != nil {
		t.Fatal(err)
	}
	got := claimContent(t, s, c, ref("late/copy.jpg"), ledger.NoMaxAge, ledger.ContentReusable)
	if got.Paid.PredictionID != "p-1" || got.PaidRef != winner {
		t.Errorf("reused %q from %s, want p-1 from %s", got.Paid.PredictionID, got.PaidRef, winner)
	}
}

// TestReusedResultChargesNothing: the copy's record holds the paid answer,
// 0 credits, reused_from naming the payer, and none of the payer's own
// facts (its EXIF, size, timings).
func TestReusedResultChargesNothing(t *testing.T) {
	s, _, _, _ := newStore(t)
	c := content("photo")
	payer := ref("2024/IMG_0001.jpg")
	payWith(t, s, c, payer, true)

	copyRef := ref("backup/IMG_0001.jpg")
	oc := mustClaim(t, s, copyRef, ledger.ClaimAcquired)
	cc := claimContent(t, s, c, copyRef, ledger.NoMaxAge, ledger.ContentReusable)
	rec := ledger.ReusedResult(cc.Paid, cc.PaidRef)
	if err := s.Complete(context.Background(), oc, rec); err != nil {
		t.Fatal(err)
	}
	got := mustLookup(t, s, copyRef)
	if got.Status != ledger.StatusSucceeded || got.CreditsConsumed != 0 || got.ReusedFrom != payer.String() {
		t.Errorf("copy: status %s credits %d reused_from %q; want succeeded, 0, %q", got.Status, got.CreditsConsumed, got.ReusedFrom, payer.String())
	}
	if got.PredictionID != "p-"+payer.Key || got.Place != "Lyon" || *got.Latitude != 45.76 || got.ModelID != "global-v3" {
		t.Errorf("copy lost the answer: %+v", got)
	}
	if got.ExifLatitude != nil || got.CapturedAt != "" || got.RoundTripMS != 0 || got.Size != 0 {
		t.Errorf("copy carries the payer's own facts: exif %v captured %q round trip %d size %d", got.ExifLatitude, got.CapturedAt, got.RoundTripMS, got.Size)
	}
	// A copy is never itself a source: the next copy still reuses the payer.
	if again := claimContent(t, s, c, ref("third.jpg"), ledger.NoMaxAge, ledger.ContentReusable); again.PaidRef != payer {
		t.Errorf("third copy reused from %s, want %s", again.PaidRef, payer)
	}
}

// TestContentCrashAfterClaim: the payer claimed the content and vanished
// (its object record stays in progress, its content lease live). A copy is
// busy until the lease ends, then takes the content over and pays; the
// payer's own redelivery finds its object expired, as before.
func TestContentCrashAfterClaim(t *testing.T) {
	s, clk, _, _ := newStore(t)
	c := content("photo")
	payer := ref("a.jpg")
	mustClaim(t, s, payer, ledger.ClaimAcquired)
	claimContent(t, s, c, payer, ledger.NoMaxAge, ledger.ContentAcquired)

	busy := claimContent(t, s, c, ref("b.jpg"), ledger.NoMaxAge, ledger.ContentBusy)
	if want := start.Add(time.Minute).Truncate(time.Second).Add(time.Second); !busy.LeaseUntil.Equal(want) {
		t.Errorf("busy until %s, want the payer's lease %s", busy.LeaseUntil, want)
	}
	clk.Advance(time.Minute + time.Second)
	taken := claimContent(t, s, c, ref("b.jpg"), ledger.NoMaxAge, ledger.ContentAcquired)
	if taken.Token == "" {
		t.Fatal("take-over has no token")
	}
	// The vanished attempt is not called again for its own object.
	mustClaim(t, s, payer, ledger.ClaimExpired)
	// A third copy waits for the new holder, not the vanished one.
	claimContent(t, s, c, ref("c.jpg"), ledger.NoMaxAge, ledger.ContentBusy)
}

// TestContentCrashBetweenRecordAndEnd: the payer recorded its answer and
// vanished before ending the content claim. A copy reuses the answer at
// once instead of waiting for the lease or paying again.
func TestContentCrashBetweenRecordAndEnd(t *testing.T) {
	s, _, _, _ := newStore(t)
	c := content("photo")
	payWith(t, s, c, ref("a.jpg"), false)
	claimContent(t, s, c, ref("b.jpg"), ledger.NoMaxAge, ledger.ContentReusable)
}

// TestContentRedeliveryOfTheHolder: an attempt released its object (budget,
// a slot far away) and its content claim was not ended. The object's next
// delivery, holding the object claim again, takes its own content claim
// back at once; another object is still busy.
func TestContentRedeliveryOfTheHolder(t *testing.T) {
	s, _, _, _ := newStore(t)
	ctx := context.Background()
	c := content("photo")
	r := ref("a.jpg")
	oc := mustClaim(t, s, r, ledger.ClaimAcquired)
	claimContent(t, s, c, r, ledger.NoMaxAge, ledger.ContentAcquired)
	if err := s.Release(ctx, oc, "budget_exhausted", "daily budget", time.Time{}); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, s, r, ledger.ClaimAcquired)
	claimContent(t, s, c, r, ledger.NoMaxAge, ledger.ContentAcquired)
	claimContent(t, s, c, ref("b.jpg"), ledger.NoMaxAge, ledger.ContentBusy)
}

// TestContentFailuresAreNotReused: a final failure (outcome unknown, a
// failed call) or a released claim frees the content for the next copy,
// which pays; so does a rejection made before the content was known.
func TestContentFailuresAreNotReused(t *testing.T) {
	tests := []struct {
		name   string
		finish func(*ledger.Store, *ledger.Claim) error
	}{
		{"final failure", func(s *ledger.Store, c *ledger.Claim) error {
			return s.Fail(context.Background(), c, ledger.ErrorCodeOutcomeUnknown, "cut off", false)
		}},
		{"retryable failure", func(s *ledger.Store, c *ledger.Claim) error {
			return s.Release(context.Background(), c, "rate_limited", "429", time.Time{})
		}},
		{"rejection without the content", func(s *ledger.Store, c *ledger.Claim) error {
			return s.RejectClaimed(context.Background(), c, "processing_panic", "panic", ledger.ObjectInfo{})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _, _ := newStore(t)
			c := content("photo")
			oc := mustClaim(t, s, ref("a.jpg"), ledger.ClaimAcquired)
			cc := claimContent(t, s, c, ref("a.jpg"), ledger.NoMaxAge, ledger.ContentAcquired)
			if err := tt.finish(s, oc); err != nil {
				t.Fatal(err)
			}
			if err := s.EndContent(context.Background(), cc); err != nil {
				t.Fatal(err)
			}
			claimContent(t, s, c, ref("b.jpg"), ledger.NoMaxAge, ledger.ContentAcquired)
		})
	}
}

// TestContentRejectionIsReused: the service's verdict on the content (a
// rejection carrying it) is reused by a copy.
func TestContentRejectionIsReused(t *testing.T) {
	s, _, _, _ := newStore(t)
	ctx := context.Background()
	c := content("not really a photo")
	oc := mustClaim(t, s, ref("a.jpg"), ledger.ClaimAcquired)
	cc := claimContent(t, s, c, ref("a.jpg"), ledger.NoMaxAge, ledger.ContentAcquired)
	if err := s.RejectClaimed(ctx, oc, "unsupported_format", "400 INVALID_FILE_TYPE", ledger.ObjectInfo{Content: &c}); err != nil {
		t.Fatal(err)
	}
	if err := s.EndContent(ctx, cc); err != nil {
		t.Fatal(err)
	}
	got := claimContent(t, s, c, ref("b.jpg"), ledger.NoMaxAge, ledger.ContentReusable)
	if got.Paid.Status != ledger.StatusRejected || got.Paid.ErrorCode != "unsupported_format" {
		t.Fatalf("reusable record %s %s, want rejected unsupported_format", got.Paid.Status, got.Paid.ErrorCode)
	}
	copyClaim := mustClaim(t, s, ref("b.jpg"), ledger.ClaimAcquired)
	if err := s.RejectClaimed(ctx, copyClaim, got.Paid.ErrorCode, got.Paid.ErrorMessage,
		ledger.ObjectInfo{Content: &c, ReusedFrom: got.PaidRef.String()}); err != nil {
		t.Fatal(err)
	}
	if rec := mustLookup(t, s, ref("b.jpg")); rec.ReusedFrom != ref("a.jpg").String() || rec.ContentSHA256 != c.SHA256 {
		t.Errorf("copy's rejection: reused_from %q content %q", rec.ReusedFrom, rec.ContentSHA256)
	}
}

// TestContentMaxAgeAndRequest: an answer older than the maximum age, or
// for another request (model, top_n), is not reused; without a maximum
// age any age is.
func TestContentMaxAgeAndRequest(t *testing.T) {
	s, clk, _, _ := newStore(t)
	c := content("photo")
	payWith(t, s, c, ref("a.jpg"), true)
	clk.Advance(48 * time.Hour)
	claimContent(t, s, c, ref("b.jpg"), ledger.NoMaxAge, ledger.ContentReusable)
	claimContent(t, s, c, ref("b.jpg"), ledger.MaxAge(72*time.Hour), ledger.ContentReusable)
	other := c
	other.Request = "model=global-v3;top_n=5"
	claimContent(t, s, other, ref("b.jpg"), ledger.NoMaxAge, ledger.ContentAcquired)
	taken := claimContent(t, s, c, ref("b.jpg"), ledger.MaxAge(24*time.Hour), ledger.ContentAcquired)
	// The fresh answer's payer is now b.jpg; until it answers, a copy waits.
	claimContent(t, s, c, ref("c.jpg"), ledger.NoMaxAge, ledger.ContentBusy)
	if taken.Token == "" {
		t.Fatal("no token")
	}
}

// TestContentTakeOverRace: copies arriving together after the holder
// vanished take the content over once between them.
func TestContentTakeOverRace(t *testing.T) {
	s, clk, _, _ := newStore(t)
	c := content("photo")
	claimContent(t, s, c, ref("vanished.jpg"), ledger.NoMaxAge, ledger.ContentAcquired)
	clk.Advance(2 * time.Minute)
	const copies = 10
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		outcomes = map[ledger.ContentOutcome]int{}
	)
	for i := range copies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, outcome, err := s.ClaimContent(context.Background(), c, ref(string(rune('a'+i))+".jpg"), time.Minute, ledger.NoMaxAge)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("ClaimContent: %v", err)
				return
			}
			outcomes[outcome]++
		}()
	}
	wg.Wait()
	if outcomes[ledger.ContentAcquired] != 1 || outcomes[ledger.ContentBusy] != copies-1 {
		t.Fatalf("outcomes = %v, want 1 acquired and %d busy", outcomes, copies-1)
	}
}

// TestContentClaimWhoseAnswerWasLost: a content claim DynamoDB applied but
// whose answer was lost is retried by the SDK, and recognised as ours.
func TestContentClaimWhoseAnswerWasLost(t *testing.T) {
	s, direct, p := lostAnswerStore(t)
	c := content("photo")
	p.SetRules(awsfault.At(1, awsfault.LostAnswer).On("UpdateItem").Times(1))
	cc, outcome, err := s.ClaimContent(context.Background(), c, ref("a.jpg"), time.Minute, ledger.NoMaxAge)
	if p.Stats().Injected["UpdateItem: answer lost"] == 0 {
		t.Fatal("no answer was lost")
	}
	p.SetRules()
	if err != nil || outcome != ledger.ContentAcquired {
		t.Fatalf("claim whose answer was lost: %v, %s; want acquired", err, outcome)
	}
	claimContent(t, direct, c, ref("b.jpg"), ledger.NoMaxAge, ledger.ContentBusy)
	if err := s.EndContent(context.Background(), cc); err != nil {
		t.Fatal(err)
	}
}

// TestContentRefRejectsBadIdentity: a digest that is not 64 lowercase hex
// digits, or no request, writes nothing.
func TestContentRefRejectsBadIdentity(t *testing.T) {
	s, _, _, _ := newStore(t)
	for _, c := range []ledger.ContentRef{
		{SHA256: "abc", Request: "r"},
		{SHA256: strings64("G"), Request: "r"},
		{SHA256: content("x").SHA256},
	} {
		if _, _, err := s.ClaimContent(context.Background(), c, ref("a.jpg"), time.Minute, ledger.NoMaxAge); err == nil {
			t.Errorf("ClaimContent(%+v) accepted", c)
		}
	}
}

func strings64(s string) string {
	out := ""
	for len(out) < 64 {
		out += s
	}
	return out[:64]
}
