package predictor

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// A message returned for retry comes back after the queue's visibility
// timeout unless its outcome sets a delay (outcome.after): until its call
// slot, until the budget's next day, or, while something only an operator
// or time can fix lasts (no credits, no usable key), after a backoff that
// grows with each receive. Every receive counts towards the queue's
// maxReceiveCount, so a wait must cost few of them, however long it is.

// OutageBackoffBase is the first wait of a message held back by an outage
// (402, no usable key): it doubles with each receive, up to SQS's 12 hours
// from the receive. A message's receive n (n >= 7) during an outage comes
// 945 + 720(n-7) minutes after its first; with the stack's default
// maxReceiveCount of 20 a backlog of 1,000 survives an outage that ends
// before receive 18 (about 147 hours), leaving two receives to drain it
// at the service's rate (a held slot costs one). docs/waiting.md has the
// arithmetic, TestAThreeDayOutageWithABacklogDeadLettersNothing the
// 72-hour measurement.
const OutageBackoffBase = 15 * time.Minute

// outageBackoff is the wait before the next delivery of a message received
// receives times (ApproximateReceiveCount) during an outage.
func outageBackoff(receives int) time.Duration {
	n := min(max(receives, 1)-1, 20) // 2^20 bases is far past the cap
	return min(OutageBackoffBase<<n, maxVisibility)
}

// outage is the retry of an object held back by an outage (reason), after
// the backoff its message's receive count calls for.
func (inv *invocation) outage(obj *object, reason string) outcome {
	return retryLater(reason).after(outageBackoff(receiveCount(obj.msg)))
}

// outageReason reports whether a retry reason is an outage's: the account
// out of credits, or the key unusable (unreadable, not a geo_ key, refused).
func outageReason(reason string) bool {
	switch reason {
	case CodeOutOfCredits, CodeKeyUnavailable, CodeInvalidKey, CodeUnauthorized:
		return true
	}
	return false
}

// receiveCount is the message's ApproximateReceiveCount, 1 when absent.
func receiveCount(msg *events.SQSMessage) int {
	if msg == nil {
		return 1
	}
	n, err := strconv.Atoi(msg.Attributes["ApproximateReceiveCount"])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// delayMessage hides a message from the queue for d when a
// VisibilityChanger is configured, at most for what SQS still allows after
// the receive (visibilityLeft). When nothing is left it leaves the message
// as it is: it returns after the queue's visibility timeout.
func (inv *invocation) delayMessage(ctx context.Context, logger *slog.Logger, msg *events.SQSMessage, d time.Duration) {
	if inv.h.deps.Visibility == nil {
		return
	}
	left := visibilityLeft(inv.now().Sub(inv.start))
	if d > left {
		logger.Debug("delay capped by the visibility limit counted from the receive",
			"wanted_ms", d.Milliseconds(), "capped_ms", left.Milliseconds())
		d = left
	}
	if left <= 0 {
		logger.Warn("message not delayed: the invocation is too old for SQS to extend its visibility")
		return
	}
	// SQS counts visibility in whole seconds: rounded down here, wherever
	// the message is, so it comes back at most a second early (to sleep
	// the rest), never late.
	d = max(d, 0).Truncate(time.Second)
	fctx, cancel := finishContext(ctx)
	defer cancel()
	if err := inv.h.deps.Visibility.ChangeVisibility(fctx, *msg, d); err != nil {
		logger.Warn("delay message failed; it returns after the queue's visibility timeout", "error", err)
	}
}
