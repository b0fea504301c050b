package pipeline

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sampleEventsDir holds the sample events for `go run ./functions/... -event`.
var sampleEventsDir = filepath.Join("..", "..", "..", "events")

// sampleUpload is one object a sample event announces.
type sampleUpload struct {
	file, bucket, key string
	size              *float64
	etag              string
}

// TestSampleEventsWorkWithTheLocalRecipe: the README's local recipe is
// `geolocate local --serve` (the bucket DefaultBucket, the images of
// testdata/images uploaded at their names), then a sample event through a
// function. An event naming another bucket is acknowledged and ignored
// ("not the configured bucket"), so it showed nothing locally. Every bucket
// a sample names is the local one, and every object it announces is one of
// the sample images, with that image's size and ETag, or a folder marker.
func TestSampleEventsWorkWithTheLocalRecipe(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(sampleEventsDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sample events in %s (%v)", sampleEventsDir, err)
	}
	var uploads []sampleUpload
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		walkSampleEvent(t, filepath.Base(file), doc, &uploads)
	}
	if len(uploads) == 0 {
		t.Fatal("no upload found in the sample events: the walk below no longer recognises their shape")
	}
	for _, u := range uploads {
		if u.bucket != DefaultBucket {
			t.Errorf("%s names bucket %q: against local --serve (bucket %s) it is ignored", u.file, u.bucket, DefaultBucket)
			continue
		}
		if u.key == "" || strings.HasSuffix(u.key, "/") {
			continue // a folder marker: rejected without a read
		}
		image, err := os.ReadFile(filepath.Join(sampleImagesDir, filepath.FromSlash(u.key)))
		if err != nil {
			t.Errorf("%s announces %q, which local --serve does not upload (%v)", u.file, u.key, err)
			continue
		}
		if u.size != nil && int(*u.size) != len(image) {
			t.Errorf("%s: %q has size %v, the image %d bytes", u.file, u.key, *u.size, len(image))
		}
		sum := md5.Sum(image)
		if u.etag != "" && strings.Trim(u.etag, `"`) != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: %q has ETag %s, the image %x", u.file, u.key, u.etag, sum)
		}
	}
}

// walkSampleEvent collects the uploads of an event: S3 notification records
// (directly, or in an SQS message's body), S3's EventBridge events and S3's
// test event, wherever they are nested.
func walkSampleEvent(t *testing.T, file string, v any, uploads *[]sampleUpload) {
	switch v := v.(type) {
	case []any:
		for _, item := range v {
			walkSampleEvent(t, file, item, uploads)
		}
	case string:
		// An SQS message's body is JSON in a string (a malformed one is a
		// sample too).
		var inner any
		if strings.HasPrefix(strings.TrimSpace(v), "{") && json.Unmarshal([]byte(v), &inner) == nil {
			walkSampleEvent(t, file, inner, uploads)
		}
	case map[string]any:
		if s3, ok := v["s3"].(map[string]any); ok { // S3 notification: the key is URL-encoded
			u := sampleObject(file, s3)
			key, err := url.QueryUnescape(u.key)
			if err != nil {
				t.Errorf("%s: key %q: %v", file, u.key, err)
			}
			u.key = key
			*uploads = append(*uploads, u)
			return
		}
		if v["source"] == "aws.s3" { // EventBridge: the key is as stored
			if detail, ok := v["detail"].(map[string]any); ok {
				*uploads = append(*uploads, sampleObject(file, detail))
				return
			}
		}
		if v["Event"] == "s3:TestEvent" {
			bucket, _ := v["Bucket"].(string)
			*uploads = append(*uploads, sampleUpload{file: file, bucket: bucket})
			return
		}
		for _, item := range v {
			walkSampleEvent(t, file, item, uploads)
		}
	}
}

// sampleObject reads {"bucket": {"name"}, "object": {"key", "size", "eTag"
// or "etag"}}.
func sampleObject(file string, m map[string]any) sampleUpload {
	u := sampleUpload{file: file}
	if b, ok := m["bucket"].(map[string]any); ok {
		u.bucket, _ = b["name"].(string)
	}
	if o, ok := m["object"].(map[string]any); ok {
		u.key, _ = o["key"].(string)
		if size, ok := o["size"].(float64); ok {
			u.size = &size
		}
		u.etag, _ = o["eTag"].(string)
		if u.etag == "" {
			u.etag, _ = o["etag"].(string)
		}
	}
	return u
}
