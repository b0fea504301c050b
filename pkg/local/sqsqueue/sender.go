package sqsqueue

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Sender is a Queue as an SQS client's SendMessageBatch sees it, for code
// that sends through the SDK's interface (the job feeder): each entry's
// DelaySeconds is honoured (SendMessageDelayed), and the answers are
// SQS's: a whole-request error for a malformed batch or another queue's
// URL, a failed entry for a message the queue refuses.
type Sender struct {
	Queue *Queue
	// URL is the queue's URL as the caller is configured with it.
	URL string

	batches atomic.Int64
}

// Batches is the number of SendMessageBatch requests the queue answered.
func (s *Sender) Batches() int64 { return s.batches.Load() }

func (s *Sender) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	switch {
	case aws.ToString(in.QueueUrl) != s.URL:
		return nil, &sqstypes.QueueDoesNotExist{Message: aws.String("The specified queue does not exist: " + aws.ToString(in.QueueUrl))}
	case len(in.Entries) == 0:
		return nil, &sqstypes.EmptyBatchRequest{Message: aws.String("There should be at least one SendMessageBatchRequestEntry in the request.")}
	case len(in.Entries) > MaxBatchSize:
		return nil, &sqstypes.TooManyEntriesInBatchRequest{Message: aws.String(fmt.Sprintf(
			"Maximum number of entries per request are %d. You have sent %d.", MaxBatchSize, len(in.Entries)))}
	}
	s.batches.Add(1)
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		id, err := s.Queue.SendMessageDelayed(aws.ToString(e.MessageBody), time.Duration(e.DelaySeconds)*time.Second)
		if err != nil {
			code := "InternalError"
			var qe *Error
			if errors.As(err, &qe) {
				code = qe.Code
			}
			out.Failed = append(out.Failed, sqstypes.BatchResultErrorEntry{Id: e.Id, Code: aws.String(code), Message: aws.String(err.Error()), SenderFault: true})
			continue
		}
		out.Successful = append(out.Successful, sqstypes.SendMessageBatchResultEntry{Id: e.Id, MessageId: aws.String(id)})
	}
	return out, nil
}
