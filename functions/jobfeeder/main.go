// Command jobfeeder is the scheduled Lambda (an EventBridge rule, once a
// minute) that advances the stack's jobs: each active job's listing one
// bounded step, the upload queue fed with the job's window, and the job
// settled when all it listed has ended (see pkg/jobs). The logic lives in
// pkg/jobs; this file only wires it to AWS at cold start.
//
// Outside Lambda, `go run ./functions/jobfeeder -event events/scheduled.json`
// runs it once and prints its report.
package main

import (
	"context"
	"io"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
)

func main() {
	lambdarun.Main("jobfeeder", usage, func(ctx context.Context) (any, error) {
		return build(ctx, os.Getenv, os.Stderr)
	})
}

// build wires the feeder from the environment once per execution
// environment and returns the handler: one feeder run per scheduled event
// (its content is not read: a repeated delivery is just another run).
// awsFns adjust the AWS configuration every client is made from (a test
// records the calls there).
func build(ctx context.Context, getenv func(string) string, logs io.Writer, awsFns ...func(*aws.Config)) (func(context.Context) (jobs.Report, error), error) {
	cfg, err := jobs.LoadConfig(getenv)
	if err != nil {
		return nil, err
	}
	logger := lambdarun.NewLogger(logs, cfg.LogLevel)
	awsCfg, err := lambdarun.LoadAWSConfig(ctx, logger)
	if err != nil {
		return nil, err
	}
	for _, fn := range awsFns {
		fn(&awsCfg)
	}
	store := jobs.New(dynamodb.NewFromConfig(awsCfg, lambdarun.DynamoDBOptions), cfg.TableName)
	return func(ctx context.Context) (jobs.Report, error) {
		feeder := jobs.NewFeeder(store, s3.NewFromConfig(awsCfg, lambdarun.S3Options), sqs.NewFromConfig(awsCfg), cfg.QueueURL,
			cfg.Options, func(o *jobs.FeederOptions) { o.Logger = lambdarun.WithRequestID(ctx, logger) })
		return feeder.Run(ctx)
	}, nil
}

// usage precedes the flags in -h's output.
const usage = `usage: jobfeeder [-event FILE|-] [-timeout D]

The job feeder Lambda function. Under Lambda it serves the runtime; outside,
-event runs it once on an event file (events/scheduled.json) and prints its
report. It reads its configuration from the environment: TABLE_NAME (the
results table, where jobs live) and QUEUE_URL (the upload queue it feeds) are
required; GEO_RATE_PER_MINUTE, GEO_JOB_WINDOW_MINUTES, GEO_MAX_CONCURRENCY,
GEO_DAILY_CREDIT_BUDGET, MAX_RECEIVE_COUNT and QUEUE_VISIBILITY tune it.

`
