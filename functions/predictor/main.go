// Command predictor is the predictor Lambda function: S3 uploads, delivered
// through SQS, become prediction records in DynamoDB. The logic lives in
// pkg/predictor; this file only wires it to AWS at cold start.
//
// Outside Lambda, `go run ./functions/predictor -event FILE` (or `-event -`)
// runs the handler once on that event and prints its response.
package main

import (
	"context"
	"io"
	"os"

	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
)

func main() {
	lambdarun.Main("predictor", usage, func(ctx context.Context) (any, error) {
		h, err := build(ctx, os.Getenv, os.Stderr, lambdarun.MetricsWriter())
		if err != nil {
			return nil, err
		}
		return h.Handle, nil
	})
}

// build wires the handler from the environment once per execution
// environment, so clients, the key cache and the pacer are reused across
// invocations: configuration, logger, AWS clients, then predictor.Assemble.
func build(ctx context.Context, getenv func(string) string, logs, metrics io.Writer) (*predictor.Handler, error) {
	cfg, err := predictor.LoadConfig(getenv)
	if err != nil {
		return nil, err
	}
	logger := lambdarun.NewLogger(logs, cfg.LogLevel)
	awsCfg, err := lambdarun.LoadAWSConfig(ctx, logger)
	if err != nil {
		return nil, err
	}
	// The clients and their retry configuration: predictor.NewAWSClients.
	return predictor.Assemble(cfg, predictor.NewAWSClients(awsCfg, lambdarun.S3Options), logger, metrics)
}

// usage precedes the flags in -h's output.
const usage = `usage: predictor [-event FILE|-] [-timeout D]

The predictor Lambda function. Under Lambda it serves the runtime; outside,
-event runs the handler once on an event file (- for stdin) and prints its
response. It reads its configuration from the environment: TABLE_NAME and
GEO_API_URL are required, and the key comes from GEO_SECRET_ID (the
secret's id or ARN) or, locally, GEO_API_KEY. ` + "`geolocate local --serve`" + `
prints a complete set for the local parts.

`
