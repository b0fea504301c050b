package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/pipeline"
	"github.com/geolocate-aws/geolocate/pkg/local/syncbuf"
)

// TestSmokeAgainstTheServedLocalStack runs doctor --smoke with local
// --serve's export line: every step runs against the stand-ins (S3, the
// predictor on the simulator, DynamoDB Local, the results bus, SQS,
// CloudWatch alarms to SNS), every reading is "assumed by the rig", and
// nothing is left behind.
func TestSmokeAgainstTheServedLocalStack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole local stack")
	}
	db := awspartstest.SharedDynamoDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var progress syncbuf.Buffer
	ready := make(chan map[string]string, 1)
	done := make(chan error, 1)
	go func() {
		done <- pipeline.Serve(ctx, pipeline.Options{
			ImagesDir: t.TempDir(),
			Getenv:    func(string) string { return "" },
			DynamoDB:  db,
			Table:     fmt.Sprintf("cli-smoke-%d", time.Now().UnixNano()),
			Progress:  &progress,
		}, func(o *pipeline.ServeOptions) {
			o.Alarms = []string{alarmNameOf(pipeline.DefaultStackName)}
			o.Ready = func(env map[string]string) { ready <- env }
		})
	}()
	var env map[string]string
	select {
	case env = <-ready:
	case err := <-done:
		t.Fatalf("Serve: %v\n%s", err, progress.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("Serve never got ready:\n%s", progress.String())
	}
	for _, name := range []string{"AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"} {
		t.Setenv(name, "")
	}
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	for name, v := range env {
		t.Setenv(name, v)
	}
	r := runCLI(t, env, nil, "doctor", "--stack", pipeline.DefaultStackName, "--smoke", "--yes", "--timeout", "2m")
	if r.code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s\nrig:\n%s", r.code, r.stdout, r.stderr, progress.String())
	}
	for _, rd := range openReadings {
		if line := reading(t, r.stdout, rd.id); !strings.Contains(line, "assumed by the rig") {
			t.Errorf("locally: %s", line)
		}
	}
	if strings.Contains(r.stdout, "NOT deleted") {
		t.Errorf("left something behind:\n%s", r.stdout)
	}
}
