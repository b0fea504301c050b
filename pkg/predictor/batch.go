package predictor

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/aws/aws-lambda-go/events"
)

// handleSQS processes a batch and reports the messages to retry. A message
// fails alone: a malformed body, an object that must wait, or an out-of-
// credits stop never fails the others.
func (inv *invocation) handleSQS(ctx context.Context, raw json.RawMessage) (events.SQSEventResponse, error) {
	var batch events.SQSEvent
	if err := json.Unmarshal(raw, &batch); err != nil {
		inv.logger.Error("malformed SQS event", "error", err)
		return events.SQSEventResponse{}, fmt.Errorf("decode SQS event: %w", err)
	}

	retry := make([]bool, len(batch.Records))
	sem := make(chan struct{}, inv.h.opts.Parallelism)
	var wg sync.WaitGroup
	for i := range batch.Records {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			retry[i] = inv.handleMessage(ctx, &batch.Records[i])
		}()
	}
	wg.Wait()

	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for i, r := range retry {
		if r {
			resp.BatchItemFailures = append(resp.BatchItemFailures,
				events.SQSBatchItemFailure{ItemIdentifier: batch.Records[i].MessageId})
		}
	}
	inv.logger.Info("batch done", "messages", len(batch.Records), "retry", len(resp.BatchItemFailures))
	return resp, nil
}

// handleMessage processes one SQS message and reports whether it must be
// retried (returned as a batch item failure).
func (inv *invocation) handleMessage(ctx context.Context, msg *events.SQSMessage) bool {
	logger := inv.logger.With("message_id", msg.MessageId)
	if inv.outOfCredits.Load() {
		// Untouched: after a top-up the redelivery processes it.
		logger.Info("message returned: out of credits")
		inv.metrics.count(metricImagesRetried)
		return true
	}
	n, err := decodeNotification([]byte(msg.Body))
	if err != nil {
		logger.Error("malformed message: returned for retry, then the dead-letter queue", "error", err,
			"receive_count", msg.Attributes["ApproximateReceiveCount"])
		inv.metrics.countReason(metricImagesFailed, "malformed_message")
		inv.metrics.count(metricImagesRetried)
		return true
	}
	inv.logNotification(logger, n)
	retry := false
	for _, u := range n.Uploads {
		if o := inv.processObject(ctx, u, msg); o.kind == outcomeRetry {
			retry = true
		}
	}
	if retry {
		inv.metrics.count(metricImagesRetried)
	}
	return retry
}
