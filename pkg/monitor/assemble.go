package monitor

import (
	"io"
	"log/slog"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/secretkey"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// The monitor runs every few minutes: a short retry budget keeps one slow
// service response from overlapping the next run.
const (
	attemptTimeout = 15 * time.Second
	maxAttempts    = 3
	maxBackoff     = 5 * time.Second
)

// AWSClients are the AWS clients behind the monitor. The Lambda function
// builds them from the default configuration; local runs point them at local
// parts.
type AWSClients struct {
	// DynamoDB keeps the credit history and lists the jobs; nil turns the
	// forecast and the job figures off. It is called only when
	// Config.TableName is set.
	DynamoDB func() (DynamoDBAPI, error)
	// SecretsManager is called only when the key comes from a secret.
	SecretsManager func() (secretkey.SecretsManagerAPI, error)
	// EventBridge puts the Model Available events; called only when
	// Config.EventBus is set.
	EventBridge func() (EventsAPI, error)
}

// Assemble builds the Monitor from its configuration and AWS clients: the
// service client, the cached key provider and the credit history. It is the
// one composition of the monitor, shared by the function and local runs.
func Assemble(cfg Config, clients AWSClients, logger *slog.Logger, metrics io.Writer) (*Monitor, error) {
	client, err := geoapi.New(cfg.APIURL, func(o *geoapi.Options) {
		o.Logger = logger
		o.KeyHeader = cfg.KeyHeader
		o.AttemptTimeout = attemptTimeout
		o.MaxAttempts = maxAttempts
		o.MaxBackoff = maxBackoff
	})
	if err != nil {
		return nil, err
	}
	keys, err := secretkey.FromSettings(cfg.SecretID, cfg.APIKey, clients.SecretsManager)
	if err != nil {
		return nil, err
	}
	var history *History
	var jobList JobLister
	if cfg.TableName != "" && clients.DynamoDB != nil {
		ddb, err := clients.DynamoDB()
		if err != nil {
			return nil, err
		}
		history = NewHistory(ddb, cfg.TableName, cfg.PipelineName, cfg.HistoryTTL)
		jobList = jobs.New(ddb, cfg.TableName)
	} else {
		logger.Warn("credit history disabled: no burn rate or days remaining", "variable", envvars.TableName)
	}
	var events EventsAPI
	if cfg.EventBus != "" && clients.EventBridge != nil {
		if events, err = clients.EventBridge(); err != nil {
			return nil, err
		}
	}
	logger.Info("monitor configured", "config", cfg.String())
	return New(cfg, Options{Service: client, Keys: keys, History: history, Metrics: metrics, Logger: logger, Events: events, EventBus: cfg.EventBus, Jobs: jobList})
}
