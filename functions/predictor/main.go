// Command predictor is the predictor Lambda function: S3 uploads (through
// SQS, or directly) become prediction records in DynamoDB. The logic lives in
// pkg/predictor; this file only wires it to AWS at cold start.
//
// Outside Lambda, `go run ./functions/predictor -event FILE` (or `-event -`)
// runs the handler once on that event and prints its response.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/secretkey"
)

func main() {
	h, err := newHandler(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "predictor: %v\n", err)
		os.Exit(1)
	}
	lambdarun.Main("predictor", h.Handle)
}

// newHandler builds the handler once per execution environment, so clients,
// the key cache and the rate limiter are reused across invocations.
func newHandler(ctx context.Context) (*predictor.Handler, error) {
	cfg, err := predictor.LoadConfig(os.Getenv)
	if err != nil {
		return nil, err
	}
	logger := lambdarun.NewLogger(os.Stderr, cfg.LogLevel)

	awsCfg, err := lambdarun.LoadAWSConfig(ctx)
	if err != nil {
		return nil, err
	}
	return predictor.Assemble(cfg, predictor.AWSClients{
		S3:       s3.NewFromConfig(awsCfg, lambdarun.S3Options),
		DynamoDB: dynamodb.NewFromConfig(awsCfg),
		SecretsManager: func() (secretkey.SecretsManagerAPI, error) {
			return secretsmanager.NewFromConfig(awsCfg), nil
		},
		Visibility: predictor.NewSQSVisibility(sqs.NewFromConfig(awsCfg)),
	}, logger, lambdarun.MetricsWriter())
}
