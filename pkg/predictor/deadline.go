package predictor

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// Lambda freezes the execution environment at the invocation's deadline and
// kills it on a timeout: nothing written after the deadline happens. So the
// invocation's time is split, for every object:
//
//	claim, budget, rate wait | paid call and its retries | record the outcome | post the response
//	                         ^ start only with MinCallTime left before the call deadline
//	                                                     ^ call deadline = deadline - FinishReserve
//	                                                                          ^ deadline - responseMargin
//
// An object or a retry that cannot get MinCallTime is not started: its
// message goes back to the queue untouched, which costs nothing.

// responseMargin is kept after the finishing writes to post the response to
// the Runtime API.
const responseMargin = 500 * time.Millisecond

// errNoTimeToRetry stops a retry that could not finish before the call
// deadline: the last (free) error stands and the object waits.
var errNoTimeToRetry = errors.New("not enough time left before the invocation deadline for another attempt")

// callDeadline is when the paid call and its retries must have ended: the
// invocation's deadline less FinishReserve.
func (inv *invocation) callDeadline() (time.Time, bool) {
	if inv.deadline.IsZero() {
		return time.Time{}, false
	}
	return inv.deadline.Add(-inv.h.cfg.FinishReserve), true
}

// timeToCall reports whether a call started now would get at least
// MinCallTime before the call deadline.
func (inv *invocation) timeToCall() bool {
	dl, ok := inv.callDeadline()
	return !ok || dl.Sub(inv.now()) >= inv.h.opts.MinCallTime
}

// callContext bounds the paid call and its retries by the call deadline.
// The context's timer runs in real time, for the time left on the handler's
// clock.
func (inv *invocation) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if dl, ok := inv.callDeadline(); ok {
		return context.WithTimeout(ctx, dl.Sub(inv.now()))
	}
	return context.WithCancel(ctx)
}

// finishContext is for the ledger writes that end a claim: detached from the
// invocation's cancellation, so a call cut off at the call deadline is still
// recorded, but ending before the invocation's deadline (less the margin to
// post the response), because Lambda runs nothing after it. Without a
// deadline (local runs) it is bounded by finishTimeout.
func finishContext(ctx context.Context) (context.Context, context.CancelFunc) {
	base := context.WithoutCancel(ctx)
	if dl, ok := ctx.Deadline(); ok {
		return context.WithDeadline(base, dl.Add(-responseMargin))
	}
	return context.WithTimeout(base, finishTimeout)
}

// sdkRetryable is the judgement of the predictor's DynamoDB client on which
// errors are transient (dynamoDBRetryables).
var sdkRetryable = retry.IsErrorRetryables(dynamoDBRetryables)

// transient reports whether a failed AWS request may succeed if repeated:
// what the SDK retries (throttling, 5xx, connection errors), and any error
// that is not a request refused by the service as the client's fault (a
// validation error will not change).
func transient(err error) bool {
	switch sdkRetryable.IsErrorRetryable(err) {
	case aws.TrueTernary:
		return true
	case aws.FalseTernary:
		return false
	}
	var apiErr smithy.APIError
	return !errors.As(err, &apiErr) || apiErr.ErrorFault() != smithy.FaultClient
}

// persist runs a ledger write that ends a claim until it lands, the claim is
// lost, the error is one a retry cannot fix, or the finishing window closes.
// The SDK already retries a few times within one call; this outlasts a
// longer burst of throttling or 5xx, because the write may be the only
// record of a paid result. The writes are conditional on the claim's owner
// token, so a retry of a write that landed is recognised as applied.
func (inv *invocation) persist(ctx context.Context, obj *object, what string, write func(context.Context) error) error {
	delay := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := write(ctx)
		if err == nil || errors.Is(err, ledger.ErrClaimLost) || errors.Is(err, ledger.ErrResultReduced) ||
			ctx.Err() != nil || !transient(err) {
			return err
		}
		wait := delay/2 + rand.N(delay/2+1)
		obj.logger.Warn("ledger write failed: retrying within the finishing window", "write", what,
			"attempt", attempt, "wait_ms", wait.Milliseconds(), "error", err)
		if inv.sleep(ctx, wait) != nil {
			return err
		}
		delay = min(delay*2, 2*time.Second)
	}
}
