package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// A claim keeps the record out of the by-status index (each paid photo
// would otherwise pay three more index writes); the status it ends in puts
// it back, and a re-claim of a waiting record takes it out again.
func TestClaimIsNotInTheStatusIndex(t *testing.T) {
	s, clk, client, table := newStore(t)
	ctx := context.Background()
	inIndex := func(status string) []string {
		t.Helper()
		out, err := client.Query(ctx, &dynamodb.QueryInput{
			TableName:                aws.String(table),
			IndexName:                aws.String(tableschema.StatusIndex),
			KeyConditionExpression:   aws.String("#p = :p"),
			ExpressionAttributeNames: map[string]string{"#p": tableschema.StatusIndexPartitionKey},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":p": &types.AttributeValueMemberS{Value: status + "#" + ledger.Day(clk.Now())},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, it := range out.Items {
			keys = append(keys, it["key"].(*types.AttributeValueMemberS).Value)
		}
		return keys
	}

	c := mustClaim(t, s, ref("a.jpg"), ledger.ClaimAcquired)
	if got := inIndex(ledger.StatusInProgress); len(got) != 0 {
		t.Fatalf("claimed record in the index: %q", got)
	}
	if err := s.Release(ctx, c, "rate_limited", "429", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if got := inIndex(ledger.StatusWaiting); len(got) != 1 {
		t.Fatalf("waiting record not in the index once: %q", got)
	}
	clk.Advance(time.Minute)
	c = mustClaim(t, s, ref("a.jpg"), ledger.ClaimAcquired)
	if got := inIndex(ledger.StatusWaiting); len(got) != 0 {
		t.Fatalf("re-claimed record still in the index as waiting: %q", got)
	}
	if err := s.Complete(ctx, c, ledger.Record{PredictionID: "p1"}); err != nil {
		t.Fatal(err)
	}
	if got := inIndex(ledger.StatusSucceeded); len(got) != 1 || got[0] != "a.jpg" {
		t.Fatalf("succeeded record in the index: %q, want [a.jpg]", got)
	}
}
