package soak

import (
	"context"
	"slices"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/awsfault"
)

// ledgerWrites are the DynamoDB operations that write the ledger.
var ledgerWrites = []string{"UpdateItem", "PutItem", "TransactWriteItems"}

// awsBackground are the AWS faults present throughout a run, per service.
func awsBackground() (s3, ddb, sm []awsfault.Rule) {
	s3 = []awsfault.Rule{
		awsfault.At(0.01, awsfault.S3SlowDown).On("GetObject", "HeadObject"),
		awsfault.At(0.01, awsfault.MidBodyReset).On("GetObject"),
		awsfault.At(0.003, awsfault.S3InternalError).On("GetObject", "HeadObject"),
		awsfault.At(0.003, awsfault.ResetBeforeBackend),
	}
	ddb = []awsfault.Rule{
		awsfault.At(0.01, awsfault.DynamoDBThrottling),
		awsfault.At(0.005, awsfault.DynamoDBThroughputExceeded),
		awsfault.At(0.003, awsfault.DynamoDBInternalError),
		awsfault.At(0.01, awsfault.LostAnswer).On(ledgerWrites...),
		awsfault.At(0.003, awsfault.ResetBeforeBackend),
		awsfault.At(0.02, awsfault.Latency(20*time.Millisecond)),
	}
	sm = []awsfault.Rule{
		awsfault.At(0.05, awsfault.SecretsManagerThrottling),
		awsfault.At(0.01, awsfault.SecretsManagerInternalError),
	}
	return s3, ddb, sm
}

// awsFaults is the AWS side of a run's schedule: the background faults and
// episodes on top, each one service at a time.
func awsFaults(r *rig) []faultStep {
	s3, ddb, sm := awsBackground()
	on := func(rules []awsfault.Rule, extra ...awsfault.Rule) []awsfault.Rule {
		return append(slices.Clip(extra), rules...)
	}
	episode := func(d time.Duration, s3x, ddbx, smx []awsfault.Rule) func(context.Context) {
		return func(ctx context.Context) {
			r.proxies.setRules(s3x, ddbx, smx)
			sleepCtx(ctx, d)
			r.proxies.setRules(s3, ddb, sm)
		}
	}
	return []faultStep{
		{at: 0, name: "AWS background faults on", run: func(context.Context) { r.proxies.setRules(s3, ddb, sm) }},
		{at: 0.15, name: "DynamoDB throttling (2 s, 80%)", run: episode(2*time.Second,
			s3, on(ddb, awsfault.At(0.8, awsfault.DynamoDBThrottling)), sm)},
		{at: 0.30, name: "DynamoDB transaction conflicts (1 s, 50% of item writes)", run: episode(time.Second,
			s3, on(ddb, awsfault.At(0.5, awsfault.DynamoDBTransactionConflict).On("PutItem", "UpdateItem")), sm)},
		{at: 0.35, name: "DynamoDB transactions cancelled (1 s, 50% of TransactWriteItems: conflict, throttling)", run: episode(time.Second,
			s3, on(ddb, awsfault.At(0.25, awsfault.DynamoDBTransactionConflictCancel).On("TransactWriteItems"),
				awsfault.At(1.0/3, awsfault.DynamoDBThrottlingCancel).On("TransactWriteItems")), sm)},
		{at: 0.40, name: "Secrets Manager throttled (2 s, 90%)", run: episode(2*time.Second,
			s3, ddb, on(sm, awsfault.At(0.9, awsfault.SecretsManagerThrottling)))},
		{at: 0.50, name: "DynamoDB answers lost (2 s, 30% of writes)", run: episode(2*time.Second,
			s3, on(ddb, awsfault.At(0.3, awsfault.LostAnswer).On(ledgerWrites...)), sm)},
		{at: 0.70, name: "S3 SlowDown and resets (1.5 s, 50% + 20%)", run: episode(1500*time.Millisecond,
			on(s3, awsfault.At(0.5, awsfault.S3SlowDown).On("GetObject", "HeadObject"),
				awsfault.At(0.2, awsfault.MidBodyReset).On("GetObject")), ddb, sm)},
		{at: 0.80, name: "DynamoDB 500s (1 s, 50%)", run: episode(time.Second,
			s3, on(ddb, awsfault.At(0.5, awsfault.DynamoDBInternalError)), sm)},
	}
}

// awsFaultsExpected are faults each AWS run must have injected at least
// once, by the suffix of the proxies' counts ("<service> <operation>: <fault>").
var awsFaultsExpected = []struct{ service, fault string }{
	{"S3", "SlowDown"}, {"S3", "reset mid-body"}, {"S3", "InternalError"},
	{"DynamoDB", "ThrottlingException"}, {"DynamoDB", "ProvisionedThroughputExceededException"},
	{"DynamoDB", "InternalServerError"}, {"DynamoDB", "TransactionConflictException"},
	{"DynamoDB", "answer lost"}, {"DynamoDB", "reset before the backend"},
	{"DynamoDB", awsfault.DynamoDBTransactionConflictCancel.Name()}, {"DynamoDB", awsfault.DynamoDBThrottlingCancel.Name()},
	{"Secrets Manager", "ThrottlingException"},
}
