package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/shared/s3event"
)

// uploadEvent is the S3 ObjectCreated notification S3 would put on the
// queue for obj (key URL-encoded as S3 encodes it).
func uploadEvent(t testing.TB, obj object) string {
	t.Helper()
	body, err := s3event.Body(s3event.ObjectCreated{
		Bucket: obj.Bucket, Key: obj.Key, Size: obj.Size, ETag: obj.ETag, VersionID: obj.VersionID,
	})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// removedEvent is the notification of a deletion: valid, but not an upload.
func removedEvent(t testing.TB, obj object) string {
	t.Helper()
	body, err := s3event.Body(s3event.ObjectCreated{
		Bucket: obj.Bucket, Key: obj.Key, VersionID: obj.VersionID, EventName: "ObjectRemoved:Delete",
	})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// testEvent is what S3 sends when a notification is configured.
func testEvent(bucket string) string {
	return `{"Service":"Amazon S3","Event":"s3:TestEvent","Time":"2026-01-01T00:00:00.000Z","Bucket":"` +
		bucket + `","RequestId":"LOCAL","HostId":"LOCAL"}`
}

// eventKey reads the decoded object key of a notification body; ok is
// false for a body that is not an S3 notification.
func eventKey(body string) (string, bool) {
	var ev struct {
		Records []struct {
			S3 struct {
				Object struct {
					Key string `json:"key"`
				} `json:"object"`
			} `json:"s3"`
		} `json:"Records"`
	}
	if json.Unmarshal([]byte(body), &ev) != nil || len(ev.Records) != 1 {
		return "", false
	}
	key, err := url.QueryUnescape(ev.Records[0].S3.Object.Key)
	return key, err == nil
}

// invokeBatch runs the handler on one SQS batch, as Lambda delivers it,
// through the Lambda runtime's adapter, and returns the ids of the
// messages returned for retry.
func (r *rig) invokeBatch(bodies []string) []string {
	r.t.Helper()
	var msgs []events.SQSMessage
	for i, b := range bodies {
		msgs = append(msgs, events.SQSMessage{
			MessageId: fmt.Sprintf("msg-%d", i), ReceiptHandle: fmt.Sprintf("receipt-%d", i), Body: b,
			Attributes:  map[string]string{"ApproximateReceiveCount": "1"},
			EventSource: "aws:sqs", EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:geolocate-uploads", AWSRegion: "us-east-1",
		})
	}
	payload, err := json.Marshal(events.SQSEvent{Records: msgs})
	if err != nil {
		r.t.Fatal(err)
	}
	out, err := lambdarun.Invoke(context.Background(), r.handler.Handle, payload, time.Minute)
	if err != nil {
		r.t.Fatalf("invocation failed: %v", err)
	}
	var resp events.SQSEventResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		r.t.Fatalf("batch response %s: %v", out, err)
	}
	var retried []string
	for _, f := range resp.BatchItemFailures {
		retried = append(retried, f.ItemIdentifier)
	}
	return retried
}

// invokeOne runs a one-message batch and reports whether the message was
// returned for retry.
func (r *rig) invokeOne(body string) bool {
	r.t.Helper()
	return len(r.invokeBatch([]string{body})) > 0
}
