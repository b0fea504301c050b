// Command monitor is the scheduled Lambda that turns the service's credit
// summary and model list into CloudWatch metrics (see pkg/monitor). Locally,
// `go run ./functions/monitor -event events/scheduled.json` runs it once.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/monitor"
	"github.com/geolocate-aws/geolocate/pkg/secretkey"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

func main() {
	logger := lambdarun.NewLogger(os.Stderr, os.Getenv(envvars.LogLevel))
	mon, err := build(context.Background(), os.Getenv, lambdarun.MetricsWriter(), logger)
	if err != nil {
		logger.Error("monitor cold start failed", "error", err.Error())
		fmt.Fprintf(os.Stderr, "monitor: %v\n", err)
		os.Exit(1)
	}
	lambdarun.Main("monitor", mon.Handle)
}

// build wires the Monitor from the environment. AWS configuration is loaded
// only when a secret or a table needs it, so a local run with GEO_API_KEY
// and no TABLE_NAME needs no AWS at all.
func build(ctx context.Context, getenv func(string) string, metrics io.Writer, logger *slog.Logger) (*monitor.Monitor, error) {
	cfg, err := monitor.ConfigFromEnv(getenv)
	if err != nil {
		return nil, err
	}
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
	}, logger, metrics)
}
