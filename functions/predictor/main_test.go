package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

func TestMain(m *testing.M) { awspartstest.Main(m) }

// TestLocalInvocation wires the function exactly as main does, from the
// environment, against local S3, DynamoDB Local and the simulator, and runs
// the SQS sample event through the same path as `-event FILE`.
func TestLocalInvocation(t *testing.T) {
	parts := startLocalParts(t, sampleBucket, "geo_test_fake_key_1")
	// The sample event names this bucket, key and ETag: the sample image
	// uploaded here, as `geolocate local --serve` does. It is run unchanged.
	put := parts.uploadSample(t)
	eventPath := filepath.Join("..", "..", "events", "sqs-s3-put.json")

	env := parts.env()
	env["AWS_REGION"] = awsparts.Region
	env[envvars.SecretID] = ""
	env[envvars.LogLevel] = "error"
	for name, value := range env {
		t.Setenv(name, value)
	}

	h, err := build(t.Context(), os.Getenv, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	out, err := lambdarun.InvokeFile(context.Background(), h.Handle, eventPath, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var resp events.SQSEventResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("response %s: %v", out, err)
	}
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("response = %s", out)
	}
	if !strings.Contains(string(out), `"batchItemFailures":[]`) {
		t.Errorf("response = %s", out)
	}
	// The event carries no version id (an unversioned bucket's events do
	// not), so the record is keyed by the ETag.
	rec, err := ledger.New(parts.db.Client(), parts.table).Lookup(t.Context(), ledger.ObjectRef{
		Bucket: sampleBucket, Key: sampleKey, ETag: strings.Trim(aws.ToString(put.ETag), `"`)})
	if err != nil || rec == nil || rec.Status != ledger.StatusSucceeded || rec.Place == "" {
		t.Errorf("record = %+v, %v", rec, err)
	}
}

func TestConfigErrorNamesTheVariable(t *testing.T) {
	env := map[string]string{envvars.APIURL: "http://127.0.0.1:1", envvars.APIKey: "geo_test_fake_key_1"}
	if _, err := build(t.Context(), func(k string) string { return env[k] }, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), envvars.TableName) {
		t.Errorf("err = %v", err)
	}
}
