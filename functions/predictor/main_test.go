package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/envvars"
	"github.com/geolocate-aws/geolocate/pkg/geosim"
	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/localaws"
	"github.com/geolocate-aws/geolocate/pkg/localaws/localawstest"
)

func TestMain(m *testing.M) { localawstest.Main(m) }

// TestLocalInvocation wires the function exactly as main does, from the
// environment, against local S3, DynamoDB Local and the simulator, and runs
// the SQS sample event through the same path as `-event FILE`.
func TestLocalInvocation(t *testing.T) {
	const fakeKey = "geo_test_fake_key_1"
	s3srv, err := localaws.StartS3()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s3srv.Close() })
	db := localawstest.SharedDynamoDB(t)
	table := fmt.Sprintf("predictor-main-test-%d", time.Now().UnixNano()) // unique: the DynamoDB Local is shared across runs of -count
	if err := db.CreateTable(t.Context(), table); err != nil {
		t.Fatal(err)
	}
	sim := httptest.NewServer(geosim.New(func(c *geosim.Config) { c.DemoKey = fakeKey }))
	t.Cleanup(sim.Close)

	// The sample event names this bucket, key and ETag: the sample image
	// uploaded here, as `geolocate local --serve` does. It is run unchanged.
	const bucket, key = "geolocate-local-uploads", "harbour at dusk.jpg"
	if err := s3srv.CreateBucket(t.Context(), bucket); err != nil {
		t.Fatal(err)
	}
	image, err := os.ReadFile(filepath.Join("..", "..", "testdata", "images", key))
	if err != nil {
		t.Fatal(err)
	}
	put, err := s3srv.Client().PutObject(t.Context(), &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(image),
	})
	if err != nil {
		t.Fatal(err)
	}
	eventPath := filepath.Join("..", "..", "events", "sqs-s3-put.json")

	for name, value := range map[string]string{
		"AWS_ENDPOINT_URL_S3":       s3srv.Endpoint(),
		"AWS_ENDPOINT_URL_DYNAMODB": db.Endpoint(),
		"AWS_ACCESS_KEY_ID":         "local",
		"AWS_SECRET_ACCESS_KEY":     "local",
		"AWS_REGION":                localaws.Region,
		envvars.TableName:           table,
		envvars.APIURL:              sim.URL,
		envvars.APIKey:              fakeKey,
		envvars.SecretID:            "",
		envvars.BucketName:          bucket,
		envvars.LogLevel:            "error",
	} {
		t.Setenv(name, value)
	}

	h, err := newHandler(t.Context())
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
	rec, err := ledger.New(db.Client(), table).Lookup(t.Context(), ledger.ObjectRef{
		Bucket: bucket, Key: key, ETag: strings.Trim(aws.ToString(put.ETag), `"`)})
	if err != nil || rec == nil || rec.Status != ledger.StatusSucceeded || rec.Place == "" {
		t.Errorf("record = %+v, %v", rec, err)
	}
}

func TestConfigErrorNamesTheVariable(t *testing.T) {
	t.Setenv(envvars.TableName, "")
	if _, err := newHandler(t.Context()); err == nil || !strings.Contains(err.Error(), envvars.TableName) {
		t.Errorf("err = %v", err)
	}
}
