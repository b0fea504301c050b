package predictor

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// SQSAPI is the part of *sqs.Client SQSVisibility uses.
type SQSAPI interface {
	GetQueueUrl(ctx context.Context, params *sqs.GetQueueUrlInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error)
	ChangeMessageVisibility(ctx context.Context, params *sqs.ChangeMessageVisibilityInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

// SQSVisibility is a VisibilityChanger on SQS. The function's role needs
// sqs:GetQueueUrl and sqs:ChangeMessageVisibility on the queue.
type SQSVisibility struct {
	client SQSAPI
	urls   sync.Map // queue ARN -> URL
}

// NewSQSVisibility returns a VisibilityChanger using client.
func NewSQSVisibility(client SQSAPI) *SQSVisibility { return &SQSVisibility{client: client} }

// maxVisibility is SQS's limit on a message's visibility timeout, which is
// also the longest a message may stay invisible after the receive that
// produced its receipt handle. ChangeMessageVisibility API reference:
// VisibilityTimeout "Values range: 0 to 43200. Maximum: 12 hours"; "If you
// try to extend the visibility timeout beyond the maximum, your request is
// rejected." SQS Developer Guide, Visibility timeout: "The maximum
// visibility timeout is 12 hours from the time that Amazon SQS receives the
// ReceiveMessage request. Extending the visibility timeout does not reset
// the 12 hour maximum." A longer total fails with InvalidParameterValue
// ("Total VisibilityTimeout for the message is beyond the limit [43200
// seconds]").
const maxVisibility = 12 * time.Hour

// visibilityMargin is what visibilityLeft keeps back for the time between
// the receive and the handler's start, which the handler cannot see: the
// event source's long poll (its ReceiveMessage request, from which the 12
// hours count, may have waited up to 20 s for messages), the invocation's
// own start, and clock skew. It assumes the event source has no batching
// window (MaximumBatchingWindowInSeconds), as the stack configures it: a
// window holds received messages up to 300 s before the invocation.
const visibilityMargin = time.Minute

// visibilityLeft is the longest visibility timeout SQS still accepts for a
// message of an invocation that started elapsed ago: 12 hours less the
// time since the receive, bounded by the time since the invocation's start
// plus visibilityMargin; never negative. The SQS record's
// ApproximateFirstReceiveTimestamp does not help: it is the first receive,
// not the one that produced this receipt handle.
func visibilityLeft(elapsed time.Duration) time.Duration {
	return max(maxVisibility-max(elapsed, 0)-visibilityMargin, 0)
}

// ChangeVisibility hides msg from its queue for timeout (0 to 12 hours; the
// caller keeps the total under 12 hours from the receive, see
// visibilityLeft).
func (v *SQSVisibility) ChangeVisibility(ctx context.Context, msg events.SQSMessage, timeout time.Duration) error {
	url, err := v.queueURL(ctx, msg.EventSourceARN)
	if err != nil {
		return err
	}
	secs := int32(min(max(timeout, 0), maxVisibility) / time.Second)
	_, err = v.client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl:          aws.String(url),
		ReceiptHandle:     aws.String(msg.ReceiptHandle),
		VisibilityTimeout: secs,
	})
	if err != nil {
		return fmt.Errorf("change visibility of message %s: %w", msg.MessageId, err)
	}
	return nil
}

// queueURL resolves a queue ARN (arn:aws:sqs:region:account:name) once.
func (v *SQSVisibility) queueURL(ctx context.Context, arn string) (string, error) {
	if url, ok := v.urls.Load(arn); ok {
		return url.(string), nil
	}
	parts := strings.Split(arn, ":")
	if len(parts) != 6 || parts[2] != "sqs" || parts[5] == "" {
		return "", fmt.Errorf("resolve queue: %q is not an SQS queue ARN", arn)
	}
	out, err := v.client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{
		QueueName:              aws.String(parts[5]),
		QueueOwnerAWSAccountId: aws.String(parts[4]),
	})
	if err != nil {
		return "", fmt.Errorf("resolve queue %s: %w", parts[5], err)
	}
	url := aws.ToString(out.QueueUrl)
	v.urls.Store(arn, url)
	return url, nil
}
