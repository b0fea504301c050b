package predictor

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// handleSQS processes a batch and reports the messages to retry. A message
// fails alone: a malformed body, an object that must wait, or an out-of-
// credits stop never fails the others.
func (inv *invocation) handleSQS(ctx context.Context, batch events.SQSEvent) events.SQSEventResponse {
	retry := make([]bool, len(batch.Records))
	sem := make(chan struct{}, inv.h.opts.Parallelism)
	var wg sync.WaitGroup
	for i := range batch.Records {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			defer func() {
				// Objects contain their own panics (processObject); this
				// is the backstop for the message's own steps, so that no
				// message can take the batch down.
				if r := recover(); r != nil {
					inv.logger.Error("handling the message panicked: returned for retry",
						"message_id", batch.Records[i].MessageId, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
					retry[i] = true
				}
			}()
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
	// A batch of one message acknowledged says nothing its message's own
	// line (recorded, rejected, duplicate...) did not: at INFO it would
	// only cost log bytes per image.
	level := slog.LevelInfo
	if len(batch.Records) == 1 && len(resp.BatchItemFailures) == 0 {
		level = slog.LevelDebug
	}
	inv.logger.Log(ctx, level, "batch done", "messages", len(batch.Records), "retry", len(resp.BatchItemFailures))
	return resp
}

// handleMessage processes one SQS message and reports whether it must be
// retried (returned as a batch item failure).
func (inv *invocation) handleMessage(ctx context.Context, msg *events.SQSMessage) bool {
	logger := inv.logger.With("message_id", msg.MessageId)
	if inv.outOfCredits.Load() {
		// Untouched: after a top-up the redelivery processes it.
		logger.Info("message returned: out of credits")
		inv.delayMessage(ctx, logger, msg, outageBackoff(receiveCount(msg)))
		inv.metrics.count(metricImagesRetried)
		return true
	}
	n, err := decodeNotification([]byte(msg.Body))
	if err != nil {
		logger.Error("malformed message: returned for retry, then the dead-letter queue", "error", err,
			"receive_count", msg.Attributes["ApproximateReceiveCount"])
		// It fails alike on every receive: one failure, counted on the
		// receive that sends it to the dead-letter queue, not one per
		// receive, which would inflate FailedPredictionRate with a single
		// bad message for as long as it is retried.
		if inv.lastReceive(msg) {
			inv.metrics.countReason(metricImagesFailed, reasonMalformedMessage)
			inv.metrics.countReason(metricDeadLettered, reasonMalformedMessage)
		}
		inv.metrics.count(metricImagesRetried)
		return true
	}
	inv.logNotification(logger, n)
	retry, delayed := false, false
	var delay time.Duration
	for _, u := range n.Uploads {
		o := inv.processObject(ctx, u, msg)
		if o.kind != outcomeRetry {
			continue
		}
		retry = true
		if o.delayed {
			delayed, delay = true, max(delay, o.delay)
		}
		if inv.lastReceive(msg) {
			inv.markDeadLetter(ctx, logger, u, o)
			if u.Job != "" {
				// Its message is gone to the dead-letter queue: the job
				// counts it failed (a redrive, if any, is an upload's).
				inv.countJobEnd(ctx, &object{upload: u, logger: logger.With("job", u.Job, "key", u.Key)}, outcome{kind: outcomeFailed, reason: o.reason})
			}
		}
	}
	if retry {
		if delayed {
			inv.delayMessage(ctx, logger, msg, delay)
		}
		inv.metrics.count(metricImagesRetried)
	}
	return retry
}

// reasonMalformedMessage is the Reason of a message that is not an S3
// notification the predictor can read.
const reasonMalformedMessage = "malformed_message"

// lastReceive reports whether msg is on its last allowed receive: returned
// now, SQS moves it to the dead-letter queue instead of delivering it again.
func (inv *invocation) lastReceive(msg *events.SQSMessage) bool {
	limit := inv.h.cfg.MaxReceiveCount
	return limit > 0 && msg != nil && receiveCount(msg) >= limit
}

// markDeadLetter records that the object's message is going to the
// dead-letter queue, so the record says the object waits for a redrive
// rather than for its cause to clear by itself.
func (inv *invocation) markDeadLetter(ctx context.Context, logger *slog.Logger, u upload, o outcome) {
	ref := u.ref()
	detail := fmt.Sprintf("the message was returned on its last receive (%d) because of %s: it is in the dead-letter queue; redrive it once the cause is fixed",
		inv.h.cfg.MaxReceiveCount, o.reason)
	fctx, cancel := finishContext(ctx)
	defer cancel()
	if err := inv.h.deps.Ledger.MarkWaiting(fctx, ref, o.reason, detail, true); err != nil {
		logger.Error("record dead letter failed", "key", u.Key, "error", err)
		return
	}
	logger.Warn("message goes to the dead-letter queue", "bucket", u.Bucket, "key", u.Key, "reason", o.reason)
	inv.metrics.countReason(metricDeadLettered, o.reason)
}
