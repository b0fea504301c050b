package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/monitor"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// recordingSecrets returns value for id only, remembering what was asked.
type recordingSecrets struct {
	id, value string
	asked     []string
}

func (s *recordingSecrets) SecretString(_ context.Context, id string) (string, error) {
	s.asked = append(s.asked, id)
	if id != s.id {
		return "", errors.New("ResourceNotFoundException: no such secret")
	}
	return s.value, nil
}

func TestStatusOfADeployedStack(t *testing.T) {
	sim, url := startSim(t)
	ddb, table := awspartstest.DynamoDB(t)
	// Two readings a day apart: 100 credits burnt a day, 900 left.
	history := monitor.NewHistory(ddb, table, "Geo", 0)
	now := time.Now()
	for _, r := range []monitor.Reading{{At: now.Add(-20 * time.Hour), Remaining: 980}, {At: now.Add(-2 * time.Hour), Remaining: 905}} {
		if err := history.Put(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	queues := &fakeQueues{attrs: map[string]map[string]string{
		"https://sqs/queue": {"ApproximateNumberOfMessages": "12", "ApproximateNumberOfMessagesNotVisible": "3"},
		"https://sqs/dlq":   {"ApproximateNumberOfMessages": "2", "ApproximateNumberOfMessagesNotVisible": "0"},
	}}
	const secretArn = "arn:aws:secretsmanager:us-east-1:000000000000:secret:geo-key"
	stacks := fakeStacks{name: "Geo", outputs: map[string]string{
		outputQueueURL:           "https://sqs/queue",
		outputDeadLetterQueueURL: "https://sqs/dlq",
		outputTableName:          table,
		outputSecretArn:          secretArn,
		outputDashboardURL:       "https://console.example/dashboard",
	}}
	useAWS(t, &awsClients{stacks: stacks, queues: queues, tables: ddb})
	secrets := &recordingSecrets{id: secretArn, value: `{"api_key":"` + sim.DemoKey() + `"}`}
	seedRecords(t, ledger.New(ddb, table))

	r := runCLI(t, map[string]string{envvars.APIURL: url}, secrets, "status", "--stack", "Geo")
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{
		"stack", "Geo",
		"credits", "1000 remaining",
		"models", "ready",
		"forecast", "days left",
		"queue", "12 waiting, 3 in flight",
		"dead letters", "2 waiting, 0 in flight",
		"records (24h)", "1 waiting (out_of_credits 1; 1 in the dead-letter queue), 2 succeeded, 1 rejected",
		"https://console.example/dashboard",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, r.stdout)
		}
	}
	if len(secrets.asked) != 1 {
		t.Errorf("secrets asked %v, want the stack's secret once", secrets.asked)
	}
	assertNoKey(t, r)
}

func TestStatusReportsEachUnreadablePart(t *testing.T) {
	sim, url := startSim(t)
	stacks := fakeStacks{name: "Geo", outputs: map[string]string{
		outputQueueURL:           "https://sqs/queue",
		outputDeadLetterQueueURL: "https://sqs/missing",
		outputTableName:          "no-such-table",
	}}
	queues := &fakeQueues{attrs: map[string]map[string]string{
		"https://sqs/queue": {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"},
	}}
	ddb, _ := awspartstest.DynamoDB(t)
	useAWS(t, &awsClients{stacks: stacks, queues: queues, tables: ddb})

	r := runCLI(t, simEnv(url, sim.DemoKey()), nil, "status", "--stack", "Geo")
	if r.code == 0 {
		t.Fatalf("exit 0 although parts were unreadable:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "0 waiting, 0 in flight") || !strings.Contains(r.stdout, "1000 remaining") {
		t.Errorf("the readable parts are missing:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "could not read: forecast, records, dead letters") {
		t.Errorf("stderr = %q", r.stderr)
	}
	assertNoKey(t, r)

	r = runCLI(t, simEnv(url, sim.DemoKey()), nil, "status", "--stack", "Missing")
	if r.code == 0 || !strings.Contains(r.stderr, "describe stack Missing") {
		t.Errorf("unknown stack: exit %d, stderr %q", r.code, r.stderr)
	}
}
