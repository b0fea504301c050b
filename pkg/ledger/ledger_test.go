package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"

	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
)

func TestMain(m *testing.M) { awspartstest.Main(m) }

var start = time.Date(2026, 3, 14, 9, 26, 53, 589793000, time.UTC)

// newStore returns a store on a fresh table with a settable clock.
func newStore(t *testing.T, optFns ...func(*ledger.Options)) (*ledger.Store, *simclock.Clock, *dynamodb.Client, string) {
	t.Helper()
	client, table := awspartstest.DynamoDB(t)
	clk := simclock.New(start)
	opts := append([]func(*ledger.Options){func(o *ledger.Options) { o.Clock = clk.Now }}, optFns...)
	return ledger.New(client, table, opts...), clk, client, table
}

func ref(key string) ledger.ObjectRef {
	return ledger.ObjectRef{Bucket: "uploads", Key: key, VersionID: "v1", ETag: `"0123abcd"`}
}

func mustClaim(t *testing.T, s *ledger.Store, r ledger.ObjectRef, want ledger.ClaimOutcome) *ledger.Claim {
	t.Helper()
	c, outcome, err := s.Claim(context.Background(), r, time.Minute)
	if err != nil {
		t.Fatalf("Claim(%s): %v", r, err)
	}
	if outcome != want {
		t.Fatalf("Claim(%s) = %s, want %s (record %+v)", r, outcome, want, c.Record)
	}
	return c
}

func mustLookup(t *testing.T, s *ledger.Store, r ledger.ObjectRef) *ledger.Record {
	t.Helper()
	rec, err := s.Lookup(context.Background(), r)
	if err != nil {
		t.Fatalf("Lookup(%s): %v", r, err)
	}
	if rec == nil {
		t.Fatalf("Lookup(%s): no record", r)
	}
	return rec
}

func ptr(f float64) *float64 { return &f }

func TestClaimAcquiresAbsentObject(t *testing.T) {
	s, _, _, _ := newStore(t)
	ctx := context.Background()
	r := ref("a.jpg")

	if rec, err := s.Lookup(ctx, r); err != nil || rec != nil {
		t.Fatalf("Lookup before claim = %+v, %v; want nil, nil", rec, err)
	}
	c := mustClaim(t, s, r, ledger.ClaimAcquired)
	if c.Token == "" || !c.Acquired() {
		t.Fatalf("acquired claim has no token: %+v", c)
	}
	if want := start.Add(time.Minute).Truncate(time.Second).Add(time.Second); !c.LeaseUntil.Equal(want) {
		t.Errorf("LeaseUntil = %s, want %s (rounded up to a second)", c.LeaseUntil, want)
	}

	rec := mustLookup(t, s, r)
	want := ledger.Record{
		PK: "OBJ#uploads#a.jpg", SK: "V#v1",
		Bucket: "uploads", Key: "a.jpg", VersionID: "v1", ETag: `"0123abcd"`,
		Status: ledger.StatusInProgress, Phase: ledger.PhaseCalling,
		Owner: c.Token, LeaseUntil: c.LeaseUntil, Attempts: 1,
		CreatedAt: start, UpdatedAt: start, // no status_day: a claim is not in the by-status index
	}
	if !reflect.DeepEqual(normalize(*rec), normalize(want)) {
		t.Errorf("record after claim:\n got %+v\nwant %+v", normalize(*rec), normalize(want))
	}
}

// normalize makes times comparable with reflect.DeepEqual.
func normalize(r ledger.Record) ledger.Record {
	for _, tp := range []*time.Time{&r.LeaseUntil, &r.CreatedAt, &r.UpdatedAt, &r.ExpiresAt} {
		if !tp.IsZero() {
			*tp = tp.UTC()
		}
	}
	return r
}

func TestConcurrentClaimsExactlyOneAcquires(t *testing.T) {
	s, _, _, _ := newStore(t)
	const workers = 20
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		outcomes = map[ledger.ClaimOutcome]int{}
		tokens   []string
	)
	startLine := make(chan struct{})
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-startLine
			c, outcome, err := s.Claim(context.Background(), ref("race.jpg"), time.Minute)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("Claim: %v", err)
				return
			}
			outcomes[outcome]++
			if c.Acquired() {
				tokens = append(tokens, c.Token)
			}
		}()
	}
	close(startLine)
	wg.Wait()
	if outcomes[ledger.ClaimAcquired] != 1 || outcomes[ledger.ClaimBusy] != workers-1 {
		t.Fatalf("outcomes = %v, want 1 acquired and %d busy", outcomes, workers-1)
	}
	if rec := mustLookup(t, s, ref("race.jpg")); rec.Owner != tokens[0] || rec.Attempts != 1 {
		t.Errorf("record owner %q attempts %d, want the winner %q and 1 attempt", rec.Owner, rec.Attempts, tokens[0])
	}
}

func TestClaimAfterEachFinish(t *testing.T) {
	tests := []struct {
		name        string
		finish      func(*ledger.Store, *ledger.Claim) error
		wantOutcome ledger.ClaimOutcome
	}{
		{"complete", func(s *ledger.Store, c *ledger.Claim) error {
			return s.Complete(context.Background(), c, ledger.Record{PredictionID: "p-1"})
		}, ledger.ClaimDone},
		{"final failure", func(s *ledger.Store, c *ledger.Claim) error {
			return s.Fail(context.Background(), c, "unauthorized", "401 from service", false)
		}, ledger.ClaimDone},
		{"retryable failure", func(s *ledger.Store, c *ledger.Claim) error {
			return s.Fail(context.Background(), c, "rate_limited", "429 from service", true)
		}, ledger.ClaimAcquired},
		{"no finish, lease live", func(*ledger.Store, *ledger.Claim) error { return nil }, ledger.ClaimBusy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _, _ := newStore(t)
			first := mustClaim(t, s, ref("x.jpg"), ledger.ClaimAcquired)
			if err := tt.finish(s, first); err != nil {
				t.Fatalf("finish: %v", err)
			}
			second := mustClaim(t, s, ref("x.jpg"), tt.wantOutcome)
			if tt.wantOutcome != ledger.ClaimAcquired {
				if second.Acquired() {
					t.Errorf("a %s claim carries a token", tt.wantOutcome)
				}
				if second.Record == nil || second.Record.Owner != first.Token {
					t.Errorf("refused claim should carry the existing record, got %+v", second.Record)
				}
				return
			}
			rec := mustLookup(t, s, ref("x.jpg"))
			if rec.Attempts != 2 || rec.Owner != second.Token || rec.Owner == first.Token {
				t.Errorf("reclaimed record: attempts %d owner %q, want 2 and the new token", rec.Attempts, rec.Owner)
			}
			if rec.ErrorCode != "" || rec.ErrorMessage != "" || rec.Retryable {
				t.Errorf("reclaim kept failure fields: %+v", rec)
			}
		})
	}
}

func TestCompleteStoresResult(t *testing.T) {
	s, _, _, _ := newStore(t)
	c := mustClaim(t, s, ref("paris.jpg"), ledger.ClaimAcquired)
	result := ledger.Record{
		Size: 2048, ContentType: "image/jpeg",
		ModelID: "global-v3", RequestedModelID: "global-v2", Fallback: true,
		PredictionID: "6f1c2f2e-0000-4000-8000-000000000001", CreditsConsumed: 1, ResultType: "coordinates",
		Place: "Paris", Admin1: "Île-de-France", CountryCode: "FR",
		Latitude: ptr(0), Longitude: ptr(2.35), RadiusKM: ptr(12.5),
		Clusters: []ledger.Cluster{
			{Latitude: 0, Longitude: 2.35, Name: "Paris", Admin1: "Île-de-France", CountryCode: "FR", RadiusKM: ptr(12.5)},
			{Latitude: 45.76, Longitude: 4.84, Name: "Lyon", CountryCode: "FR"},
		},
		ProcessingMS: 840, RoundTripMS: 1210,
		// Identity and bookkeeping in a result are ignored.
		Bucket: "other", Status: ledger.StatusFailed, Owner: "forged", Attempts: 99, ErrorCode: "x",
	}
	if err := s.Complete(context.Background(), c, result); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	got := mustLookup(t, s, ref("paris.jpg"))
	want := result
	want.PK, want.SK, want.Bucket, want.Key, want.VersionID, want.ETag = "OBJ#uploads#paris.jpg", "V#v1", "uploads", "paris.jpg", "v1", `"0123abcd"`
	want.Status, want.Owner, want.Attempts, want.ErrorCode = ledger.StatusSucceeded, c.Token, 1, ""
	want.CreatedAt, want.UpdatedAt, want.StatusDay = start, start, "succeeded#2026-03-14"
	want.EventType = "Photo Geolocated"
	if !reflect.DeepEqual(normalize(*got), normalize(want)) {
		t.Errorf("completed record:\n got %+v\nwant %+v", normalize(*got), normalize(want))
	}
	if got.Latitude == nil || *got.Latitude != 0 {
		t.Errorf("a latitude of 0 must survive, got %v", got.Latitude)
	}
}

func TestCompleteBoundsRawResult(t *testing.T) {
	s, _, _, _ := newStore(t)
	c := mustClaim(t, s, ref("raw.jpg"), ledger.ClaimAcquired)
	raw := strings.Repeat("é", ledger.MaxRawResultBytes) // 2 bytes each: twice the bound
	if err := s.Complete(context.Background(), c, ledger.Record{ResultType: "vehicle", RawResult: raw}); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	got := mustLookup(t, s, ref("raw.jpg")).RawResult
	if len(got) != ledger.MaxRawResultBytes || !strings.HasPrefix(raw, got) {
		t.Errorf("raw result of %d bytes stored as %d bytes, want a %d-byte prefix", len(raw), len(got), ledger.MaxRawResultBytes)
	}
}

func TestStaleAttemptCannotOverwrite(t *testing.T) {
	s, _, _, _ := newStore(t)
	ctx := context.Background()
	stale := mustClaim(t, s, ref("slow.jpg"), ledger.ClaimAcquired)
	if err := s.Fail(ctx, stale, "throttled", "429", true); err != nil {
		t.Fatalf("Fail: %v", err)
	}
	fresh := mustClaim(t, s, ref("slow.jpg"), ledger.ClaimAcquired)

	if err := s.Complete(ctx, stale, ledger.Record{PredictionID: "stale"}); !errors.Is(err, ledger.ErrClaimLost) {
		t.Errorf("stale Complete: err = %v, want ErrClaimLost", err)
	}
	if err := s.Fail(ctx, stale, "boom", "stale failure", true); !errors.Is(err, ledger.ErrClaimLost) {
		t.Errorf("stale Fail: err = %v, want ErrClaimLost", err)
	}
	rec := mustLookup(t, s, ref("slow.jpg"))
	if rec.Status != ledger.StatusInProgress || rec.Owner != fresh.Token || rec.PredictionID != "" {
		t.Fatalf("stale writes changed the record: %+v", rec)
	}
	if err := s.Complete(ctx, fresh, ledger.Record{PredictionID: "fresh"}); err != nil {
		t.Fatalf("fresh Complete: %v", err)
	}
}

func TestFailNeverUndoesSuccess(t *testing.T) {
	s, _, _, _ := newStore(t)
	ctx := context.Background()
	c := mustClaim(t, s, ref("ok.jpg"), ledger.ClaimAcquired)
	if err := s.Complete(ctx, c, ledger.Record{PredictionID: "p"}); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	// Completing again (a retried write) is harmless...
	if err := s.Complete(ctx, c, ledger.Record{PredictionID: "p"}); err != nil {
		t.Fatalf("repeated Complete: %v", err)
	}
	// ...but a failure must not reopen a paid-for object.
	if err := s.Fail(ctx, c, "timeout", "response lost", true); !errors.Is(err, ledger.ErrClaimLost) {
		t.Fatalf("Fail after Complete: err = %v, want ErrClaimLost", err)
	}
	if rec := mustLookup(t, s, ref("ok.jpg")); rec.Status != ledger.StatusSucceeded || rec.PredictionID != "p" {
		t.Fatalf("record = %+v, want the success kept", rec)
	}
	mustClaim(t, s, ref("ok.jpg"), ledger.ClaimDone)
}

func TestCompleteAndFailNeedAnAcquiredClaim(t *testing.T) {
	s, _, _, _ := newStore(t)
	ctx := context.Background()
	mustClaim(t, s, ref("busy.jpg"), ledger.ClaimAcquired)
	busy := mustClaim(t, s, ref("busy.jpg"), ledger.ClaimBusy)
	if err := s.Complete(ctx, busy, ledger.Record{}); !errors.Is(err, ledger.ErrNotAcquired) {
		t.Errorf("Complete with a busy claim: err = %v, want ErrNotAcquired", err)
	}
	if err := s.Fail(ctx, busy, "x", "y", true); !errors.Is(err, ledger.ErrNotAcquired) {
		t.Errorf("Fail with a busy claim: err = %v, want ErrNotAcquired", err)
	}
}

func TestExpiredLeaseIsNeverCalledAgain(t *testing.T) {
	s, clk, _, _ := newStore(t)
	ctx := context.Background()
	crashed := mustClaim(t, s, ref("crash.jpg"), ledger.ClaimAcquired)

	clk.Advance(30 * time.Second)
	mustClaim(t, s, ref("crash.jpg"), ledger.ClaimBusy)

	clk.Advance(2 * time.Minute)
	expired := mustClaim(t, s, ref("crash.jpg"), ledger.ClaimExpired)
	if expired.Acquired() || expired.Record.Owner != crashed.Token {
		t.Fatalf("expired claim = %+v, want no token and the crashed owner's record", expired)
	}
	if err := s.MarkOutcomeUnknown(ctx, expired.Record); err != nil {
		t.Fatalf("MarkOutcomeUnknown: %v", err)
	}
	rec := mustLookup(t, s, ref("crash.jpg"))
	if rec.Status != ledger.StatusFailed || rec.Retryable || rec.ErrorCode != ledger.ErrorCodeOutcomeUnknown {
		t.Fatalf("record = %+v, want failed, not retryable, outcome_unknown", rec)
	}
	if rec.Phase != "" || !rec.LeaseUntil.IsZero() {
		t.Errorf("finalised record keeps phase %q lease %s", rec.Phase, rec.LeaseUntil)
	}
	mustClaim(t, s, ref("crash.jpg"), ledger.ClaimDone)

	// Marking twice (a redelivery racing the first) is a no-op.
	if err := s.MarkOutcomeUnknown(ctx, expired.Record); err != nil {
		t.Errorf("second MarkOutcomeUnknown: %v", err)
	}
	// The stalled attempt finally gets its paid answer: the truth lands.
	if err := s.Complete(ctx, crashed, ledger.Record{PredictionID: "late"}); err != nil {
		t.Fatalf("late Complete of the original claim: %v", err)
	}
	if rec := mustLookup(t, s, ref("crash.jpg")); rec.Status != ledger.StatusSucceeded || rec.PredictionID != "late" {
		t.Errorf("record = %+v, want the late success", rec)
	}
}

func TestMarkOutcomeUnknownNeedsAnExpiredLease(t *testing.T) {
	s, clk, _, _ := newStore(t)
	ctx := context.Background()
	mustClaim(t, s, ref("renewed.jpg"), ledger.ClaimAcquired)
	clk.Advance(2 * time.Minute)
	expired := mustClaim(t, s, ref("renewed.jpg"), ledger.ClaimExpired)

	// Another process's clock (or ours) says the lease is live after all.
	clk.Advance(-2 * time.Minute)
	if err := s.MarkOutcomeUnknown(ctx, expired.Record); !errors.Is(err, ledger.ErrClaimLost) {
		t.Fatalf("MarkOutcomeUnknown on a live lease: err = %v, want ErrClaimLost", err)
	}
	if rec := mustLookup(t, s, ref("renewed.jpg")); rec.Status != ledger.StatusInProgress {
		t.Fatalf("record = %+v, want it still in progress", rec)
	}
	if err := s.MarkOutcomeUnknown(ctx, &ledger.Record{Status: ledger.StatusSucceeded}); err == nil {
		t.Error("MarkOutcomeUnknown accepted a record that is not an expired claim")
	}
}

func TestReject(t *testing.T) {
	s, _, _, _ := newStore(t)
	ctx := context.Background()
	info := ledger.ObjectInfo{Size: 0, ContentType: "application/x-directory"}

	t.Run("absent", func(t *testing.T) {
		if err := s.Reject(ctx, ref("folder/"), "folder_marker", "key ends with /", info); err != nil {
			t.Fatalf("Reject: %v", err)
		}
		rec := mustLookup(t, s, ref("folder/"))
		if rec.Status != ledger.StatusRejected || rec.ErrorCode != "folder_marker" || rec.ErrorMessage != "key ends with /" ||
			rec.ContentType != info.ContentType || rec.StatusDay != "rejected#2026-03-14" {
			t.Fatalf("record = %+v", rec)
		}
		mustClaim(t, s, ref("folder/"), ledger.ClaimDone)
		if err := s.Reject(ctx, ref("folder/"), "folder_marker", "again", info); err != nil {
			t.Errorf("repeated Reject: %v", err)
		}
	})
	t.Run("never overwrites success", func(t *testing.T) {
		c := mustClaim(t, s, ref("good.jpg"), ledger.ClaimAcquired)
		if err := s.Complete(ctx, c, ledger.Record{PredictionID: "paid"}); err != nil {
			t.Fatal(err)
		}
		if err := s.Reject(ctx, ref("good.jpg"), "too_large", "11 MB", ledger.ObjectInfo{Size: 11 << 20}); err != nil {
			t.Fatalf("Reject over success: %v, want nil (no-op)", err)
		}
		if rec := mustLookup(t, s, ref("good.jpg")); rec.Status != ledger.StatusSucceeded || rec.PredictionID != "paid" || rec.Size != 0 {
			t.Fatalf("Reject changed a success: %+v", rec)
		}
	})
	t.Run("in progress", func(t *testing.T) {
		mustClaim(t, s, ref("busy.jpg"), ledger.ClaimAcquired)
		if err := s.Reject(ctx, ref("busy.jpg"), "not_image", "", info); !errors.Is(err, ledger.ErrInProgress) {
			t.Fatalf("Reject of a claimed object: err = %v, want ErrInProgress", err)
		}
	})
	t.Run("after retryable failure", func(t *testing.T) {
		c := mustClaim(t, s, ref("flaky.jpg"), ledger.ClaimAcquired)
		if err := s.Fail(ctx, c, "s3_read", "connection reset", true); err != nil {
			t.Fatal(err)
		}
		if err := s.Reject(ctx, ref("flaky.jpg"), "not_image", "text/plain", ledger.ObjectInfo{Size: 10, ContentType: "text/plain"}); err != nil {
			t.Fatalf("Reject: %v", err)
		}
		rec := mustLookup(t, s, ref("flaky.jpg"))
		if rec.Status != ledger.StatusRejected || rec.Owner != "" || rec.Retryable || rec.Attempts != 1 || rec.Size != 10 {
			t.Fatalf("record = %+v, want rejected, no owner, attempts kept", rec)
		}
	})
}

func TestKeysAreExactAndDistinct(t *testing.T) {
	s, _, _, _ := newStore(t)
	ctx := context.Background()
	keys := []string{
		"with space.jpg",
		"with+plus.jpg", // must not collide with "with space.jpg" (S3 events encode space as +)
		"percent%20encoded.jpg",
		"ünïcødé/東京/фото.jpg",
		"emoji 📷.heic",
		"a#b#c.jpg", // separators inside the key
		strings.Repeat("k", 1000),
	}
	for i, key := range keys {
		c := mustClaim(t, s, ref(key), ledger.ClaimAcquired)
		if err := s.Complete(ctx, c, ledger.Record{PredictionID: fmt.Sprint(i)}); err != nil {
			t.Fatalf("Complete(%q): %v", key, err)
		}
	}
	for i, key := range keys {
		rec := mustLookup(t, s, ref(key))
		if rec.Key != key || rec.PredictionID != fmt.Sprint(i) || rec.PK != "OBJ#uploads#"+key {
			t.Errorf("key %q: record key %q prediction %q pk %q", key, rec.Key, rec.PredictionID, rec.PK)
		}
	}
}

func TestSortKey(t *testing.T) {
	tests := []struct {
		ref  ledger.ObjectRef
		want string
	}{
		{ledger.ObjectRef{VersionID: "3HL4kqtJlcpXroDTDmJ", ETag: `"abc"`}, "V#3HL4kqtJlcpXroDTDmJ"},
		{ledger.ObjectRef{ETag: `"d41d8cd98f00b204e9800998ecf8427e"`}, "V#d41d8cd98f00b204e9800998ecf8427e"},
		{ledger.ObjectRef{ETag: "unquoted-2"}, "V#unquoted-2"},
		{ledger.ObjectRef{VersionID: "null", ETag: `"abc"`}, "V#abc"},
		{ledger.ObjectRef{VersionID: "null"}, "V#null"},
		{ledger.ObjectRef{}, "V#null"},
	}
	for _, tt := range tests {
		if got := tt.ref.SortKey(); got != tt.want {
			t.Errorf("%+v.SortKey() = %q, want %q", tt.ref, got, tt.want)
		}
	}
}

func TestRecordTTL(t *testing.T) {
	s, _, _, _ := newStore(t, func(o *ledger.Options) { o.RecordTTL = 30 * 24 * time.Hour })
	ctx := context.Background()
	c := mustClaim(t, s, ref("ttl.jpg"), ledger.ClaimAcquired)
	if err := s.Complete(ctx, c, ledger.Record{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Reject(ctx, ref("ttl-rejected.jpg"), "empty", "", ledger.ObjectInfo{}); err != nil {
		t.Fatal(err)
	}
	want := start.Add(30 * 24 * time.Hour).Unix()
	for _, key := range []string{"ttl.jpg", "ttl-rejected.jpg"} {
		if got := mustLookup(t, s, ref(key)).ExpiresAt.Unix(); got != want {
			t.Errorf("%s expires_at = %d, want %d", key, got, want)
		}
	}

	noTTL, _, _, _ := newStore(t)
	mustClaim(t, noTTL, ref("forever.jpg"), ledger.ClaimAcquired)
	if rec := mustLookup(t, noTTL, ref("forever.jpg")); !rec.ExpiresAt.IsZero() {
		t.Errorf("without RecordTTL expires_at = %s, want none", rec.ExpiresAt)
	}
}

func TestReopenOnlyAFinalFailureWithThatCode(t *testing.T) {
	s, clk, _, _ := newStore(t)
	ctx := context.Background()

	// Absent, in progress and succeeded records cannot be reopened.
	if err := s.Reopen(ctx, ref("absent.jpg"), ledger.ErrorCodeOutcomeUnknown); !errors.Is(err, ledger.ErrNotReopenable) {
		t.Errorf("absent: err = %v, want ErrNotReopenable", err)
	}
	done := mustClaim(t, s, ref("done.jpg"), ledger.ClaimAcquired)
	if err := s.Reopen(ctx, ref("done.jpg"), ledger.ErrorCodeOutcomeUnknown); !errors.Is(err, ledger.ErrNotReopenable) {
		t.Errorf("in progress: err = %v, want ErrNotReopenable", err)
	}
	if err := s.Complete(ctx, done, ledger.Record{PredictionID: "p"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Reopen(ctx, ref("done.jpg"), ledger.ErrorCodeOutcomeUnknown); !errors.Is(err, ledger.ErrNotReopenable) {
		t.Errorf("succeeded: err = %v, want ErrNotReopenable", err)
	}

	// An outcome_unknown record becomes claimable once, by deliberate choice.
	mustClaim(t, s, ref("lost.jpg"), ledger.ClaimAcquired)
	clk.Advance(time.Hour)
	expired := mustClaim(t, s, ref("lost.jpg"), ledger.ClaimExpired)
	if err := s.MarkOutcomeUnknown(ctx, expired.Record); err != nil {
		t.Fatal(err)
	}
	if err := s.Reopen(ctx, ref("lost.jpg"), "malformed_response"); !errors.Is(err, ledger.ErrNotReopenable) {
		t.Errorf("other code: err = %v, want ErrNotReopenable", err)
	}
	if err := s.Reopen(ctx, ref("lost.jpg"), ledger.ErrorCodeOutcomeUnknown); err != nil {
		t.Fatalf("Reopen: %v", err)
	}
	if rec := mustLookup(t, s, ref("lost.jpg")); rec.Status != ledger.StatusWaiting || !rec.Retryable {
		t.Fatalf("record = %+v, want waiting and retryable", rec)
	}
	mustClaim(t, s, ref("lost.jpg"), ledger.ClaimAcquired)
}

// TestReleaseHoldsASlotForTheNextClaim: a claim given back with a slot
// leaves the record waiting with it; the next claim sees the slot; what
// ends that claim (a result, a rejection, a release without a slot) drops
// it.
func TestReleaseHoldsASlotForTheNextClaim(t *testing.T) {
	s, _, _, _ := newStore(t)
	ctx := context.Background()
	slot := start.Add(90*time.Second + 123456789*time.Nanosecond)
	for _, end := range []struct {
		name string
		do   func(c *ledger.Claim) error
	}{
		{"complete", func(c *ledger.Claim) error { return s.Complete(ctx, c, ledger.Record{Place: "Lisbon"}) }},
		{"reject", func(c *ledger.Claim) error {
			return s.RejectClaimed(ctx, c, "not_an_image", "no", ledger.ObjectInfo{})
		}},
		{"release without a slot", func(c *ledger.Claim) error { return s.Release(ctx, c, "storage_error", "S3", time.Time{}) }},
	} {
		r := ref("held-" + end.name + ".jpg")
		c := mustClaim(t, s, r, ledger.ClaimAcquired)
		if err := s.Release(ctx, c, "rate_wait_timeout", "slot 90 s ahead", slot); err != nil {
			t.Fatal(err)
		}
		rec := mustLookup(t, s, r)
		if rec.Status != ledger.StatusWaiting || !rec.Retryable || rec.ErrorCode != "rate_wait_timeout" || !rec.SlotAt.Equal(slot) {
			t.Fatalf("%s: record after the release = %+v, want waiting and holding %v", end.name, rec, slot)
		}
		again := mustClaim(t, s, r, ledger.ClaimAcquired)
		if !again.Record.SlotAt.Equal(slot) {
			t.Fatalf("%s: the next claim sees slot %v, want %v", end.name, again.Record.SlotAt, slot)
		}
		if err := end.do(again); err != nil {
			t.Fatal(err)
		}
		if rec := mustLookup(t, s, r); !rec.SlotAt.IsZero() {
			t.Errorf("%s: the slot %v is still held after the claim ended", end.name, rec.SlotAt)
		}
	}
}
