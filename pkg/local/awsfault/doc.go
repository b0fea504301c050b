// Package awsfault is a fault-injecting reverse proxy for the local stand-ins
// of AWS services (DynamoDB Local, the in-process S3, the Secrets Manager
// stand-in). The code under test reaches it through AWS_ENDPOINT_URL_<SERVICE>,
// exactly as it reaches AWS, so the clients, their retry configuration and
// the code above them are the ones that ship.
//
// Faults are chosen per operation and can be swapped while a run goes on
// (one set per phase of a soak):
//
//   - an error answer with AWS's exact error code, HTTP status and body
//     shape for the service's protocol (ThrottlingException 400 for
//     DynamoDB, SlowDown 503 for S3, ...), a TransactWriteItems cancelled
//     with its CancellationReasons (DynamoDBTransactionCanceled) included;
//     the backend never sees the request;
//   - added latency before the request is forwarded;
//   - a connection reset before the request reaches the backend;
//   - "answer lost": the request is forwarded and applied, then the
//     connection is closed without a response, as when a response is lost
//     on the network or the client times out after the write;
//   - a reset in the middle of the response body (an S3 GET cut short).
//
// Limits of the model: the proxy cannot reorder the backend's own writes or
// make DynamoDB Local throttle by partition; a throttle here is a rate per
// operation, not a model of partition heat.
package awsfault
