package ledger

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Cancellation reason codes of a TransactWriteItems, one per item (the
// API Reference's TransactionCanceledException entry lists them). "None"
// is an item without an error in a cancelled transaction of several.
const (
	cancelConditionFailed    = "ConditionalCheckFailed"
	cancelConflict           = "TransactionConflict"
	cancelThrottling         = "ThrottlingError"
	cancelThroughputExceeded = "ProvisionedThroughputExceeded"
	cancelNone               = "None"
)

// transientReasons are the cancellations that clear by themselves: another
// transaction held the item, or the table or partition was throttled.
var transientReasons = []string{cancelConflict, cancelThrottling, cancelThroughputExceeded}

// Retries of a cancelled transaction. A conflict lasts as long as the other
// transaction (milliseconds) and throttling as long as a burst, so the
// waits start short; 20 attempts with full jitter under a 500 ms ceiling
// wait about 4 s in all at most on average (8 s at worst), within the
// predictor's finishing window, and leave a transaction cancelled on half
// of its attempts one chance in a million of failing.
const (
	DefaultTransactAttempts = 20
	transactBaseBackoff     = 20 * time.Millisecond
	transactMaxBackoff      = 500 * time.Millisecond
)

// transactWrite applies item as a one-item TransactWriteItems and reports
// whether its condition failed.
//
// Idempotency, which the daily counter and a run's credits rest on:
//   - Within one attempt the SDK may send the same request again (its
//     answer was lost, a 5xx, throttling): same input, so same client
//     request token, and "multiple identical calls have the same effect as
//     one single call" for 10 minutes after the first (DynamoDB API
//     Reference, TransactWriteItems, ClientRequestToken): a token whose
//     transaction was applied is never applied again.
//   - A cancellation means this send was not applied ("The entire
//     transaction request was canceled", API Reference,
//     TransactionCanceledException). When the token was sent once, it was
//     never applied: the next attempt sends a new token, since what a
//     repeated token returns after a cancellation is not documented (the
//     same cancellation is one reading of "the same result on the server";
//     DynamoDB Local applies it anew).
//   - When the SDK sent the token more than once, an earlier send may have
//     been applied and its answer lost, and the cancellation came to the
//     repeat: the next attempt sends the same token again, which is
//     answered as applied if it was and applied if it was not. (Should
//     DynamoDB answer a repeat with a cancellation it remembers, those
//     attempts fail and the write is reported failed: never applied twice.)
//
// A cancellation whose reasons are all transient (TransactionConflict,
// ThrottlingError, ProvisionedThroughputExceeded) is retried with backoff,
// up to Options.TransactAttempts and within ctx's deadline; a
// ConditionalCheckFailed keeps its meaning (the caller's "over the budget"
// or "more than reserved"); any other reason is an error.
func (s *Store) transactWrite(ctx context.Context, item types.TransactWriteItem) (bool, error) {
	token := rand.Text()
	// repeated: the token was sent more than once, so it may have been
	// applied; from then on only that token may be sent.
	repeated := false
	for attempt := 1; ; attempt++ {
		sends := 0
		_, err := s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
			ClientRequestToken: aws.String(token),
			TransactItems:      []types.TransactWriteItem{item},
		}, countSends(&sends))
		reasons, cancelled := cancellationReasons(err)
		switch {
		case !cancelled:
			return false, err
		case slices.Contains(reasons, cancelConditionFailed):
			return true, nil
		case !transientCancellation(reasons):
			return false, err
		case attempt >= s.opts.TransactAttempts:
			return false, fmt.Errorf("transaction cancelled %d times (%s): %w", attempt, strings.Join(reasons, ", "), err)
		}
		repeated = repeated || sends > 1
		if !repeated {
			// Every send of the token was cancelled: never applied. (0
			// sends: a client without the SDK's middleware, a test's
			// fake, which sends once.)
			token = rand.Text()
		}
		wait := mathrand.N(min(transactBaseBackoff<<(attempt-1), transactMaxBackoff) + 1)
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return false, fmt.Errorf("transaction cancelled (%s), no time left to retry: %w", strings.Join(reasons, ", "), err)
		}
		if serr := s.opts.Sleep(ctx, wait); serr != nil {
			return false, fmt.Errorf("transaction cancelled (%s), retry interrupted: %w", strings.Join(reasons, ", "), errors.Join(err, serr))
		}
	}
}

// countSends counts the HTTP requests one operation sends, its SDK
// retries included: a middleware after the retry middleware runs once per
// request.
func countSends(n *int) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(slices.Clip(o.APIOptions), func(stack *middleware.Stack) error {
			counter := middleware.FinalizeMiddlewareFunc("ledgerCountSends", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				*n++
				return next.HandleFinalize(ctx, in)
			})
			if _, ok := stack.Finalize.Get("Retry"); ok {
				return stack.Finalize.Insert(counter, "Retry", middleware.After)
			}
			return stack.Finalize.Add(counter, middleware.After)
		})
	}
}

// transientCancellation reports whether every reason is transient or
// "None" (an item without an error), with at least one transient.
func transientCancellation(reasons []string) bool {
	found := false
	for _, r := range reasons {
		switch {
		case slices.Contains(transientReasons, r):
			found = true
		case r != cancelNone:
			return false
		}
	}
	return found
}

// cancellationReasons returns the reason codes of a cancelled transaction
// and whether err is one. They come from CancellationReasons ("DynamoDB
// lists the cancellation reasons on the CancellationReasons property",
// API Reference, TransactionCanceledException; earlier versions of the
// page said so for Java only, and DynamoDB Local sends them to every SDK);
// when that is empty, from the message's bracketed list ("Transaction
// cancelled, please refer cancellation reasons for specific reasons
// [TransactionConflict]"), which DynamoDB sends beside it.
func cancellationReasons(err error) ([]string, bool) {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return nil, false
	}
	var reasons []string
	for _, r := range tce.CancellationReasons {
		code := aws.ToString(r.Code)
		if code == "" {
			code = cancelNone
		}
		reasons = append(reasons, code)
	}
	if len(reasons) > 0 {
		return reasons, true
	}
	msg := aws.ToString(tce.Message)
	open, end := strings.LastIndexByte(msg, '['), strings.LastIndexByte(msg, ']')
	if open < 0 || end < open {
		return nil, true
	}
	for r := range strings.SplitSeq(msg[open+1:end], ",") {
		reasons = append(reasons, strings.TrimSpace(r))
	}
	return reasons, true
}
