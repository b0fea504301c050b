package predictor

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// With notifications=eventbridge the queue holds S3's EventBridge "Object
// Created" event, not an S3 notification: the sample in events/ (what an
// EventBridge rule's SQS target delivers) reads as the same upload, its key
// as stored (EventBridge does not URL-encode it, so a space stays a space)
// and its version id, size and ETag from the detail's own field names.
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
