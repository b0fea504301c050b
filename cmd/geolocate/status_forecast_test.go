package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/monitor"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// TestStatusWithOneReadingSaysHowManyAreNeeded: one credit reading gives no
// forecast, and status says so with the count instead of printing 0 days
// (which reads as "runs out today").
func TestStatusWithOneReadingSaysHowManyAreNeeded(t *testing.T) {
	sim, url := startSim(t)
	ddb, table := awspartstest.DynamoDB(t)
	history := monitor.NewHistory(ddb, table, "Geo", 0)
	if err := history.Put(context.Background(), monitor.Reading{At: time.Now().Add(-time.Hour), Remaining: 980}); err != nil {
		t.Fatal(err)
	}
	queues := &fakeQueues{attrs: map[string]map[string]string{
		"https://sqs/queue": {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"},
		"https://sqs/dlq":   {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"},
	}}
	const secretArn = "arn:aws:secretsmanager:us-east-1:000000000000:secret:geo-key"
	stacks := fakeStacks{name: "Geo", outputs: map[string]string{
		outputQueueURL:           "https://sqs/queue",
		outputDeadLetterQueueURL: "https://sqs/dlq",
		outputTableName:          table,
		outputSecretArn:          secretArn,
	}}
	useAWS(t, &awsClients{stacks: stacks, queues: queues, tables: ddb})
	secrets := &recordingSecrets{id: secretArn, value: `{"api_key":"` + sim.DemoKey() + `"}`}

	r := runCLI(t, map[string]string{envvars.APIURL: url}, secrets, "status", "--stack", "Geo")
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !regexp.MustCompile(`(?m)^forecast +not enough readings yet \(1 of 2\)$`).MatchString(r.stdout) {
		t.Errorf("status forecast line, want %q:\n%s", "not enough readings yet (1 of 2)", r.stdout)
	}
	if strings.Contains(r.stdout, "days left") {
		t.Errorf("a runway from one reading:\n%s", r.stdout)
	}
}
