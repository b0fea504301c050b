package ledger_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// replayingClient sends every UpdateItem and PutItem twice and returns the
// second answer, as when the SDK retries a request whose first response
// was lost after the write landed.
type replayingClient struct{ ledger.DynamoDBAPI }

func (c replayingClient) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if _, err := c.DynamoDBAPI.UpdateItem(ctx, in, optFns...); err != nil {
		return nil, err
	}
	return c.DynamoDBAPI.UpdateItem(ctx, in, optFns...)
}

func (c replayingClient) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if _, err := c.DynamoDBAPI.PutItem(ctx, in, optFns...); err != nil {
		return nil, err
	}
	return c.DynamoDBAPI.PutItem(ctx, in, optFns...)
}

func TestRetriedWritesAreIdempotent(t *testing.T) {
	_, clk, client, table := newStore(t)
	s := ledger.New(replayingClient{client}, table, func(o *ledger.Options) { o.Clock = clk.Now })
	ctx := context.Background()

	c := mustClaim(t, s, ref("retried.jpg"), ledger.ClaimAcquired)
	if rec := mustLookup(t, s, ref("retried.jpg")); rec.Attempts != 1 || rec.Owner != c.Token {
		t.Fatalf("record = %+v, want one attempt owned by the claim", rec)
	}
	if err := s.Complete(ctx, c, ledger.Record{PredictionID: "p"}); err != nil {
		t.Fatalf("Complete: %v", err)
	}

	c2 := mustClaim(t, s, ref("retried-fail.jpg"), ledger.ClaimAcquired)
	if err := s.Fail(ctx, c2, "rate_limited", "429", true); err != nil {
		t.Fatalf("Fail: %v", err)
	}
	if err := s.Reject(ctx, ref("retried-reject.jpg"), "empty", "", ledger.ObjectInfo{}); err != nil {
		t.Fatalf("Reject: %v", err)
	}
}
