package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/envvars"
	"github.com/geolocate-aws/geolocate/pkg/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/lambdaruntime"
	"github.com/geolocate-aws/geolocate/pkg/localaws"
	"github.com/geolocate-aws/geolocate/pkg/localaws/localawstest"
)

// TestAdvertisedRunsLogOnlyJSON runs the README's two invocations of the
// built function (`-event events/sqs-s3-put.json`, the first geolocates, the
// second is a no-op redelivery) against the local parts as
// `geolocate local --serve` sets them up, and requires every line the
// function writes to stderr to be a JSON object: no plain-text "SDK ..."
// line from the AWS SDK. The second run used to print the SDK's WARN
// "failed to close HTTP response body ... did not match expected checksum"
// (DynamoDB's CRC32 check of a failed conditional write), the first its
// DEBUG "Response has no supported checksum" (gofakes3 sent no S3 checksum).
// A third run at LOG_LEVEL=debug must be JSON too: the SDK's debug lines
// go through slog.
func TestAdvertisedRunsLogOnlyJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the function and starts the local parts")
	}
	const fakeKey = "geo_test_fake_key_json_logs"
	bin, err := lambdaruntime.BuildFunction(t.Context(), "github.com/geolocate-aws/geolocate/functions/predictor", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s3srv, err := localaws.StartS3()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s3srv.Close() })
	db := localawstest.SharedDynamoDB(t)
	table := fmt.Sprintf("predictor-json-logs-%d", time.Now().UnixNano())
	if err := db.CreateTable(t.Context(), table); err != nil {
		t.Fatal(err)
	}
	sim := httptest.NewServer(geosim.New(func(c *geosim.Config) { c.DemoKey = fakeKey }))
	t.Cleanup(sim.Close)

	const bucket, key = "geolocate-local-uploads", "harbour at dusk.jpg"
	if err := s3srv.CreateBucket(t.Context(), bucket); err != nil {
		t.Fatal(err)
	}
	image, err := os.ReadFile(filepath.Join("..", "..", "testdata", "images", key))
	if err != nil {
		t.Fatal(err)
	}
	// Uploaded as `geolocate local --serve` does: the local client, which
	// sends no checksum (S3 then computes its default CRC64NVME).
	if _, err := s3srv.Client().PutObject(t.Context(), &s3.PutObjectInput{
		Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(image),
	}); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"AWS_ENDPOINT_URL_S3=" + s3srv.Endpoint(),
		"AWS_ENDPOINT_URL_DYNAMODB=" + db.Endpoint(),
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local",
		"AWS_REGION=" + localaws.Region,
		envvars.TableName + "=" + table,
		envvars.APIURL + "=" + sim.URL,
		envvars.APIKey + "=" + fakeKey,
		envvars.BucketName + "=" + bucket,
	}
	eventPath := filepath.Join("..", "..", "events", "sqs-s3-put.json")
	runs := []struct {
		name, logLevel, wantMsg string
	}{
		{"first run", "", "prediction recorded"},
		{"redelivery", "", "duplicate delivery: already recorded"},
		{"redelivery at debug", "debug", "duplicate delivery: already recorded"},
	}
	for _, run := range runs {
		cmd := exec.CommandContext(t.Context(), bin, "-event", eventPath)
		cmd.Env = append(env, envvars.LogLevel+"="+run.logLevel)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", run.name, err, stderr.String())
		}
		if got := strings.TrimSpace(stdout.String()); got != `{"batchItemFailures":[]}` {
			t.Errorf("%s: response %q", run.name, got)
		}
		sawMsg := false
		for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
			var fields map[string]any
			if err := json.Unmarshal([]byte(line), &fields); err != nil {
				t.Errorf("%s: a line that is not JSON: %q", run.name, line)
				continue
			}
			if fields["msg"] == run.wantMsg {
				sawMsg = true
			}
			if fields["source"] == "aws-sdk" && fields["level"] != "DEBUG" {
				t.Errorf("%s: the SDK warned: %q", run.name, line)
			}
		}
		if !sawMsg {
			t.Errorf("%s: no %q line in\n%s", run.name, run.wantMsg, stderr.String())
		}
	}
}
