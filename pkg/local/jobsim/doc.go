// Package jobsim proves issue 47's job engine on a simulated clock at a
// million objects: the REAL pkg/jobs Store and Feeder (on minidyn, the
// in-memory DynamoDB pacesim uses) run every simulated minute, list a
// generated bucket of N photos through ListObjectVersions pages of 1,000,
// and feed a simulated upload queue with the stack's attributes
// (retention, visibility timeout, DelaySeconds, the redrive policy at
// dlqMaxReceiveCount, silent expiry). The predictor is modelled as the
// event source's instances (maxConcurrency, batchSize, the predictor's
// parallelism) taking their place in the shared schedule at the pacer's
// spacing, holding a slot beyond MaxSlotWait as pkg/predictor does, and
// recording each object version once, as the ledger's claim does; live
// uploads arrive at 5 a minute throughout, and their upload-to-record p50
// is set against the same stack's without the job.
//
// Everything runs in one goroutine on an event loop (events.go): the
// Feeder's calls to DynamoDB, S3 and SQS are synchronous inside an event,
// on the loop's clock, so a run is deterministic for a seed. The queue is
// its own (queue.go), not pkg/local/sqsqueue: that one scans its messages
// on every call, which the rig's hundreds afford and 10^7 events of a
// million-object job do not; this one keeps a heap by visibility.
//
// Proofs are the runs (make bench, cmd/benchreport's jobsim
// stage); Small the CI-sized ones make test asserts.
package jobsim

import "time"

// epoch is when every simulated run starts.
var epoch = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
