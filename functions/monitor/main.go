// Command monitor is the scheduled Lambda that turns the service's credit
// summary and model list into CloudWatch metrics (see pkg/monitor). The
// logic lives in pkg/monitor; this file only wires it to AWS at cold start.
//
// Outside Lambda, `go run ./functions/monitor -event events/scheduled.json`
// runs it once and prints its report.
package main

import (
	"context"
	"io"
	"os"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/monitor"
	"github.com/geolocate-aws/geolocate/pkg/secretkey"
)

func main() {
	lambdarun.Main("monitor", usage, func(ctx context.Context) (any, error) {
		mon, err := build(ctx, os.Getenv, os.Stderr, lambdarun.MetricsWriter())
		if err != nil {
			return nil, err
		}
		return mon.Handle, nil
	})
}

// build wires the monitor from the environment once per execution
// environment: configuration, logger, AWS clients, then monitor.Assemble.
// The AWS configuration is loaded only when a secret or a table needs it,
// so a local run with GEO_API_KEY and no TABLE_NAME needs no AWS at all.
func build(ctx context.Context, getenv func(string) string, logs, metrics io.Writer) (*monitor.Monitor, error) {
	cfg, err := monitor.LoadConfig(getenv)
	if err != nil {
		return nil, err
	}
	logger := lambdarun.NewLogger(logs, cfg.LogLevel)
	loadAWS := sync.OnceValues(func() (aws.Config, error) { return lambdarun.LoadAWSConfig(ctx, logger) })
	return monitor.Assemble(cfg, monitor.AWSClients{
		DynamoDB: func() (monitor.DynamoDBAPI, error) {
			c, err := loadAWS()
			if err != nil {
				return nil, err
			}
			return dynamodb.NewFromConfig(c, lambdarun.DynamoDBOptions), nil
		},
		SecretsManager: func() (secretkey.SecretsManagerAPI, error) {
			c, err := loadAWS()
			if err != nil {
				return nil, err
			}
			return secretsmanager.NewFromConfig(c), nil
		},
		EventBridge: func() (monitor.EventsAPI, error) {
			c, err := loadAWS()
			if err != nil {
				return nil, err
			}
			return eventbridge.NewFromConfig(c), nil
		},
	}, logger, metrics)
}

// usage precedes the flags in -h's output.
const usage = `usage: monitor [-event FILE|-] [-timeout D]

The monitor Lambda function. Under Lambda it serves the runtime; outside,
-event runs it once on an event file (events/scheduled.json) and prints its
report. It reads its configuration from the environment: GEO_API_URL is
required, and the key comes from GEO_SECRET_ID (the secret's id or ARN) or,
locally, GEO_API_KEY; TABLE_NAME turns the credit history on.

`
