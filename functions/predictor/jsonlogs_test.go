package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/lambdaruntime"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
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
	parts := startLocalParts(t, sampleBucket, fakeKey)
	parts.uploadSample(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "AWS_REGION=" + awsparts.Region}
	for name, value := range parts.env() {
		env = append(env, name+"="+value)
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
