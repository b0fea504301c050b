package sqsqueue

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Visibility changes the visibility of messages the Queue delivered, with
// the checks of Queue.ChangeVisibility. It has the method set of the
// predictor's VisibilityChanger, so a handler run locally delays messages
// as SQSVisibility does on SQS.
type Visibility struct{ Queue *Queue }

// ChangeVisibility hides msg from its queue for timeout.
func (v Visibility) ChangeVisibility(_ context.Context, msg events.SQSMessage, timeout time.Duration) error {
	if msg.EventSourceARN != "" && msg.EventSourceARN != v.Queue.ARN() {
		return fmt.Errorf("change visibility of message %s: it comes from %s, not from %s", msg.MessageId, msg.EventSourceARN, v.Queue.ARN())
	}
	if err := v.Queue.ChangeVisibility(msg.ReceiptHandle, timeout); err != nil {
		return fmt.Errorf("change visibility of message %s: %w", msg.MessageId, err)
	}
	return nil
}
