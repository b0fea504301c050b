package predictor

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

func readSample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "events", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSampleEventsDecode(t *testing.T) {
	var versioned events.SQSEvent
	if err := json.Unmarshal(readSample(t, "sqs-s3-put-versioned.json"), &versioned); err != nil {
		t.Fatal(err)
	}
	if err := checkSQSBatch(versioned); err != nil || len(versioned.Records) != 1 {
		t.Fatalf("sqs-s3-put-versioned.json: %d records, %v", len(versioned.Records), err)
	}
	n, err := decodeNotification([]byte(versioned.Records[0].Body))
	if err != nil {
		t.Fatal(err)
	}
	// The samples name the local bucket and the sample images, so they
	// work against geolocate local --serve (pkg/local/pipeline's
	// TestSampleEventsWorkWithTheLocalRecipe).
	want := upload{Bucket: "geolocate-local-uploads", Key: "harbour at dusk.jpg",
		VersionID: "3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY", ETag: "5f63ca821540003f6e3c1b8e19afa6b4",
		Size: 1083, SizeKnown: true}
	if len(n.Uploads) != 1 || n.Uploads[0] != want {
		t.Errorf("sqs-s3-put-versioned.json uploads = %+v", n.Uploads)
	}

	for _, name := range []string{"sqs-s3-put.json", "sqs-batch.json"} {
		var b events.SQSEvent
		if err := json.Unmarshal(readSample(t, name), &b); err != nil {
			t.Fatal(err)
		}
		if err := checkSQSBatch(b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	var batch events.SQSEvent
	if err := json.Unmarshal(readSample(t, "sqs-batch.json"), &batch); err != nil {
		t.Fatal(err)
	}
	if len(batch.Records) != 5 {
		t.Fatalf("sqs-batch.json has %d records", len(batch.Records))
	}
	bodies := make([]notification, 5)
	errs := make([]error, 5)
	for i, m := range batch.Records {
		bodies[i], errs[i] = decodeNotification([]byte(m.Body))
	}
	if errs[0] != nil || len(bodies[0].Uploads) != 1 || bodies[0].Uploads[0].Key != "gradient-64x48.jpg" {
		t.Errorf("message 1: %+v %v", bodies[0], errs[0])
	}
	if errs[1] != nil || len(bodies[1].Uploads) != 1 || bodies[1].Uploads[0].Key != "checker-32x32.png" {
		t.Errorf("message 2: %+v %v", bodies[1], errs[1])
	}
	if errs[2] != nil || !bodies[2].TestEvent || len(bodies[2].Uploads) != 0 {
		t.Errorf("message 3 (test event): %+v %v", bodies[2], errs[2])
	}
	if errs[3] != nil || len(bodies[3].Uploads) != 1 || bodies[3].Uploads[0].Key != "2026/" ||
		!bodies[3].Uploads[0].SizeKnown || bodies[3].Uploads[0].Size != 0 {
		t.Errorf("message 4 (folder marker): %+v %v", bodies[3], errs[3])
	}
	if !errors.Is(errs[4], errMalformed) {
		t.Errorf("message 5 (malformed): err = %v", errs[4])
	}

	var scheduled events.SQSEvent
	if err := json.Unmarshal(readSample(t, "scheduled.json"), &scheduled); err != nil {
		t.Fatal(err)
	}
	if err := checkSQSBatch(scheduled); err == nil {
		t.Error("scheduled.json accepted as an SQS batch")
	}
}

func TestDecodeNotification(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		uploads   []upload
		ignored   int
		test      bool
		malformed bool
	}{
		{
			name:    "encoded key with plus, percent and unicode",
			body:    `{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"b"},"object":{"key":"a+b%2Bc%25d%E2%82%AC.jpg","size":10,"eTag":"\"e1\""}}}]}`,
			uploads: []upload{{Bucket: "b", Key: "a b+c%d€.jpg", ETag: "e1", Size: 10, SizeKnown: true}},
		},
		{
			name:    "size missing is unknown",
			body:    `{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:CompleteMultipartUpload","s3":{"bucket":{"name":"b"},"object":{"key":"k.jpg"}}}]}`,
			uploads: []upload{{Bucket: "b", Key: "k.jpg"}},
		},
		{
			name:    "removal is ignored",
			body:    `{"Records":[{"eventSource":"aws:s3","eventName":"ObjectRemoved:Delete","s3":{"bucket":{"name":"b"},"object":{"key":"k.jpg"}}}]}`,
			ignored: 1,
		},
		{
			name: "eventbridge object created, key not encoded",
			body: `{"source":"aws.s3","detail-type":"Object Created","detail":{"bucket":{"name":"b"},"object":{"key":"a+b.jpg","size":5,"etag":"e2","version-id":"v1"}}}`,
			uploads: []upload{{Bucket: "b", Key: "a+b.jpg", ETag: "e2", VersionID: "v1", Size: 5,
				SizeKnown: true, OtherKey: "a b.jpg"}}, // S3 may or may not have encoded it: the decoded name is tried only if this one is not there
		},
		{name: "eventbridge deleted is ignored", body: `{"source":"aws.s3","detail-type":"Object Deleted","detail":{}}`, ignored: 1},
		{name: "test event", body: `{"Service":"Amazon S3","Event":"s3:TestEvent","Bucket":"b"}`, test: true},
		{name: "other json is ignored", body: `{"hello":"world"}`, ignored: 1},
		{name: "not json", body: `{"Records": [`, malformed: true},
		{name: "json but not an object", body: `"just a string"`, malformed: true},
		{name: "bad key encoding", body: `{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"b"},"object":{"key":"bad%zz"}}}]}`, malformed: true},
		{name: "upload without key", body: `{"Records":[{"eventSource":"aws:s3","eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"b"},"object":{}}}]}`, malformed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := decodeNotification([]byte(tt.body))
			if tt.malformed {
				if !errors.Is(err, errMalformed) {
					t.Fatalf("err = %v, want malformed", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(n.Uploads) != len(tt.uploads) {
				t.Fatalf("uploads = %+v, want %+v", n.Uploads, tt.uploads)
			}
			for i := range tt.uploads {
				if n.Uploads[i] != tt.uploads[i] {
					t.Errorf("upload %d = %+v, want %+v", i, n.Uploads[i], tt.uploads[i])
				}
			}
			if len(n.Ignored) != tt.ignored || n.TestEvent != tt.test {
				t.Errorf("ignored %v test %v", n.Ignored, n.TestEvent)
			}
		})
	}
}
