package ledger_test

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// cancellingClient cancels the first n TransactWriteItems calls with
// reason, as DynamoDB does when another transaction holds the item
// (TransactionConflict) or the partition is throttled (ThrottlingError),
// without applying them; it records every call's client request token.
type cancellingClient struct {
	ledger.DynamoDBAPI
	reason string

	mu     sync.Mutex
	n      int
	tokens []string
}

func (c *cancellingClient) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.mu.Lock()
	c.tokens = append(c.tokens, aws.ToString(in.ClientRequestToken))
	cancel := c.n > 0
	c.n--
	c.mu.Unlock()
	if cancel {
		return nil, &types.TransactionCanceledException{
			Message:             aws.String("Transaction cancelled, please refer cancellation reasons for specific reasons [" + c.reason + "]"),
			CancellationReasons: []types.CancellationReason{{Code: aws.String(c.reason), Message: aws.String("injected")}},
		}
	}
	return c.DynamoDBAPI.TransactWriteItems(ctx, in, optFns...)
}

// TestCancelledTransactionsAreRetried: a reservation or release that
// DynamoDB cancels for a conflict or throttling is sent again, each time
// with a new client request token (a repeated token might be answered
// with the old cancellation), and applied once; a failed condition still
// means "over the budget" and is not retried.
func TestCancelledTransactionsAreRetried(t *testing.T) {
	ctx := context.Background()
	const day = "2026-03-14"
	for _, reason := range []string{"TransactionConflict", "ThrottlingError"} {
		t.Run(reason, func(t *testing.T) {
			_, clk, client, table := newStore(t)
			cc := &cancellingClient{DynamoDBAPI: client, reason: reason}
			s := ledger.New(cc, table, func(o *ledger.Options) { o.Clock = clk.Now })
			direct := ledger.New(client, table, func(o *ledger.Options) { o.Clock = clk.Now })
			if _, _, err := direct.StartRun(ctx, ledger.Run{Name: "r1", Cap: 10, Price: 1}); err != nil {
				t.Fatal(err)
			}
			steps := []struct {
				name string
				do   func() error
			}{
				{"reserve", func() error {
					ok, err := s.ReserveCredits(ctx, day, 3, 5)
					if err == nil && !ok {
						t.Errorf("reservation within the budget refused")
					}
					return err
				}},
				{"release", func() error { return s.ReleaseCredits(ctx, day, 2) }},
				{"reserve run credits", func() error {
					ok, err := s.ReserveRunCredits(ctx, "r1", 4)
					if err == nil && !ok {
						t.Errorf("run reservation within the cap refused")
					}
					return err
				}},
				{"release run credits", func() error { return s.ReleaseRunCredits(ctx, "r1", 3) }},
			}
			for _, step := range steps {
				cc.mu.Lock()
				cc.n, cc.tokens = 2, nil
				cc.mu.Unlock()
				if err := step.do(); err != nil {
					t.Fatalf("%s cancelled twice (%s): %v", step.name, reason, err)
				}
				cc.mu.Lock()
				tokens := cc.tokens
				cc.mu.Unlock()
				if len(tokens) != 3 || tokens[0] == tokens[1] || tokens[1] == tokens[2] || tokens[0] == tokens[2] {
					t.Errorf("%s: tokens %q; want 3 calls, each with its own token", step.name, tokens)
				}
			}
			if used, err := direct.CreditsReserved(ctx, day); err != nil || used != 1 {
				t.Errorf("daily counter = %d, %v; want 3 reserved - 2 released = 1, each applied once", used, err)
			}
			if run, err := direct.GetRun(ctx, "r1"); err != nil || run.Spent != 1 || run.Remaining != 9 {
				t.Errorf("run = %+v, %v; want spent 1, remaining 9", run, err)
			}
			// A failed condition keeps its meaning, and is not sent again.
			cc.mu.Lock()
			cc.n, cc.tokens = 0, nil
			cc.mu.Unlock()
			if ok, err := s.ReserveCredits(ctx, day, 5, 5); ok || err != nil {
				t.Errorf("reservation past the budget: %t, %v; want false, nil", ok, err)
			}
			if len(cc.tokens) != 1 {
				t.Errorf("a failed condition was sent %d times, want once", len(cc.tokens))
			}
		})
	}
}
