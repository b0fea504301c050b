package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/lambdaruntime"
	"github.com/geolocate-aws/geolocate/pkg/local/syncbuf"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// TestDeadlineHoldsUnderTheRealRuntime runs the built predictor under a
// local Lambda Runtime API that freezes it after each response and kills it
// at the deadline, so a write made after the deadline cannot count. The
// service is far slower than the invocation's time: the paid calls (four at
// once, the function's parallelism) must be cut off early enough to record
// their outcome and post the response before the deadline, and the objects
// that could no longer start must go back untouched.
func TestDeadlineHoldsUnderTheRealRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the function binary")
	}
	const fakeKey = "geo_test_fake_key_1"
	binary, err := lambdaruntime.BuildFunction(t.Context(), "github.com/geolocate-aws/geolocate/functions/predictor", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const bucket = "deadline-uploads"
	parts := startLocalParts(t, bucket, fakeKey)
	parts.sim.SetFaults(geosim.Faults{Latency: time.Minute})

	put := func(key string, seed byte) events.SQSMessage {
		body := append([]byte{0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0x00}, bytes.Repeat([]byte{seed}, 4096)...)
		out, err := parts.s3.Client().PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		ev := events.S3Event{Records: []events.S3EventRecord{{
			EventVersion: "2.1", EventSource: "aws:s3", AWSRegion: awsparts.Region, EventName: "ObjectCreated:Put",
			S3: events.S3Entity{Bucket: events.S3Bucket{Name: bucket}, Object: events.S3Object{
				Key: key, Size: int64(len(body)), ETag: strings.Trim(aws.ToString(out.ETag), `"`), VersionID: aws.ToString(out.VersionId)}},
		}}}
		b, _ := json.Marshal(ev)
		return events.SQSMessage{MessageId: key, ReceiptHandle: "h-" + key, Body: string(b), EventSource: "aws:sqs",
			Attributes: map[string]string{"ApproximateReceiveCount": "1"}}
	}
	var msgs []events.SQSMessage
	for i := range 6 {
		msgs = append(msgs, put(fmt.Sprintf("photo-%d.jpg", i), byte(i)))
	}
	batch, _ := json.Marshal(events.SQSEvent{Records: msgs})

	logs := &syncbuf.Buffer{}
	const timeout = 10 * time.Second
	rt, err := lambdaruntime.Start(lambdaruntime.Config{
		Binary: binary, Timeout: timeout, Stderr: logs, FunctionName: "predictor", Region: awsparts.Region,
		MemorySize: predictor.DefaultMemoryMB, // cdk.json predictorMemoryMb: Lambda's 128 MB default is refused for oversize=downscale
		Env: func() map[string]string {
			env := parts.env()
			env[envvars.FinishReserve] = "2s"
			env[envvars.RatePerMinute] = "6000"
			env[envvars.LogLevel] = "info"
			return env
		}(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })

	res, err := rt.Invoke(t.Context(), batch)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != lambdaruntime.Succeeded {
		t.Fatalf("invocation %s (%s: %s) after %s; logs:\n%s", res.Status, res.ErrorType, res.ErrorMessage, res.Duration, logs)
	}
	var resp events.SQSEventResponse
	if err := json.Unmarshal(res.Payload, &resp); err != nil {
		t.Fatal(err)
	}
	returned := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		returned[f.ItemIdentifier] = true
	}

	store := ledger.New(parts.db.Client(), parts.table)
	lookup := func(key string) *ledger.Record {
		out, err := parts.s3.Client().HeadObject(t.Context(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := store.Lookup(t.Context(), ledger.ObjectRef{Bucket: bucket, Key: key,
			VersionID: aws.ToString(out.VersionId), ETag: strings.Trim(aws.ToString(out.ETag), `"`)})
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	// Every object is accounted for: called, cut off and recorded final,
	// or untouched and returned to the queue. None is lost in between.
	called := 0
	for _, m := range msgs {
		rec := lookup(m.MessageId)
		switch {
		case returned[m.MessageId] && rec == nil:
		case !returned[m.MessageId] && rec != nil && rec.Final() && rec.ErrorCode == ledger.ErrorCodeOutcomeUnknown:
			called++
		default:
			t.Errorf("%s: returned=%t, record %+v; want a final outcome_unknown, or untouched and returned", m.MessageId, returned[m.MessageId], rec)
		}
	}
	if called != 4 || len(returned) != 2 {
		t.Errorf("%d called and %d returned, want 4 (the parallelism) and 2", called, len(returned))
	}
	if n := len(parts.sim.Calls()); n != called {
		t.Errorf("%d calls reached the service, want %d", n, called)
	}
	if res.Duration >= timeout {
		t.Errorf("answered after %s, the timeout is %s", res.Duration, timeout)
	}
}
