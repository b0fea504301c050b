package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/monitor"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/secretkey"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// PipelineName is the Pipeline metric dimension of local runs.
const PipelineName = "local"

// rigOwned are the settings' variables the rig decides itself: the
// service it started (a GEO_API_URL left in the shell is never called) and
// its one poller's concurrency.
var rigOwned = []string{envvars.APIURL, envvars.MaxConcurrency}

// passThrough are the settings a user may set in the shell to tune the
// local functions as they would tune the stack through CDK context: every
// variable of the settings table the rig does not own, Lambda's memory
// size among them (it sizes the downscale's memory budget; unset, the
// stack's default).
func passThrough() []string {
	return slices.DeleteFunc(settings.Passed(), func(name string) bool { return slices.Contains(rigOwned, name) })
}

// functionEnv is the environment the stack would give the functions, with
// the key itself (GEO_API_KEY) in place of the secret id.
func functionEnv(opts Options, svc *service) map[string]string {
	env := map[string]string{
		envvars.TableName:  opts.Table,
		envvars.APIURL:     svc.url,
		envvars.APIKey:     svc.key,
		envvars.BucketName: opts.Bucket,
		// Locally the pollers share ONE handler, hence one pacer: with
		// GEO_PACING=instance it gets the whole rate. The default, shared
		// pacing, keeps its schedule in the local table as deployed.
		envvars.MaxConcurrency: "1",
		envvars.PipelineName:   PipelineName,
	}
	switch {
	case svc.backend:
		// The backend's limit, as a deployment against it is configured:
		// a 429 there costs the rest of a 60 s window.
		env[envvars.RatePerMinute] = strconv.Itoa(geosim.BackendRateLimit)
		env[envvars.APIKeyHeader] = svc.keyHeader
	case svc.sim != nil:
		env[envvars.RatePerMinute] = simulatorRatePerMinute
	}
	for _, name := range passThrough() {
		if v := opts.Getenv(name); v != "" {
			env[name] = v
		}
	}
	return env
}

func getenvFrom(env map[string]string) func(string) string {
	return func(name string) string { return env[name] }
}

// newPredictor builds the predictor's handler the way its composition root
// does, from the environment map, with the AWS clients pointed at the
// local services.
func newPredictor(env map[string]string, aws *localAWS, queue *sqsqueue.Queue, opts Options) (*predictor.Handler, error) {
	cfg, err := predictor.LoadConfig(getenvFrom(env))
	if err != nil {
		return nil, fmt.Errorf("predictor: %w", err)
	}
	h, err := predictor.Assemble(cfg, predictor.AWSClients{
		S3:             aws.s3.Client(),
		DynamoDB:       aws.ddb.Client(),
		SecretsManager: noSecretsManager,
		// The predictor delays messages on the local queue as
		// ChangeMessageVisibility does on SQS, with SQS's limits.
		Visibility: sqsqueue.Visibility{Queue: queue},
	}, lambdarun.NewLogger(opts.FunctionLogs, cfg.LogLevel), opts.FunctionLogs)
	if err != nil {
		return nil, fmt.Errorf("predictor: %w", err)
	}
	return h, nil
}

// noSecretsManager: local runs hand the functions the key itself; there is
// no Secrets Manager emulator here.
func noSecretsManager() (secretkey.SecretsManagerAPI, error) {
	return nil, errors.New("no Secrets Manager in local runs: the key comes from " + envvars.APIKey)
}

// newMonitor builds the monitor's handler from the same environment.
func newMonitor(env map[string]string, aws *localAWS, opts Options) (*monitor.Monitor, error) {
	cfg, err := monitor.LoadConfig(getenvFrom(env))
	if err != nil {
		return nil, err
	}
	// DynamoDB Local's index is consistent: the credit estimate counts a
	// record at once, so the report after the run includes the run.
	cfg.RecordSettle = 0
	return monitor.Assemble(cfg, monitor.AWSClients{
		DynamoDB:       func() (monitor.DynamoDBAPI, error) { return aws.ddb.Client(), nil },
		SecretsManager: noSecretsManager,
	}, lambdarun.NewLogger(opts.FunctionLogs, cfg.LogLevel), opts.FunctionLogs)
}

// runMonitor invokes the monitor once on a scheduled event, through the
// Lambda adapter like the predictor.
func runMonitor(ctx context.Context, m *monitor.Monitor) (*monitor.Report, error) {
	payload, err := json.Marshal(events.EventBridgeEvent{
		Version:    "0",
		ID:         uuid.NewString(),
		DetailType: "Scheduled Event",
		Source:     "aws.events",
		AccountID:  sqsqueue.DefaultAccountID,
		Time:       time.Now().UTC(),
		Region:     sqsqueue.DefaultRegion,
		Resources:  []string{"arn:aws:events:" + sqsqueue.DefaultRegion + ":" + sqsqueue.DefaultAccountID + ":rule/geolocate-local-monitor"},
		Detail:     json.RawMessage(`{}`),
	})
	if err != nil {
		return nil, fmt.Errorf("monitor event: %w", err)
	}
	out, err := lambdarun.Invoke(ctx, m.Handle, payload, time.Minute)
	if err != nil {
		return nil, fmt.Errorf("monitor: %w", err)
	}
	var rep monitor.Report
	if err := json.Unmarshal(out, &rep); err != nil {
		return nil, fmt.Errorf("monitor: decode report: %w", err)
	}
	return &rep, nil
}
