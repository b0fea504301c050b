// Package predictor turns uploaded images into prediction records: it is the
// logic of the predictor Lambda function.
//
// Events arrive as an SQS batch of S3 notifications (failures are reported
// per message as batchItemFailures); the stack makes no other invocation,
// and Handle refuses any other payload. For every object version the
// Handler first runs the checks that need no I/O (bucket, folder marker,
// size from the event), then claims the object in the ledger with one
// conditional write, which alone decides duplicates: a finished object is
// skipped, one held by a live attempt is retried later, one whose attempt
// vanished is never called again. Holding the claim, it reserves the daily
// budget and takes a call slot from the pacer, and only then opens the
// object with one S3 GET: its first bytes are sniffed (a non-image is
// rejected through the claim) and the same stream is uploaded to the paid
// service. So an image costs two ledger writes, a slot and one S3 read, and
// no S3 connection is held open while waiting.
//
// Lambda bills waiting, so an invocation waits at most Options.MaxSlotWait
// (a second) for a slot or a retry: a longer wait holds the slot on the
// record and returns the message to the queue until Options.HeldSlotLead
// before it, and the delivery that holds it waits up to both (slots.go); the
// credits or the key missing return it after a backoff that grows with its
// receive count (waits.go).
//
// Whatever is redelivered or runs concurrently, an object version is charged
// at most once; a step that cannot finish now gives the claim back as a
// retryable failure (nothing was charged) and returns the message to the
// queue rather than dropping it. A panic while processing one object is
// contained in its worker and ends in a true record (processObject).
package predictor
