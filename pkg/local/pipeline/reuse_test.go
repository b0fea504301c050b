package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/pipes"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
)

// TestRunPaysOncePerDistinctPhoto is `make run IMAGES=dir` on a folder
// holding copies of the same photos under several names, nested folders
// included, and a copy whose EXIF says another place (the same photo once
// stripped): the simulator charges one credit per distinct photo, every
// file gets the answer, and each copy's record names the object whose call
// paid, with 0 credits.
func TestRunPaysOncePerDistinctPhoto(t *testing.T) {
	db := awspartstest.SharedDynamoDB(t)
	dir := t.TempDir()
	gradient, err := os.ReadFile(filepath.Join(sampleImagesDir, "gradient-64x48.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	blue, err := os.ReadFile(filepath.Join(sampleImagesDir, "gradient-blue-64x48.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	harbour := exiftest.Harbour()
	elsewhere := exiftest.Harbour()
	gps := *elsewhere.GPS
	gps.Lat, gps.Lon = -33.8568, 151.2153
	elsewhere.GPS = &gps
	// photo -> files holding it
	photos := map[string][]string{
		"gradient": {"gradient.jpg", "2024/gradient copy.jpg", "2024/summer/IMG_0001.jpg", "backup/2024/summer/IMG_0001.jpg"},
		"blue":     {"blue.jpg", "albums/blue.jpg"},
		"harbour":  {"harbour.jpg", "edited/harbour moved.jpg"},
	}
	bodies := map[string][]byte{
		"gradient.jpg": gradient, "2024/gradient copy.jpg": gradient, "2024/summer/IMG_0001.jpg": gradient,
		"backup/2024/summer/IMG_0001.jpg": gradient,
		"blue.jpg":                        blue, "albums/blue.jpg": blue,
		"harbour.jpg":              exiftest.JPEG(harbour.Bytes(), nil, 0),
		"edited/harbour moved.jpg": exiftest.JPEG(elsewhere.Bytes(), nil, 0),
	}
	photoOf := map[string]string{}
	for photo, files := range photos {
		for _, f := range files {
			photoOf[f] = photo
			if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, dir, f, bodies[f])
		}
	}

	pipe, err := pipes.ResultsPipe(nil)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		events = map[string]eventDetail{} // key -> its result event
	)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sum, err := Run(ctx, Options{
		Events: pipe,
		OnEvent: func(e *pipes.Event) {
			var d eventDetail
			if err := json.Unmarshal(e.Detail, &d); err != nil {
				t.Errorf("event detail: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			events[d.Key] = d
		},
		ImagesDir:   dir,
		Getenv:      noServiceEnv,
		DynamoDB:    db,
		Table:       "reuse-" + fmt.Sprint(time.Now().UnixNano()),
		Progress:    testLog{t},
		Concurrency: 3, // copies are processed at the same moment
		BatchSize:   2,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(sum.Results) != len(bodies) || len(sum.Lost()) != 0 || len(sum.DeadLetters) != 0 {
		t.Fatalf("%d results, lost %v, dead letters %v; want %d settled", len(sum.Results), sum.Lost(), sum.DeadLetters, len(bodies))
	}
	if sum.PredictCalls != len(photos) || sum.CreditsCharged != len(photos) || sum.CreditsRecorded() != len(photos) {
		t.Errorf("%d calls, %d credits charged, %d recorded; want %d each, one per distinct photo",
			sum.PredictCalls, sum.CreditsCharged, sum.CreditsRecorded(), len(photos))
	}
	byObject := map[string]*ledger.Record{}
	for _, r := range sum.Results {
		if r.Record != nil {
			byObject[ledger.ObjectRef{Bucket: r.Record.Bucket, Key: r.Record.Key, VersionID: r.Record.VersionID, ETag: r.Record.ETag}.String()] = r.Record
		}
	}
	payers := map[string]*ledger.Record{}
	for _, r := range sum.Results {
		rec, file := r.Record, filepath.ToSlash(r.Upload.Key)
		photo, ok := photoOf[file]
		if !ok || rec == nil || rec.Status != ledger.StatusSucceeded {
			t.Errorf("%s: record %+v", file, rec)
			continue
		}
		mu.Lock()
		ev := events[rec.Key]
		mu.Unlock()
		if ev.ReusedFrom != rec.ReusedFrom || (rec.ReusedFrom != "" && ev.CreditsCharged != "0") {
			t.Errorf("%s: event reused_from %q credits %q, record %q", file, ev.ReusedFrom, ev.CreditsCharged, rec.ReusedFrom)
		}
		if rec.ReusedFrom == "" {
			if payers[photo] != nil {
				t.Errorf("%s and %s both paid for %s", payers[photo].Key, rec.Key, photo)
			}
			payers[photo] = rec
			continue
		}
		payer := byObject[rec.ReusedFrom]
		if payer == nil || payer.ReusedFrom != "" || photoOf[payer.Key] != photo || rec.CreditsConsumed != 0 ||
			payer.PredictionID != rec.PredictionID || payer.ContentSHA256 != rec.ContentSHA256 {
			t.Errorf("%s: reused from %q (%+v), credits %d: want another file of %s that paid", file, rec.ReusedFrom, payer, rec.CreditsConsumed, photo)
		}
	}
	if len(payers) != len(photos) {
		t.Errorf("%d photos paid for, want %d", len(payers), len(photos))
	}
}

// eventDetail is what the test reads of a result event.
type eventDetail struct {
	Key            string `json:"key"`
	ReusedFrom     string `json:"reused_from"`
	CreditsCharged string `json:"credits_charged"`
}
