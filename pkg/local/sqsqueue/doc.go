// Package sqsqueue is an in-memory stand-in for an Amazon SQS standard
// queue with a redrive policy, and for the Lambda SQS event source that polls
// it. There is no SQS emulator to run locally, so this package reproduces the
// semantics the pipeline depends on:
//
//   - a received message stays invisible until it is deleted (acked) or its
//     visibility timeout expires, after which it is delivered again with a new
//     receipt handle and a higher ApproximateReceiveCount;
//   - only the latest receipt handle deletes a message;
//   - a message received more than MaxReceiveCount times moves to the
//     dead-letter queue on the next receive attempt, as SQS does;
//   - delivery is at least once: Duplicate makes the queue sometimes deliver a
//     message twice, with the same message id;
//   - SQS's limits hold (limits.go cites them): a visibility change may not
//     keep a message invisible past 12 hours after the receive that produced
//     its receipt handle, a body is at most MaximumMessageSize (256 KiB by
//     default), messages older than the retention period (4 days by
//     default) are dropped, in the dead-letter queue too, counted from the
//     original send; out-of-range settings are refused with SQS's error
//     codes;
//   - [Poller] invokes a Lambda handler with batches through the same adapter
//     the Lambda runtime uses and deletes every message except the reported
//     batchItemFailures (nothing at all when the invocation fails), like an
//     event source mapping with ReportBatchItemFailures.
package sqsqueue
