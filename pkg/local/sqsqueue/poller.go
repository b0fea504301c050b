package sqsqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
)

// Poller defaults.
const (
	DefaultConcurrency = 2
	DefaultBatchSize   = 10
	DefaultTimeout     = 60 * time.Second
	DefaultWaitTime    = 100 * time.Millisecond
)

// Poller plays the Lambda SQS event source mapping with
// ReportBatchItemFailures: Concurrency "instances" each receive batches of up
// to BatchSize messages and invoke Handler through lambdarun.Invoke (the
// runtime's own adapter). After an invocation it deletes every message except
// those listed in batchItemFailures; when the invocation fails, or its
// response is not a valid batch response, it deletes nothing.
//
// Delivery follows SQS's documented long polling, so upload-to-record
// times measured on it are Lambda's: "For standard queues, Lambda uses long
// polling to poll a queue until it becomes active"
// (docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html); "Long
// polling lets you consume messages from your Amazon SQS queue as soon as
// they become available" (SQSDeveloperGuide/best-practices-using-appropriate-polling-mode.html);
// and "For streams and Amazon SQS event sources, the default batching window
// is 0 seconds" (MaximumBatchingWindowInSeconds, Lambda API reference); the
// stack's event source sets no window. So Queue.Receive returns as soon as one message is
// visible, and an instance invokes with what it got, never waiting to fill
// BatchSize (TestPollerInvokesAsSoonAsAMessageArrives).
type Poller struct {
	Queue   *Queue
	Handler any // any handler signature aws-lambda-go accepts

	Concurrency int           // parallel invocations; default DefaultConcurrency
	BatchSize   int           // 1..10 (no batching window); 0: DefaultBatchSize
	Timeout     time.Duration // invocation deadline, the function's timeout; default DefaultTimeout
	WaitTime    time.Duration // long-poll wait per receive; default DefaultWaitTime

	// RetryDelay, when positive, makes failed messages visible again after
	// this delay instead of after the full visibility timeout. Lambda itself
	// waits for the visibility timeout; local runs shorten it to keep retries
	// quick while leaving the timeout long enough that a slow invocation is
	// never overtaken by a redelivery of its own messages. A delay the
	// handler set itself (ChangeVisibility during the invocation) is kept.
	RetryDelay time.Duration

	// OnBatch, if set, is called after each invocation (from the instance's
	// goroutine) with its outcome, e.g. to print progress.
	OnBatch func(BatchResult)

	Logger *slog.Logger // default: discard

	invocations, acked, failed, invokeErrors, staleAcks atomic.Int64
}

// BatchResult is the outcome of one invocation.
type BatchResult struct {
	Messages []events.SQSMessage
	Failed   []string // message ids returned for retry (all of them when Err != nil)
	Err      error    // invocation error, or invalid batch response
	Duration time.Duration
}

// Stats counts what the poller has done so far.
type Stats struct {
	Invocations  int64 // handler invocations
	Acked        int64 // messages deleted
	Failed       int64 // messages left for retry, per invocation
	InvokeErrors int64 // invocations that failed as a whole
	StaleAcks    int64 // deletes refused because the message was received again meanwhile
}

// Stats returns the poller's counters.
func (p *Poller) Stats() Stats {
	return Stats{
		Invocations:  p.invocations.Load(),
		Acked:        p.acked.Load(),
		Failed:       p.failed.Load(),
		InvokeErrors: p.invokeErrors.Load(),
		StaleAcks:    p.staleAcks.Load(),
	}
}

// Run polls until ctx is done, then waits for invocations in progress (they
// see the cancelled context) and returns ctx's error.
func (p *Poller) Run(ctx context.Context) error {
	return p.run(ctx, nil)
}

// RunUntilDrained polls until every message sent to the queue has been
// deleted or dead-lettered (Queue.Len() == 0), or until ctx is done, in which
// case it returns ctx's error. Messages sent while it runs are included.
func (p *Poller) RunUntilDrained(ctx context.Context) error {
	return p.run(ctx, func() bool { return p.Queue.Len() == 0 })
}

func (p *Poller) run(ctx context.Context, done func() bool) error {
	if p.Queue == nil || p.Handler == nil {
		return errors.New("sqsqueue: Poller needs a Queue and a Handler")
	}
	if p.BatchSize < 0 || p.BatchSize > MaxBatchSize {
		// CreateEventSourceMapping refuses a batch size over 10 without a
		// batching window (MaximumBatchingWindowInSeconds), which the
		// Poller does not have.
		return &Error{Code: CodeInvalidParameterValue, Message: fmt.Sprintf(
			"BatchSize %d is out of range: from 1 to %d for an SQS event source without a batching window", p.BatchSize, MaxBatchSize)}
	}
	concurrency := p.Concurrency
	if concurrency <= 0 {
		concurrency = DefaultConcurrency
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()

	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() { p.instance(runCtx) })
	}
	if done != nil {
		ticker := time.NewTicker(pollInterval)
		defer ticker.Stop()
	wait:
		for {
			select {
			case <-ctx.Done():
				break wait
			case <-ticker.C:
				if done() {
					break wait
				}
			}
		}
		stop()
	}
	wg.Wait()
	return ctx.Err()
}

// instance is one concurrent "Lambda instance": receive, invoke, settle.
func (p *Poller) instance(ctx context.Context) {
	batchSize := p.BatchSize
	if batchSize == 0 {
		batchSize = DefaultBatchSize
	}
	wait := p.WaitTime
	if wait <= 0 {
		wait = DefaultWaitTime
	}
	for ctx.Err() == nil {
		msgs := p.Queue.Receive(ctx, batchSize, wait)
		if len(msgs) == 0 {
			continue
		}
		res := p.invoke(ctx, msgs)
		p.settle(res)
		if p.OnBatch != nil {
			p.OnBatch(res)
		}
	}
}

func (p *Poller) invoke(ctx context.Context, msgs []events.SQSMessage) BatchResult {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	p.invocations.Add(1)
	start := time.Now()
	res := BatchResult{Messages: msgs}
	payload, err := json.Marshal(events.SQSEvent{Records: msgs})
	if err == nil {
		var out []byte
		out, err = lambdarun.Invoke(ctx, p.Handler, payload, timeout)
		if err == nil {
			res.Failed, err = batchFailures(out, msgs)
		}
	}
	res.Duration = time.Since(start)
	if err != nil {
		res.Err = err
		res.Failed = res.Failed[:0]
		for _, m := range msgs {
			res.Failed = append(res.Failed, m.MessageId)
		}
	}
	return res
}

// settle deletes the succeeded messages and notes why the others failed.
func (p *Poller) settle(res BatchResult) {
	logger := p.logger()
	failed := make(map[string]bool, len(res.Failed))
	for _, id := range res.Failed {
		failed[id] = true
	}
	reason := "reported in batchItemFailures"
	if res.Err != nil {
		p.invokeErrors.Add(1)
		reason = "invocation failed: " + res.Err.Error()
		logger.Warn("invocation failed; the whole batch will be retried",
			"messages", len(res.Messages), "error", res.Err.Error())
	}
	for _, m := range res.Messages {
		if failed[m.MessageId] {
			p.failed.Add(1)
			p.Queue.NoteFailure(m.ReceiptHandle, reason)
			if p.RetryDelay > 0 {
				p.Queue.retryAfter(m.ReceiptHandle, p.RetryDelay)
			}
			continue
		}
		if err := p.Queue.Ack(m.ReceiptHandle); err != nil {
			p.staleAcks.Add(1)
			logger.Warn("delete refused: message was received again meanwhile", "message_id", m.MessageId)
			continue
		}
		p.acked.Add(1)
	}
}

func (p *Poller) logger() *slog.Logger {
	if p.Logger != nil {
		return p.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// batchFailures reads a batch response the way Lambda does: an empty or null
// response or list means complete success; an unparseable response, an
// empty itemIdentifier, or one that names no message of the batch makes the
// whole batch a failure.
func batchFailures(out []byte, msgs []events.SQSMessage) ([]string, error) {
	var resp *events.SQSEventResponse
	if len(out) > 0 {
		if err := json.Unmarshal(out, &resp); err != nil {
			return nil, fmt.Errorf("invalid batch response: %w", err)
		}
	}
	if resp == nil || len(resp.BatchItemFailures) == 0 {
		return nil, nil
	}
	inBatch := make(map[string]bool, len(msgs))
	for _, m := range msgs {
		inBatch[m.MessageId] = true
	}
	ids := make([]string, 0, len(resp.BatchItemFailures))
	for _, f := range resp.BatchItemFailures {
		if f.ItemIdentifier == "" || !inBatch[f.ItemIdentifier] {
			return nil, fmt.Errorf("invalid batch response: itemIdentifier %q is not a message of the batch", f.ItemIdentifier)
		}
		ids = append(ids, f.ItemIdentifier)
	}
	return ids, nil
}

// Poll is one step of the event source mapping, for drivers that move a
// simulated clock themselves instead of running Run: it receives one batch
// of visible messages without waiting, invokes the handler and settles the
// batch as Run does. ok is false, and nothing is invoked, when no message
// is visible.
func (p *Poller) Poll(ctx context.Context) (res BatchResult, ok bool) {
	batchSize := p.BatchSize
	if batchSize == 0 {
		batchSize = DefaultBatchSize
	}
	msgs := p.Queue.Receive(ctx, batchSize, 0)
	if len(msgs) == 0 {
		return BatchResult{}, false
	}
	res = p.invoke(ctx, msgs)
	p.settle(res)
	if p.OnBatch != nil {
		p.OnBatch(res)
	}
	return res, true
}
