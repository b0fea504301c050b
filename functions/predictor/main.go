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
	if helpRequested(os.Args[1:]) {
		// Help must not need a configuration: answer it before LoadConfig,
		// which would otherwise report the missing variables instead.
		fmt.Fprint(os.Stderr, usage)
		// lambdarun.Main owns the flags: on -h it prints them and exits 0.
		lambdarun.Main("predictor", func(context.Context) error { return nil })
		return
	}
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

	awsCfg, err := lambdarun.LoadAWSConfig(ctx, logger)
	if err != nil {
		return nil, err
	}
	// The clients and their retry configuration: predictor.NewAWSClients.
	return predictor.Assemble(cfg, predictor.NewAWSClients(awsCfg, lambdarun.S3Options), logger, lambdarun.MetricsWriter())
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

// helpRequested reports -h, -help or --help among the flags.
func helpRequested(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--h", "--help":
			return true
		}
	}
	return false
}
