package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsfault"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
)

// lostAnswerStore is a store whose DynamoDB client reaches DynamoDB Local
// through an awsfault proxy, with the SDK's default retries: when the proxy
// loses the answer to a write it applied, the SDK sends the same write
// again.
func lostAnswerStore(t *testing.T) (*ledger.Store, *ledger.Store, *awsfault.Proxy) {
	t.Helper()
	direct, table := awspartstest.DynamoDB(t)
	p, err := awsfault.Start(awsfault.DynamoDB, aws.ToString(direct.Options().BaseEndpoint), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	viaProxy := dynamodb.NewFromConfig(aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDFAKEFAKEFAKE", "fake-secret", ""),
		BaseEndpoint: aws.String(p.URL()),
	})
	clk := simclock.New(start)
	return ledger.New(viaProxy, table, func(o *ledger.Options) { o.Clock = clk.Now }),
		ledger.New(direct, table, func(o *ledger.Options) { o.Clock = clk.Now }), p
}

// TestWritesWhoseAnswerWasLost: every ledger write, applied by DynamoDB and
// then retried by the SDK because its answer was lost, is recognised as
// applied: it reports success and its effect counts once.
func TestWritesWhoseAnswerWasLost(t *testing.T) {
	ctx := context.Background()
	s, direct, p := lostAnswerStore(t)
	loseNext := func(op string) { p.SetRules(awsfault.At(1, awsfault.LostAnswer).On(op).Times(1)) }
	injected := func(op string) {
		t.Helper()
		if n := p.Stats().Injected[op+": answer lost"]; n == 0 {
			t.Fatalf("no %s answer was lost", op)
		}
		p.SetRules()
	}

	loseNext("UpdateItem")
	c, outcome, err := s.Claim(ctx, ref("claim.jpg"), time.Minute)
	injected("UpdateItem")
	if err != nil || outcome != ledger.ClaimAcquired || c.Attempt != 1 {
		t.Fatalf("claim whose answer was lost: %v, %s, attempt %d; want acquired, attempt 1", err, outcome, c.Attempt)
	}

	loseNext("PutItem")
	if err := s.Complete(ctx, c, ledger.Record{CreditsConsumed: 1}); err != nil {
		t.Fatalf("complete whose answer was lost: %v", err)
	}
	injected("PutItem")
	if rec := mustLookup(t, direct, ref("claim.jpg")); rec.Status != ledger.StatusSucceeded || rec.Attempts != 1 {
		t.Errorf("record %s, attempts %d", rec.Status, rec.Attempts)
	}

	c2 := mustClaim(t, s, ref("fail.jpg"), ledger.ClaimAcquired)
	loseNext("UpdateItem")
	if err := s.Fail(ctx, c2, ledger.ErrorCodeOutcomeUnknown, "answer lost", false); err != nil {
		t.Fatalf("fail whose answer was lost: %v", err)
	}
	injected("UpdateItem")

	c3 := mustClaim(t, s, ref("reject.jpg"), ledger.ClaimAcquired)
	loseNext("UpdateItem")
	if err := s.RejectClaimed(ctx, c3, "not_an_image", "text", ledger.ObjectInfo{Size: 4}); err != nil {
		t.Fatalf("reject whose answer was lost: %v", err)
	}
	injected("UpdateItem")

	loseNext("UpdateItem")
	if err := s.MarkWaiting(ctx, ref("waiting.jpg"), "key_unavailable", "throttled", false); err != nil {
		t.Fatalf("mark waiting whose answer was lost: %v", err)
	}
	injected("UpdateItem")

	// The daily counter: a reservation or a release applied twice would
	// leave the budget wrong for the rest of the day.
	day := ledger.Day(start)
	counter := func(want int) {
		t.Helper()
		if got, err := direct.CreditsReserved(ctx, day); err != nil || got != want {
			t.Errorf("credits reserved %d (%v); want %d", got, err, want)
		}
	}
	if ok, err := s.ReserveCredits(ctx, day, 3, 10); err != nil || !ok {
		t.Fatalf("reserve: %v, %v", ok, err)
	}
	loseAny := func() { p.SetRules(awsfault.At(1, awsfault.LostAnswer).Times(1)) }
	lost := func() int {
		n := 0
		for _, v := range p.Stats().Injected {
			n += v
		}
		return n
	}
	before := lost()
	loseAny()
	if ok, err := s.ReserveCredits(ctx, day, 2, 10); err != nil || !ok {
		t.Fatalf("reserve whose answer was lost: %v, %v", ok, err)
	}
	counter(5)
	loseAny()
	if err := s.ReleaseCredits(ctx, day, 2); err != nil {
		t.Fatalf("release whose answer was lost: %v", err)
	}
	counter(3)
	if lost()-before != 2 {
		t.Errorf("%d answers lost; want the 2 counter writes to lose theirs", lost()-before)
	}
}
