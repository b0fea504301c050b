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

	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
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
	// The clients and their retry configuration: predictor.NewAWSClients.
	return predictor.Assemble(cfg, predictor.NewAWSClients(awsCfg, lambdarun.S3Options), logger, lambdarun.MetricsWriter())
}
