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

// maxVisibility is SQS's limit on a message's visibility timeout.
const maxVisibility = 12 * time.Hour

// ChangeVisibility hides msg from its queue for timeout (at most 12 hours).
func (v *SQSVisibility) ChangeVisibility(ctx context.Context, msg events.SQSMessage, timeout time.Duration) error {
	url, err := v.queueURL(ctx, msg.EventSourceARN)
	if err != nil {
		return err
	}
	secs := int32(min(timeout, maxVisibility) / time.Second)
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
