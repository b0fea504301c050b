package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geodist"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
)

func TestMeasureAccuracy(t *testing.T) {
	var records []ledger.Record
	for i, km := range []float64{3000, 0.5, 100, 1000, 10} {
		records = append(records, ledger.Record{Bucket: "b", Key: fmt.Sprintf("p%d.jpg", i), Status: ledger.StatusSucceeded, ErrorKm: f64(km)})
	}
	// Neither a record without an error nor a non-succeeded one counts.
	records = append(records, ledger.Record{Status: ledger.StatusSucceeded}, ledger.Record{Status: ledger.StatusFailed, ErrorKm: f64(1)})
	a, ok := measureAccuracy(records)
	if !ok || a.Photos != 5 {
		t.Fatalf("ok %v photos %d, want 5", ok, a.Photos)
	}
	// Sorted: 0.5 10 100 1000 3000; p90 at rank 3.6 = 1000 + 0.6 * 2000.
	if a.MedianKm != 100 || math.Abs(a.P90Km-2200) > 1e-9 {
		t.Errorf("median %v p90 %v, want 100 and 2200", a.MedianKm, a.P90Km)
	}
	want := map[string]float64{"street": 0.2, "city": 0.4, "region": 0.6, "country": 0.6, "continent": 0.8}
	for name, share := range want {
		if math.Abs(a.Within[name]-share) > 1e-9 {
			t.Errorf("within %s = %v, want %v", name, a.Within[name], share)
		}
	}
	if s := a.String(); !strings.Contains(s, "5 photo(s) with EXIF GPS, sent without it: median 100 km, p90 2200 km; within 1 km 20%, 25 km 40%, 200 km 60%, 750 km 60%, 2500 km 80%") {
		t.Errorf("summary %q", s)
	}
	if _, ok := measureAccuracy([]ledger.Record{{Status: ledger.StatusSucceeded}}); ok {
		t.Error("accuracy reported without any record carrying an error")
	}
	// A prediction whose upload carried its position (uploadMetadata=keep)
	// is left out, and said to be.
	sent := ledger.Record{Status: ledger.StatusSucceeded, PositionSent: true, ExifLatitude: f64(53.5), ExifLongitude: f64(9.9)}
	a, ok = measureAccuracy(append(records, sent))
	if !ok || a.Photos != 5 || a.PositionSent != 1 || !strings.Contains(a.String(), "1 photo(s) left out: their upload carried the EXIF position (uploadMetadata=keep)") {
		t.Errorf("with a position sent: ok %v %+v %q", ok, a, a.String())
	}
	if a, ok := measureAccuracy([]ledger.Record{sent}); !ok || a.Photos != 0 || !strings.HasPrefix(a.String(), "1 photo(s) left out") {
		t.Errorf("only a position sent: ok %v %q", ok, a.String())
	}
}

// Issue 46 points 9 and 13: four copies of one photo were four samples, and
// a local run's "median 933 km" read as the service's accuracy, where it
// measures the simulator's made-up places.
func TestAccuracyCountsEachPhotoOnce(t *testing.T) {
	photo := ledger.Record{Bucket: "b", Key: "a.jpg", VersionID: "v1", Status: ledger.StatusSucceeded, ErrorKm: f64(900), ContentSHA256: "c1"}
	records := []ledger.Record{photo}
	for _, key := range []string{"a copy.jpg", "a copy 2.jpg", "a copy 3.jpg"} {
		c := photo
		c.Key, c.ReusedFrom = key, "s3://b/a.jpg (v1)"
		records = append(records, c)
	}
	// Without a content identity (reuse off), a copy names its source.
	noContent := ledger.Record{Bucket: "b", Key: "x.jpg", VersionID: "v9", Status: ledger.StatusSucceeded, ErrorKm: f64(10)}
	copied := noContent
	copied.Key, copied.ReusedFrom = "x copy.jpg", "s3://b/x.jpg (v9)"
	// Two versions of one key without reuse are two photos.
	v2 := noContent
	v2.VersionID, v2.ErrorKm = "v10", f64(20)
	records = append(records, noContent, copied, v2)

	a, ok := measureAccuracy(records)
	if !ok || a.Photos != 3 || a.Copies != 4 || a.MedianKm != 20 {
		t.Fatalf("ok %v %+v; want 3 photos (median 20 km) and 4 copies", ok, a)
	}
	s := a.String()
	if !strings.HasPrefix(s, "3 photo(s) with EXIF GPS") || !strings.Contains(s, "; 4 copy(ies) of these photos counted once") || strings.Contains(s, "simulator") {
		t.Errorf("summary %q", s)
	}
	a.Simulated = true
	if s := a.String(); !strings.HasPrefix(s, "the simulator's made-up places, not the service's accuracy: 3 photo(s)") {
		t.Errorf("simulated summary %q", s)
	}
}

// seedEXIFRecords writes a prediction 390 km off its EXIF position (Paris
// predicted, Lyon taken), one spot on, and one recorded from EXIF alone.
func seedEXIFRecords(t *testing.T, store *ledger.Store) (offKm float64) {
	t.Helper()
	ctx := context.Background()
	offKm = geodist.Km(48.8566, 2.3522, 45.7640, 4.8357)
	results := map[string]ledger.Record{
		"lyon.jpg": {Source: ledger.SourceService, Place: "Paris", Latitude: f64(48.8566), Longitude: f64(2.3522), CreditsConsumed: 1,
			ExifLatitude: f64(45.7640), ExifLongitude: f64(4.8357), ErrorKm: f64(offKm), CapturedAt: "2024-06-01T21:42:05+02:00"},
		"spot-on.jpg": {Source: ledger.SourceService, Place: "Hamburg", Latitude: f64(53.5439), Longitude: f64(9.9661), CreditsConsumed: 1,
			ExifLatitude: f64(53.5439), ExifLongitude: f64(9.9661), ErrorKm: f64(0),
			Downscaled: true, Size: 10_500_000, OriginalWidth: 8160, OriginalHeight: 6120, SentBytes: 3_200_000, SentWidth: 4096, SentHeight: 3072},
		// Sides already within the maximum: only the encoding changed.
		"dense.png": {Source: ledger.SourceService, Place: "Hamburg", Latitude: f64(53.5439), Longitude: f64(9.9661), CreditsConsumed: 1,
			Downscaled: true, Size: 10_400_000, OriginalWidth: 2091, OriginalHeight: 1569, SentBytes: 2_500_000, SentWidth: 2091, SentHeight: 1569},
		"known.jpg": {Source: ledger.SourceEXIF, Latitude: f64(52.52), Longitude: f64(13.405), ExifLatitude: f64(52.52), ExifLongitude: f64(13.405)},
		// Sent with its metadata (uploadMetadata=keep): no error, said why.
		"kept.jpg": {Source: ledger.SourceService, Place: "Hamburg", Latitude: f64(53.5439), Longitude: f64(9.9661), CreditsConsumed: 1,
			ExifLatitude: f64(53.5439), ExifLongitude: f64(9.9661), UploadMetadata: "keep", PositionSent: true},
	}
	for key, res := range results {
		claim, _, err := store.Claim(ctx, ledger.ObjectRef{Bucket: "uploads", Key: key, VersionID: "v1"}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Complete(ctx, claim, res); err != nil {
			t.Fatal(err)
		}
	}
	return offKm
}

func TestResultsShowAccuracyAgainstEXIF(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	offKm := seedEXIFRecords(t, ledger.New(client, table))
	useAWS(t, &awsClients{tables: client})

	t.Run("table", func(t *testing.T) {
		r := runCLI(t, nil, nil, "results", "--table", table)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		for _, want := range []string{"ERROR VS EXIF", km(offKm), "0.0 km", "succeeded (from EXIF, no call)",
			"succeeded (downscaled)", "succeeded (re-encoded)",
			// The figures below the table, not in the STATUS column.
			"\ndownscaled spot-on.jpg: 8160x6120 10.5 MB -> 4096x3072 3.2 MB (over the service's size limit)\n",
			"\nre-encoded dense.png: 2091x1569 10.4 MB -> 2091x1569 2.5 MB (over the service's size limit)\n",
			"accuracy: 2 photo(s) with EXIF GPS, sent without it: median " + km(offKm/2) + ", p90 " + km(0.9*offKm) + "; within 1 km 50%, 25 km 50%, 200 km 50%, 750 km 100%",
			"(position sent)", "; 1 photo(s) left out: their upload carried the EXIF position (uploadMetadata=keep)"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("output lacks %q:\n%s", want, r.stdout)
			}
		}
	})

	t.Run("geojson", func(t *testing.T) {
		r := runCLI(t, nil, nil, "results", "--table", table, "--geojson")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var fc struct {
			Features []struct {
				Geometry struct {
					Type        string          `json:"type"`
					Coordinates json.RawMessage `json:"coordinates"`
				} `json:"geometry"`
				Properties map[string]any `json:"properties"`
			} `json:"features"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &fc); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, r.stdout)
		}
		// Two predictions with EXIF: point, EXIF point and line each; one
		// without EXIF: its point; the EXIF-only record: one point.
		kinds := map[string]int{}
		for _, f := range fc.Features {
			kinds[f.Geometry.Type+"/"+f.Properties["kind"].(string)]++
			if f.Geometry.Type != "LineString" || f.Properties["object"] != "s3://uploads/lyon.jpg" {
				continue
			}
			var line [][2]float64
			if err := json.Unmarshal(f.Geometry.Coordinates, &line); err != nil {
				t.Fatal(err)
			}
			want := [][2]float64{{2.3522, 48.8566}, {4.8357, 45.7640}}
			if len(line) != 2 || line[0] != want[0] || line[1] != want[1] {
				t.Errorf("line %v, want prediction then EXIF position, longitude first: %v", line, want)
			}
			if f.Properties["error_km"] != offKm {
				t.Errorf("line error_km %v, want %v", f.Properties["error_km"], offKm)
			}
		}
		want := map[string]int{"Point/prediction": 4, "Point/exif": 4, "LineString/error": 2}
		for k, n := range want {
			if kinds[k] != n {
				t.Errorf("%d %s features, want %d (all: %v)", kinds[k], k, n, kinds)
			}
		}
	})
}
