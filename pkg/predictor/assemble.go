package predictor

import (
	"io"
	"log/slog"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
	"github.com/geolocate-aws/geolocate/pkg/secretkey"
)

// AWSClients are the AWS clients behind the handler. The Lambda function
// builds them from the default configuration; local runs point them at local
// parts. Either way Assemble wires the rest identically.
type AWSClients struct {
	S3 ObjectStore
	// DynamoDB holds the ledger, the pacer's schedule and the jobs.
	DynamoDB jobs.DynamoDBAPI
	// SecretsManager is called only when the key comes from a secret
	// (Config.SecretID), so a local run with a plain key needs no AWS.
	SecretsManager func() (secretkey.SecretsManagerAPI, error)
	// Visibility delays messages held back by the daily budget; optional.
	Visibility VisibilityChanger
}

// Assemble builds the handler from its configuration and AWS clients: the
// ledger, the cached key provider and the service client. It is the one
// composition of the predictor, shared by the function and local runs.
func Assemble(cfg Config, clients AWSClients, logger *slog.Logger, metrics io.Writer, optFns ...func(*Options)) (*Handler, error) {
	store := ledger.New(clients.DynamoDB, cfg.TableName, func(o *ledger.Options) { o.RecordTTL = cfg.RecordTTL })
	if cfg.SecretID == "" {
		logger.Warn("using the API key from the environment: for local runs only")
	}
	keys, err := secretkey.FromSettings(cfg.SecretID, cfg.APIKey, clients.SecretsManager)
	if err != nil {
		return nil, err
	}
	service, err := geoapi.New(cfg.APIURL, func(o *geoapi.Options) { o.Logger, o.KeyHeader = logger, cfg.KeyHeader })
	if err != nil {
		return nil, err
	}
	pace, err := NewPacer(cfg, clients.DynamoDB, logger)
	if err != nil {
		return nil, err
	}
	return New(cfg, Deps{
		Pacer:      pace,
		Objects:    clients.S3,
		Ledger:     store,
		Service:    service,
		Keys:       keys,
		Visibility: clients.Visibility,
		Jobs:       jobs.New(clients.DynamoDB, cfg.TableName),
		Logger:     logger,
		Metrics:    metrics,
	}, optFns...)
}

// NewPacer returns the pacer cfg.Pacing names: one schedule shared by every
// instance in the results table (the item "PACE#<pipeline>", above 3,000 a
// minute with shards "PACE#<pipeline>#<k>", see pacer.Shards), or the
// instance's own limiter at R/N. optFns tune the shared one (tests and the
// benchmark set its clock); the instance limiter takes their Clock.
func NewPacer(cfg Config, ddb pacer.DynamoDBAPI, logger *slog.Logger, optFns ...func(*pacer.Options)) (Pacer, error) {
	if cfg.Pacing == PacingInstance {
		var o pacer.Options
		for _, fn := range optFns {
			fn(&o)
		}
		return pacer.NewInstance(cfg.PerInstanceRate(), func(io *pacer.InstanceOptions) { io.Clock = o.Clock }), nil
	}
	return pacer.NewShared(ddb, cfg.TableName, cfg.RatePerMinute, append([]func(*pacer.Options){func(o *pacer.Options) {
		o.Name = cfg.PipelineName
		o.Logger = logger
		// A 429 moves the schedule at most by the configured cap, and a
		// slot is held at most as long as SQS can hide its message.
		o.MaxDelay = cfg.MaxServerDelay
		o.Horizon = maxVisibility
	}}, optFns...)...)
}
