package ledger_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// itemAttributes lists the attribute names of the stored item of r.
func itemAttributes(t *testing.T, client *dynamodb.Client, table string, r ledger.ObjectRef) []string {
	t.Helper()
	out, err := client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName:      aws.String(table),
		Key:            ledgerKey(r),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatalf("GetItem(%s): %v", r, err)
	}
	return slices.Sorted(maps.Keys(out.Item))
}

func TestRejectClaimedWritesWhatRejectWrites(t *testing.T) {
	s, _, client, table := newStore(t)
	ctx := context.Background()
	info := ledger.ObjectInfo{Size: 52, ContentType: "text/plain"}

	// The reference: Reject over a record a claim has already touched, so
	// both records carry the same bookkeeping (created_at, attempts).
	c := mustClaim(t, s, ref("rejected.txt"), ledger.ClaimAcquired)
	if err := s.Fail(ctx, c, "storage_error", "connection reset", true); err != nil {
		t.Fatal(err)
	}
	if err := s.Reject(ctx, ref("rejected.txt"), "not_an_image", "plain text", info); err != nil {
		t.Fatalf("Reject: %v", err)
	}

	claimed := mustClaim(t, s, ref("claimed.txt"), ledger.ClaimAcquired)
	if err := s.RejectClaimed(ctx, claimed, "not_an_image", "plain text", info); err != nil {
		t.Fatalf("RejectClaimed: %v", err)
	}

	want := itemAttributes(t, client, table, ref("rejected.txt"))
	got := itemAttributes(t, client, table, ref("claimed.txt"))
	if !slices.Equal(got, want) {
		t.Errorf("RejectClaimed item has attributes\n%v\nReject's has\n%v", got, want)
	}
	rec := mustLookup(t, s, ref("claimed.txt"))
	if rec.Status != ledger.StatusRejected || rec.ErrorCode != "not_an_image" || rec.ErrorMessage != "plain text" ||
		rec.Size != info.Size || rec.ContentType != info.ContentType || rec.StatusDay != "rejected#2026-03-14" ||
		rec.Owner != "" || rec.Phase != "" || !rec.LeaseUntil.IsZero() || rec.Retryable || rec.Attempts != 1 {
		t.Fatalf("record = %+v", rec)
	}
	// Final: a redelivery is a no-op, and a retried write of the same
	// rejection is harmless.
	mustClaim(t, s, ref("claimed.txt"), ledger.ClaimDone)
	if err := s.RejectClaimed(ctx, claimed, "not_an_image", "plain text", info); err != nil {
		t.Errorf("repeated RejectClaimed: %v", err)
	}
}

func TestRejectClaimedNeedsTheClaim(t *testing.T) {
	s, clk, _, _ := newStore(t)
	ctx := context.Background()
	info := ledger.ObjectInfo{Size: 10}

	tests := []struct {
		name string
		// setup returns the claim to reject with, leaving the record in
		// the state the test is about.
		setup    func(t *testing.T, r ledger.ObjectRef) *ledger.Claim
		wantErr  error
		wantStat string
	}{
		{
			name: "owner mismatch after a newer claim",
			setup: func(t *testing.T, r ledger.ObjectRef) *ledger.Claim {
				stale := mustClaim(t, s, r, ledger.ClaimAcquired)
				if err := s.Fail(ctx, stale, "rate_wait_timeout", "no token", true); err != nil {
					t.Fatal(err)
				}
				mustClaim(t, s, r, ledger.ClaimAcquired)
				return stale
			},
			wantErr: ledger.ErrClaimLost, wantStat: ledger.StatusInProgress,
		},
		{
			name: "never undoes a success",
			setup: func(t *testing.T, r ledger.ObjectRef) *ledger.Claim {
				c := mustClaim(t, s, r, ledger.ClaimAcquired)
				if err := s.Complete(ctx, c, ledger.Record{PredictionID: "paid"}); err != nil {
					t.Fatal(err)
				}
				return c
			},
			wantErr: ledger.ErrClaimLost, wantStat: ledger.StatusSucceeded,
		},
		{
			name: "after the lease expired into outcome_unknown",
			setup: func(t *testing.T, r ledger.ObjectRef) *ledger.Claim {
				c := mustClaim(t, s, r, ledger.ClaimAcquired)
				clk.Advance(2 * time.Minute)
				expired := mustClaim(t, s, r, ledger.ClaimExpired)
				if err := s.MarkOutcomeUnknown(ctx, expired.Record); err != nil {
					t.Fatal(err)
				}
				return c
			},
			wantErr: ledger.ErrClaimLost, wantStat: ledger.StatusFailed,
		},
		{
			name: "not acquired",
			setup: func(t *testing.T, r ledger.ObjectRef) *ledger.Claim {
				mustClaim(t, s, r, ledger.ClaimAcquired)
				return mustClaim(t, s, r, ledger.ClaimBusy)
			},
			wantErr: ledger.ErrNotAcquired, wantStat: ledger.StatusInProgress,
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ref("case-" + string(rune('a'+i)) + ".jpg")
			c := tt.setup(t, r)
			if err := s.RejectClaimed(ctx, c, "not_an_image", "text", info); !errors.Is(err, tt.wantErr) {
				t.Fatalf("RejectClaimed: err = %v, want %v", err, tt.wantErr)
			}
			if rec := mustLookup(t, s, r); rec.Status != tt.wantStat || rec.ErrorCode == "not_an_image" {
				t.Fatalf("record changed: %+v", rec)
			}
		})
	}
}

func ledgerKey(r ledger.ObjectRef) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		tableschema.PartitionKey: &types.AttributeValueMemberS{Value: r.PartitionKey()},
		tableschema.SortKey:      &types.AttributeValueMemberS{Value: r.SortKey()},
	}
}
