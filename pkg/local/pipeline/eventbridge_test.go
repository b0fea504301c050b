package pipeline

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/shared/s3event"
)

// The rig's EventBridge event has the fields of the one an EventBridge
// rule's SQS target delivers (the sample in events/), the key as stored,
// and a version id only from a versioned bucket.
func TestEventBridgeEventBodyHasTheSamplesShape(t *testing.T) {
	raw, err := os.ReadFile("../../../events/sqs-eventbridge-s3.json")
	if err != nil {
		t.Fatal(err)
	}
	var batch struct {
		Records []struct {
			Body string `json:"body"`
		} `json:"Records"`
	}
	if err := json.Unmarshal(raw, &batch); err != nil || len(batch.Records) != 1 {
		t.Fatalf("sample: %v", err)
	}
	var sample map[string]any
	if err := json.Unmarshal([]byte(batch.Records[0].Body), &sample); err != nil {
		t.Fatal(err)
	}
	body, err := EventBridgeEventBody(s3event.ObjectCreated{
		Bucket: "b", Key: "a folder/IMG 1+2.jpg", Size: 0, ETag: `"abc"`, VersionID: "v1", Time: time.Unix(1_700_000_000, 0),
	})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if a, b := fieldPaths("", sample), fieldPaths("", got); !slices.Equal(a, b) {
		t.Errorf("fields %v, want the sample's %v", b, a)
	}
	detail := got["detail"].(map[string]any)
	object := detail["object"].(map[string]any)
	if got["source"] != "aws.s3" || got["detail-type"] != "Object Created" || object["key"] != "a folder/IMG 1+2.jpg" ||
		object["etag"] != "abc" || object["size"] != 0.0 || object["version-id"] != "v1" || detail["bucket"].(map[string]any)["name"] != "b" {
		t.Errorf("event %s", body)
	}
	unversioned, _ := EventBridgeEventBody(s3event.ObjectCreated{Bucket: "b", Key: "k"})
	if strings.Contains(unversioned, "version-id") {
		t.Errorf("an unversioned bucket's event names a version: %s", unversioned)
	}
}

// fieldPaths lists the dotted paths of every field of v, sorted.
func fieldPaths(prefix string, v any) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return []string{prefix}
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fieldPaths(prefix+"."+k, m[k])...)
	}
	return out
}
