package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/pipeline"
	"github.com/geolocate-aws/geolocate/pkg/local/syncbuf"
)

// TestCLIAgainstTheServedLocalStack pastes local --serve's export line into
// the CLI's environment: status, results --json and doctor read the local
// stack as a deployed one, an upload through its S3 endpoint is recorded through the
// served queue, and the stop says what ran.
func TestCLIAgainstTheServedLocalStack(t *testing.T) {
	stack := serveLocalStack(t, "cli-serve", nil)
	env, progress := stack.env, stack.progress

	r := runCLI(t, env, awsSecrets{}, "status")
	if r.code != exitOK || !strings.Contains(r.stdout, "stack") || !strings.Contains(r.stdout, "queue") || !strings.Contains(r.stdout, "dead letters") {
		t.Fatalf("status: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	jpeg, err := os.ReadFile("../../testdata/images/gradient-64x48.jpg")
	if err != nil {
		t.Fatal(err)
	}
	s3c := stack.s3Client()
	if _, err := s3c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(env["BUCKET_NAME"]), Key: aws.String("cli/photo.jpg"), Body: bytes.NewReader(jpeg)}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		r = runCLI(t, env, awsSecrets{}, "results", "--json", "--since", "1h")
		var rows []struct{ Key, Status string }
		if r.code == exitOK {
			if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
				t.Fatalf("results --json: %v\n%s", err, r.stdout)
			}
		}
		if len(rows) == 1 && rows[0].Key == "cli/photo.jpg" && rows[0].Status == "succeeded" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("results --json never showed the upload succeeded: exit %d\nstdout:\n%s\nstderr:\n%s\nserve:\n%s", r.code, r.stdout, r.stderr, progress.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if r := runCLI(t, env, awsSecrets{}, "status"); r.code != exitOK || !strings.Contains(r.stdout, "1 succeeded") {
		t.Errorf("status after the upload: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	// doctor reads the stack as deployed: the key through its secret, the
	// predictor's settings, the queue's trigger, the monitor's heartbeat
	// (its first reading at the start), the alarm topic.
	if r := runCLI(t, env, awsSecrets{}, "doctor"); r.code != exitOK || !strings.Contains(r.stdout, "8 checks: 8 passed") {
		t.Errorf("doctor: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	if err := stack.stop(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if text := progress.String(); !strings.Contains(text, "stopped   what ran while served:") || !strings.Contains(text, "records   1 in table") {
		t.Errorf("the stop did not say what ran:\n%s", text)
	}
}

// A shell holding the export line of a stack that has stopped fails every
// AWS command at once, in one line naming the endpoint.
func TestCLIWithTheExportLineOfAStoppedStack(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stale := "http://" + l.Addr().String()
	l.Close()
	env := map[string]string{"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_REGION": "us-east-1",
		"AWS_ENDPOINT_URL_CLOUDFORMATION": stale, "AWS_ENDPOINT_URL_DYNAMODB": stale}
	for _, args := range [][]string{{"status"}, {"doctor"}, {"results", "--since", "1h"}} {
		r := runCLI(t, env, nil, args...)
		if r.code != exitError || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 ||
			!strings.Contains(r.stderr, "the local rig's stack at "+stale+" (AWS_ENDPOINT_URL_CLOUDFORMATION, from local --serve's export line) does not answer") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
}

// servedStack is a local --serve stack a test started, with its export
// line set as the test's whole AWS environment.
type servedStack struct {
	env      map[string]string
	progress *syncbuf.Buffer
	// stop ends Serve and returns its error; the test's cleanup calls it
	// too, so a test that never stops the stack still waits for it.
	stop func() error
}

// awsConfig is an SDK configuration from the stack's export line: its
// region and its fake credentials (each client names its endpoint).
func (s *servedStack) awsConfig() aws.Config {
	return aws.Config{Region: s.env["AWS_REGION"],
		Credentials: credentials.NewStaticCredentialsProvider(s.env["AWS_ACCESS_KEY_ID"], s.env["AWS_SECRET_ACCESS_KEY"], "")}
}

// s3Client is an S3 client on the stack's S3 endpoint (its front, which
// announces uploads to the stack's bucket), path-style as local S3 needs.
func (s *servedStack) s3Client() *s3.Client {
	return s3.NewFromConfig(s.awsConfig(), func(o *s3.Options) {
		o.BaseEndpoint = aws.String(s.env["AWS_ENDPOINT_URL_S3"])
		o.UsePathStyle = true
	})
}

// serveLocalStack starts pipeline.Serve on the shared DynamoDB Local with
// a table of its own (named from table) and the stack's settings from
// settings (its Options.Getenv: nil is every default, the simulator as the
// service), waits until every part answers,
// and points the SDK (the process environment) and the CLI (its getenv)
// at it, and at nothing else of this shell's AWS setup.
func serveLocalStack(t *testing.T, table string, settings map[string]string, optFns ...func(*pipeline.ServeOptions)) *servedStack {
	t.Helper()
	db := awspartstest.SharedDynamoDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	progress := &syncbuf.Buffer{}
	ready := make(chan map[string]string, 1)
	done := make(chan error, 1)
	go func() {
		done <- pipeline.Serve(ctx, pipeline.Options{
			ImagesDir: t.TempDir(),
			Getenv:    func(k string) string { return settings[k] },
			DynamoDB:  db,
			Table:     fmt.Sprintf("%s-%d", table, time.Now().UnixNano()),
			Progress:  progress,
		}, append(optFns, func(o *pipeline.ServeOptions) { o.Ready = func(env map[string]string) { ready <- env } })...)
	}()
	var once sync.Once
	var serveErr error
	stop := func() error {
		once.Do(func() { cancel(); serveErr = <-done })
		return serveErr
	}
	t.Cleanup(func() { _ = stop() })
	var env map[string]string
	select {
	case env = <-ready:
	case err := <-done:
		once.Do(func() { cancel(); serveErr = err })
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
	return &servedStack{env: env, progress: progress, stop: stop}
}
