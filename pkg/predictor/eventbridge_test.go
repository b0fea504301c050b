package predictor

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// With notifications=eventbridge the queue holds S3's EventBridge "Object
// Created" event, not an S3 notification: the sample in events/ (what an
// EventBridge rule's SQS target delivers) reads as the same upload, its key
// as given (a space stays a space; TestEventBridgeKeyEncodedOrNot covers an
// encoded key) and its version id, size and ETag from the detail's own field names.
func TestEventBridgeObjectCreatedInsideSQS(t *testing.T) {
	raw, err := os.ReadFile("../../events/sqs-eventbridge-s3.json")
	if err != nil {
		t.Fatal(err)
	}
	var batch events.SQSEvent
	if err := json.Unmarshal(raw, &batch); err != nil {
		t.Fatal(err)
	}
	if len(batch.Records) != 1 {
		t.Fatalf("%d records, want 1", len(batch.Records))
	}
	n, err := decodeNotification([]byte(batch.Records[0].Body))
	if err != nil {
		t.Fatal(err)
	}
	want := upload{
		Bucket: "geolocate-local-uploads", Key: "harbour at dusk.jpg",
		VersionID: "3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY", ETag: "5f63ca821540003f6e3c1b8e19afa6b4",
		Size: 1083, SizeKnown: true,
	}
	if len(n.Uploads) != 1 || n.Uploads[0] != want || len(n.Ignored) != 0 || n.TestEvent {
		t.Errorf("decoded %+v, want the one upload %+v", n, want)
	}
	if err := checkSQSBatch(batch); err != nil {
		t.Errorf("the sample is refused as an SQS batch: %v", err)
	}
}

// eventBridgeBody is S3's EventBridge "Object Created" event for u, its key
// written as given.
func eventBridgeBody(u upload, given string) string {
	body, _ := json.Marshal(map[string]any{
		"version": "0", "id": "ev-" + given, "detail-type": "Object Created", "source": "aws.s3",
		"account": "123456789012", "time": "2026-11-22T10:15:30Z", "region": "us-east-1",
		"resources": []string{"arn:aws:s3:::" + u.Bucket},
		"detail": map[string]any{
			"version": "0", "bucket": map[string]any{"name": u.Bucket},
			"object":     map[string]any{"key": given, "size": u.Size, "etag": u.ETag, "version-id": u.VersionID, "sequencer": "1"},
			"request-id": "r", "requester": "123456789012", "reason": "PutObject",
		},
	})
	return string(body)
}

// In notifications=eventbridge mode S3 may or may not URL-encode the key
// (its documentation shows neither): under both readings every object is
// found and predicted once, under its real key, for a key with a space, a
// "+", a literal "%20" and non-ASCII characters; and an object that only
// shares the other reading's name (a decoy) is never read or paid for.
func TestEventBridgeKeyEncodedOrNot(t *testing.T) {
	keys := []string{"harbour at dusk.jpg", "a+b.jpg", "100%20sure.jpg", "Zürich 漢字.jpg"}
	for _, encoded := range []bool{false, true} {
		t.Run(fmt.Sprintf("encoded=%t", encoded), func(t *testing.T) {
			e := newTestEnv(t, nil)
			decoy := e.put(encodeS3Key(keys[0]), testJPEG(t, 99)) // "harbour+at+dusk.jpg"
			var msgs []sqsMessage
			var ups []upload
			for i, k := range keys {
				u := e.put(k, testJPEG(t, i))
				given := k
				if encoded {
					given = encodeS3Key(k)
				}
				ups = append(ups, u)
				msgs = append(msgs, sqsMessage{id: fmt.Sprint("m", i), body: eventBridgeBody(u, given)})
			}
			if failed := e.invokeSQS(sqsBatch(msgs...)); len(failed) != 0 {
				t.Fatalf("messages returned for retry: %v", failed)
			}
			for _, u := range ups {
				if rec := e.record(u); rec == nil || rec.Status != ledger.StatusSucceeded {
					t.Errorf("%q: record %+v, want succeeded", u.Key, rec)
				}
			}
			if rec := e.record(decoy); rec != nil {
				t.Errorf("the decoy %q was processed: %+v", decoy.Key, rec)
			}
			if calls := len(e.predictCalls()); calls != len(keys) {
				t.Errorf("%d paid calls for %d objects", calls, len(keys))
			}
		})
	}
}
