package soak

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/local/pipeline"
)

// uploadEvent is the S3 ObjectCreated notification S3 would put on the
// queue for obj (key URL-encoded as S3 encodes it).
func uploadEvent(t testing.TB, obj object) string {
	t.Helper()
	body, err := pipeline.S3EventBody(pipeline.ObjectCreated{
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
	body, err := pipeline.S3EventBody(pipeline.ObjectCreated{
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

// invokeOne runs the handler on a one-message SQS batch through the Lambda
// runtime's adapter and reports whether the message was returned for retry.
func (r *rig) invokeOne(body string) bool {
	r.t.Helper()
	msg := events.SQSMessage{
		MessageId: "msg-1", ReceiptHandle: "receipt-1", Body: body,
		Attributes:     map[string]string{"ApproximateReceiveCount": "1"},
		EventSource:    "aws:sqs",
		EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:geolocate-uploads", AWSRegion: "us-east-1",
	}
	payload, err := json.Marshal(events.SQSEvent{Records: []events.SQSMessage{msg}})
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
	for _, f := range resp.BatchItemFailures {
		if f.ItemIdentifier == msg.MessageId {
			return true
		}
	}
	return false
}
