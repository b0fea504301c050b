package s3event

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"
)

// eventObject decodes body, checks the record's envelope and returns its
// s3.object as raw JSON fields.
func eventObject(t *testing.T, body string) map[string]json.RawMessage {
	t.Helper()
	var n struct {
		Records []struct {
			EventSource string `json:"eventSource"`
			EventName   string `json:"eventName"`
			S3          struct {
				Bucket struct {
					Name string `json:"name"`
					ARN  string `json:"arn"`
				} `json:"bucket"`
				Object map[string]json.RawMessage `json:"object"`
			} `json:"s3"`
		} `json:"Records"`
	}
	if err := json.Unmarshal([]byte(body), &n); err != nil {
		t.Fatalf("event %s: %v", body, err)
	}
	if len(n.Records) != 1 {
		t.Fatalf("event has %d records, want 1", len(n.Records))
	}
	r := n.Records[0]
	if r.EventSource != "aws:s3" || r.EventName != "ObjectCreated:Put" || r.S3.Bucket.Name != "uploads" || r.S3.Bucket.ARN != "arn:aws:s3:::uploads" {
		t.Errorf("envelope = %+v", r)
	}
	return r.S3.Object
}

func field(t *testing.T, obj map[string]json.RawMessage, name string, into any) {
	t.Helper()
	raw, ok := obj[name]
	if !ok {
		t.Fatalf("s3.object lacks %q: %v", name, obj)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatalf("s3.object.%s = %s: %v", name, raw, err)
	}
}

func TestBodyPerBucketMode(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 15, 30, 0, time.UTC)
	for _, tc := range []struct {
		name, versionID string
	}{
		{"unversioned", ""},
		{"versioned", "3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, err := Body(ObjectCreated{
				Bucket: "uploads", Key: "photos/café + 100% sure.png", Size: 0,
				ETag: `"d41d8cd98f00b204e9800998ecf8427e"`, VersionID: tc.versionID, Time: at,
			})
			if err != nil {
				t.Fatal(err)
			}
			obj := eventObject(t, body)
			var key, etag, sequencer string
			var size int64 = -1
			field(t, obj, "key", &key)
			field(t, obj, "eTag", &etag)
			field(t, obj, "size", &size)
			field(t, obj, "sequencer", &sequencer)
			if key != "photos/caf%C3%A9+%2B+100%25+sure.png" {
				t.Errorf("key = %q", key)
			}
			if decoded, err := url.QueryUnescape(key); err != nil || decoded != "photos/café + 100% sure.png" {
				t.Errorf("key decodes to %q, %v", decoded, err)
			}
			if etag != "d41d8cd98f00b204e9800998ecf8427e" || size != 0 || sequencer == "" || strings.Trim(sequencer, "0123456789ABCDEF") != "" {
				t.Errorf("eTag %q, size %d, sequencer %q", etag, size, sequencer)
			}
			raw, present := obj["versionId"]
			switch {
			case tc.versionID == "" && present:
				t.Errorf("unversioned bucket: event has versionId %s; S3 leaves it out", raw)
			case tc.versionID != "":
				var got string
				field(t, obj, "versionId", &got)
				if got != tc.versionID {
					t.Errorf("versionId = %q, want %q", got, tc.versionID)
				}
			}
		})
	}
}
