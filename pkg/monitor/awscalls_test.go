package monitor

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/local/awscalls"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/syncbuf"
	"github.com/geolocate-aws/geolocate/pkg/secretkey"
	"github.com/geolocate-aws/geolocate/pkg/secretkey/secretkeytest"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// monitorCalls records the AWS calls of the monitor's code: its DynamoDB
// client (the credit history) and its Secrets Manager. main_test.go checks
// them against the monitor's golden list, which infra/policy_calls_test.go
// requires the stack to grant.
var monitorCalls awscalls.Recorder

// codeClient is c for the monitor's code: the same endpoint and settings,
// reporting to monitorCalls. The test's own reads use c.
func codeClient(c *dynamodb.Client) *dynamodb.Client {
	return dynamodb.New(c.Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(slices.Clip(o.APIOptions), monitorCalls.Register)
	})
}

// TestAssembledMonitorCallsAWS runs the monitor as the function builds it
// (Assemble, configured from the stack's environment variables) on DynamoDB
// Local and a fake Secrets Manager: the key comes from the secret, is read
// again after the service refuses it (rotation), the history is written
// and read, and the jobs are listed (jobs.Store.List: Query, GetItem).
func TestAssembledMonitorCallsAWS(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	sim, url := newSim(t)
	const secretID = "geolocate/monitor-test-key"
	secret := secretkeytest.New(secretID, fakeKey).RecordTo(monitorCalls.AddSecretsManager)
	env := map[string]string{
		envvars.TableName:      table,
		envvars.SecretID:       secretID,
		envvars.APIURL:         url,
		envvars.HistoryTTLDays: "14",
		envvars.PipelineName:   "assembled",
		envvars.LogLevel:       "debug",
	}
	cfg, err := LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	logs, metrics := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	mon, err := Assemble(cfg, AWSClients{
		DynamoDB:       func() (DynamoDBAPI, error) { return codeClient(client), nil },
		SecretsManager: func() (secretkey.SecretsManagerAPI, error) { return secret, nil },
	}, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), metrics)
	if err != nil {
		t.Fatal(err)
	}
	run := func(what string) {
		t.Helper()
		rep, err := mon.Handle(context.Background(), events.EventBridgeEvent{ID: what, DetailType: "Scheduled Event"})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !rep.Healthy {
			t.Fatalf("%s: unhealthy: %v", what, rep.Reasons)
		}
	}
	// A job as the CLI creates it, with the test's own client.
	job, err := jobs.New(client, table).Create(context.Background(), jobs.Spec{Kind: jobs.KindBackfill, Bucket: "uploads", RatePerMinute: 20})
	if err != nil {
		t.Fatal(err)
	}
	run("first run")
	if !strings.Contains(metrics.String(), `"`+metricnames.DimJob+`":"`+job.ID+`"`) {
		t.Errorf("no figure of job %s published:\n%s", job.ID, metrics.String())
	}
	before := secret.Calls()
	secret.Rotate(sim.RegenerateKey(fakeKey))
	run("run after rotation")
	if secret.Calls() == before {
		t.Error("the monitor did not read the rotated secret")
	}

	var ops []string
	for _, c := range monitorCalls.Calls() {
		ops = append(ops, c.Service+" "+c.Operation)
	}
	for _, want := range []string{"DynamoDB PutItem", "DynamoDB Query", "DynamoDB GetItem", "Secrets Manager DescribeSecret", "Secrets Manager GetSecretValue"} {
		if !slices.Contains(ops, want) {
			t.Errorf("no %s recorded (recorded %v)", want, ops)
		}
	}
}
