// Package pipeline runs the whole pipeline on one machine: the service
// simulator (or the real service), S3 through gofakes3, DynamoDB Local, an
// in-memory SQS queue with a dead-letter queue, the predictor's handler fed
// through the Lambda runtime's own adapter, and the monitor once at the end.
//
// Every component is configured the way the CDK stack configures it in
// AWS: the table comes from tableschema, the functions read their settings
// from an environment map through their own configuration parsers, and S3
// uploads become the ObjectCreated notifications S3 would put on the queue.
// Run stops everything it started when it returns or when its context is
// cancelled.
package pipeline
