// Package predictor turns uploaded images into prediction records: it is the
// logic of the predictor Lambda function.
//
// Events arrive either as an SQS batch of S3 notifications (the deployed
// path; failures are reported per message as batchItemFailures) or as a
// direct S3 event. For every object version the Handler runs, in order, the
// checks that cost nothing (bucket, folder marker, size, ledger state, image
// sniffing), then the daily budget and the rate limiter, then claims the
// object in the ledger with one conditional write and makes at most one paid
// prediction call. Whatever is redelivered or runs concurrently, an object
// version is charged at most once, and a message that cannot be finished now
// is returned to the queue rather than dropped.
package predictor
