package main

import (
	"context"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsapi"
	"github.com/geolocate-aws/geolocate/pkg/local/awscalls"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// feederCalls records the AWS calls of the feeder as the function builds
// it. TestMain checks them against the feeder's golden list, which
// infra/policy_calls_test.go requires the stack to grant.
var feederCalls awscalls.Recorder

func TestMain(m *testing.M) {
	os.Exit(awscalls.FinishMain(awspartstest.Run(m), "../../testdata/aws-calls/jobfeeder.json", "functions/jobfeeder", feederCalls.Calls()))
}

// TestBuiltFeederCallsAWS runs the handler build wires from the
// environment, as Lambda runs it, against DynamoDB Local, the in-memory S3
// and the SQS stand-in, through every kind of job and every step a job
// goes through: a backfill that reopens an outcome_unknown record
// (listing, the records' reads, the manifest, feeding), a reprocess over
// the results table (the by-status index), the day's budget read, and both
// jobs settled done and leaving the active partition. What it calls is
// what the stack must grant the feeder's role.
func TestBuiltFeederCallsAWS(t *testing.T) {
	ctx := context.Background()
	db, table := awspartstest.DynamoDB(t)
	s3c, bucket := awspartstest.S3(t)
	queues := awsapi.NewSQS()
	queue := sqsqueue.New()
	queues.AddQueue("uploads", queue, 5, "uploads-dlq")
	srv, err := awsapi.Listen(queues.Handler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })

	// The function's AWS configuration comes from the process environment,
	// as under Lambda.
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_DYNAMODB":   aws.ToString(db.Options().BaseEndpoint),
		"AWS_ENDPOINT_URL_S3":         aws.ToString(s3c.Options().BaseEndpoint),
		"AWS_ENDPOINT_URL_SQS":        srv.Endpoint(),
		"AWS_REGION":                  "us-east-1",
		"AWS_ACCESS_KEY_ID":           "AKIDLOCALTEST",
		"AWS_SECRET_ACCESS_KEY":       "local",
		"AWS_CONFIG_FILE":             os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_EC2_METADATA_DISABLED":   "true",
	} {
		t.Setenv(k, v)
	}
	if aws.ToString(db.Options().BaseEndpoint) == "" || aws.ToString(s3c.Options().BaseEndpoint) == "" {
		t.Fatal("the local parts' clients name no endpoint")
	}
	env := map[string]string{
		envvars.TableName:        table,
		envvars.QueueURL:         queues.QueueURL(srv.Endpoint(), "uploads"),
		envvars.RatePerMinute:    "600",
		envvars.JobWindowMinutes: "15",
		envvars.DailyBudget:      "100000",
	}

	// The jobs' inputs, written with the test's own clients (not recorded):
	// three photos, one recorded outcome_unknown (a requeue reopens it), and
	// two succeeded records a reprocess selects.
	store := jobs.New(db, table)
	led := ledger.New(db, table)
	keys := []string{"in/a.jpg", "in/b.jpg", "in/c.jpg"}
	for _, k := range keys {
		if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String(k), Body: strings.NewReader("jpeg")}); err != nil {
			t.Fatal(err)
		}
	}
	listed, err := s3c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: &bucket})
	if err != nil || len(listed.Versions) != len(keys) {
		t.Fatalf("listing the photos: %v (%d versions)", err, len(listed.Versions))
	}
	for i, v := range listed.Versions {
		ref := ledger.ObjectRef{Bucket: bucket, Key: aws.ToString(v.Key), VersionID: aws.ToString(v.VersionId), ETag: aws.ToString(v.ETag)}
		claim, _, err := led.Claim(ctx, ref, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			err = led.Fail(ctx, claim, ledger.ErrorCodeOutcomeUnknown, "the answer was lost", false)
		} else {
			err = led.Complete(ctx, claim, ledger.Record{Size: 4})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := led.StartRun(ctx, ledger.Run{Name: "v2", ModelID: "global_v0.2", Selection: "status=succeeded", Price: 1, Cap: 10}); err != nil {
		t.Fatal(err)
	}
	backfill, err := store.Create(ctx, jobs.Spec{Kind: jobs.KindBackfill, Bucket: bucket, Requeue: true, RatePerMinute: 600})
	if err != nil {
		t.Fatal(err)
	}
	reprocess, err := store.Create(ctx, jobs.Spec{Kind: jobs.KindReprocess, Run: "v2", ModelID: "global_v0.2", Price: 1,
		Selection: "status=succeeded", RatePerMinute: 600})
	if err != nil {
		t.Fatal(err)
	}

	handler, err := build(ctx, func(k string) string { return env[k] }, io.Discard,
		func(c *aws.Config) { c.APIOptions = append(slices.Clip(c.APIOptions), feederCalls.Register) })
	if err != nil {
		t.Fatal(err)
	}
	run := func() jobs.Report {
		t.Helper()
		rep, err := handler(ctx)
		if err != nil || len(rep.Errors) > 0 {
			t.Fatalf("feeder run: %v %v", err, rep.Errors)
		}
		return rep
	}
	// Run 1 lists both jobs and feeds them (600 a minute feeds them whole).
	run()
	want := map[string]int64{backfill.ID: 1, reprocess.ID: 2} // the requeued photo; the two succeeded records
	for id, n := range want {
		j, err := store.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !j.ListingDone || j.Sent != n {
			t.Fatalf("job %s after a run: listed %d (done %v), sent %d, skipped %d; want %d sent", id, j.Listed, j.ListingDone, j.Sent, j.Skipped, n)
		}
		// The predictor ends each object it was sent.
		for range n {
			if err := store.AddEnd(ctx, id, jobs.OutcomeDone, 1, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := queue.Len(); got != 3 {
		t.Errorf("the upload queue holds %d messages, want 3", got)
	}
	// Run 2 settles both; run 3 finds no active job.
	run()
	for id := range want {
		if j, err := store.Get(ctx, id); err != nil || j.State != jobs.StateDone {
			t.Fatalf("job %s after the ends: %+v, %v; want done", id, j, err)
		}
	}
	if rep := run(); rep.Jobs != 0 {
		t.Errorf("a done job is still active: %+v", rep)
	}
	if len(feederCalls.Calls()) == 0 {
		t.Fatal("no AWS call was recorded")
	}
	t.Logf("%d AWS calls recorded", len(feederCalls.Calls()))
}
