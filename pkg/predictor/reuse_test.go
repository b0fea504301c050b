package predictor

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/photo/metastrip/metastriptest"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// reuseOff is a config edit: one paid call per object version.
func reuseOff(c *Config) { c.ReuseResults = ReuseOff }

// refOf is the ledger's name of an upload.
func refOf(u upload) ledger.ObjectRef {
	return ledger.ObjectRef{Bucket: u.Bucket, Key: u.Key, VersionID: u.VersionID, ETag: u.ETag}
}

// TestCopiesPayOnce: the same photo under three keys, delivered one after
// the other, is called for once; the copies hold its answer with 0 credits
// and reused_from naming the object that paid, and the metrics say so. The
// digest recorded is the SHA-256 of what the service received, as the
// simulator computed it. With reuseResults=off every copy pays.
func TestCopiesPayOnce(t *testing.T) {
	for _, tt := range []struct {
		name  string
		edit  func(*Config)
		calls int
	}{
		{"content", nil, 1},
		{"off", reuseOff, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, tt.edit)
			img := harbourJPEG()
			keys := []string{"2024/harbour.jpg", "albums/summer/harbour copy.jpg", "backup/2024/harbour.jpg"}
			var ups []upload
			for _, k := range keys {
				ups = append(ups, e.put(k, img))
			}
			for i, u := range ups {
				if failed := e.invokeSQS(sqsBatch(uploadMessage("m"+keys[i], u))); len(failed) != 0 {
					t.Fatalf("%s: retry %v", u.Key, failed)
				}
			}
			calls := e.predictCalls()
			if len(calls) != tt.calls {
				t.Fatalf("%d calls, want %d", len(calls), tt.calls)
			}
			if tt.calls != 1 {
				if n := e.metricSum(metricnames.ImagesReused); n != 0 {
					t.Errorf("ImagesReused %v with reuse off", n)
				}
				return
			}
			payer := e.record(ups[0])
			if payer.CreditsConsumed == 0 || payer.ReusedFrom != "" || payer.ContentSHA256 != calls[0].FileSHA256 {
				t.Fatalf("payer: credits %d reused_from %q content %q, want credits, no reuse and the received file's SHA-256 %q",
					payer.CreditsConsumed, payer.ReusedFrom, payer.ContentSHA256, calls[0].FileSHA256)
			}
			for _, u := range ups[1:] {
				rec := e.record(u)
				if rec.Status != ledger.StatusSucceeded || rec.CreditsConsumed != 0 || rec.ReusedFrom != refOf(ups[0]).String() {
					t.Errorf("%s: status %s credits %d reused_from %q, want succeeded, 0, %q", u.Key, rec.Status, rec.CreditsConsumed, rec.ReusedFrom, refOf(ups[0]).String())
				}
				if rec.PredictionID != payer.PredictionID || *rec.Latitude != *payer.Latitude || rec.Place != payer.Place {
					t.Errorf("%s: answer %s %v %q, want the payer's %s %v %q", u.Key, rec.PredictionID, *rec.Latitude, rec.Place,
						payer.PredictionID, *payer.Latitude, payer.Place)
				}
				// The copy's own photo facts, not copied: its EXIF and the
				// error against it.
				if rec.ExifLatitude == nil || rec.ErrorKm == nil || *rec.ErrorKm != *payer.ErrorKm || rec.RoundTripMS != 0 {
					t.Errorf("%s: exif %v error_km %v round trip %d", u.Key, rec.ExifLatitude, rec.ErrorKm, rec.RoundTripMS)
				}
			}
			if n := e.metricSum(metricnames.ImagesReused); n != 2 {
				t.Errorf("ImagesReused %v, want 2", n)
			}
			if n := e.metricSum(metricnames.CreditsSaved); n != 2*float64(payer.CreditsConsumed) {
				t.Errorf("CreditsSaved %v, want %d", n, 2*payer.CreditsConsumed)
			}
			if n := e.metricSum(metricnames.CreditsConsumed); n != float64(payer.CreditsConsumed) {
				t.Errorf("CreditsConsumed %v, want the one call's %d", n, payer.CreditsConsumed)
			}
		})
	}
}

// TestCopiesInOneBatchMakeOneCall: copies delivered together to parallel
// workers make one call; the others are returned until its answer, and
// their redelivery reuses it.
func TestCopiesInOneBatchMakeOneCall(t *testing.T) {
	e := newTestEnv(t, nil)
	img := testJPEG(t, 90)
	var msgs []sqsMessage
	ups := map[string]upload{}
	for _, k := range []string{"a/1.jpg", "b/1.jpg", "c/1.jpg", "d/e/1.jpg"} {
		ups[k] = e.put(k, img)
		msgs = append(msgs, uploadMessage(k, ups[k]))
	}
	failed := e.invokeSQS(sqsBatch(msgs...))
	for range 3 {
		if len(failed) == 0 {
			break
		}
		var again []sqsMessage
		for _, id := range failed {
			again = append(again, uploadMessage(id, ups[id]))
		}
		failed = e.invokeSQS(sqsBatch(again...))
	}
	if len(failed) != 0 {
		t.Fatalf("still returned: %v", failed)
	}
	if n := e.sim.CallCount(); n != 1 {
		t.Fatalf("%d calls for 4 copies, want 1", n)
	}
	paid := 0
	for k, u := range ups {
		rec := e.record(u)
		switch {
		case rec.Status != ledger.StatusSucceeded:
			t.Errorf("%s: %s", k, rec.Status)
		case rec.ReusedFrom == "":
			paid++
		}
	}
	if paid != 1 {
		t.Errorf("%d records paid, want 1", paid)
	}
}

// TestCopiesDifferingInMetadataValues: two photos whose EXIF positions
// differ (exiftool reads both), same pixels and same layout: stripped, the
// service receives the same bytes (the simulator's digest says so), so
// they pay once; sent as stored (keep), they are two photos.
func TestCopiesDifferingInMetadataValues(t *testing.T) {
	a := harbourJPEG()
	b := withGPS(func(g *exiftest.GPS) { g.Lat, g.Lon = 48.8566, 2.3522 })
	if len(a) != len(b) || slices.Equal(a, b) {
		t.Fatalf("the two photos must differ in values only: %d and %d bytes", len(a), len(b))
	}
	if ma, mb := metastriptest.OwnerMetadata(t, a), metastriptest.OwnerMetadata(t, b); slices.Equal(ma, mb) {
		t.Fatalf("exiftool reads the same metadata in both: %v", ma)
	}
	for _, tt := range []struct {
		mode  string
		calls int
	}{{UploadMetadataStrip, 1}, {UploadMetadataKeep, 2}} {
		t.Run(tt.mode, func(t *testing.T) {
			e := newTestEnv(t, func(c *Config) { c.UploadMetadata = tt.mode })
			ua, ub := e.put("a.jpg", a), e.put("b.jpg", b)
			for _, u := range []upload{ua, ub} {
				if failed := e.invokeSQS(sqsBatch(uploadMessage(u.Key, u))); len(failed) != 0 {
					t.Fatalf("retry %v", failed)
				}
			}
			calls := e.predictCalls()
			if len(calls) != tt.calls {
				t.Fatalf("%d calls, want %d", len(calls), tt.calls)
			}
			ra, rb := e.record(ua), e.record(ub)
			if ra.ContentSHA256 != calls[0].FileSHA256 {
				t.Errorf("content_sha256 %s, the service received %s", ra.ContentSHA256, calls[0].FileSHA256)
			}
			if same := ra.ContentSHA256 == rb.ContentSHA256; same != (tt.calls == 1) {
				t.Errorf("digests %s and %s: same=%v", ra.ContentSHA256, rb.ContentSHA256, same)
			}
			if tt.calls == 2 {
				if sum := sha256.Sum256(b); rb.ContentSHA256 != hex.EncodeToString(sum[:]) {
					t.Errorf("keep: content_sha256 %s is not the stored object's", rb.ContentSHA256)
				}
			}
		})
	}
}

// TestReuseRespectsTheRequest: another top_n is another request: a copy
// made under it pays again.
func TestReuseRespectsTheRequest(t *testing.T) {
	e := newTestEnv(t, nil)
	img := testJPEG(t, 91)
	u1 := e.put("one.jpg", img)
	if failed := e.invokeSQS(sqsBatch(uploadMessage("1", u1))); len(failed) != 0 {
		t.Fatal(failed)
	}
	cfg := e.cfg
	cfg.TopN = 5
	e.h = e.newHandler(cfg)
	u2 := e.put("two.jpg", img)
	if failed := e.invokeSQS(sqsBatch(uploadMessage("2", u2))); len(failed) != 0 {
		t.Fatal(failed)
	}
	if n := e.sim.CallCount(); n != 2 {
		t.Fatalf("%d calls, want 2", n)
	}
	if r1, r2 := e.record(u1), e.record(u2); r2.ReusedFrom != "" || r1.ContentRequest == r2.ContentRequest {
		t.Errorf("requests %q and %q, reused_from %q", r1.ContentRequest, r2.ContentRequest, r2.ReusedFrom)
	}
}

func TestContentRequest(t *testing.T) {
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "model=default;top_n=default"},
		{Config{ModelID: "geo-ha-v2", TopN: 5}, "model=geo-ha-v2;top_n=5"},
	} {
		if got := tt.cfg.contentRequest(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.cfg, got, tt.want)
		}
	}
}

// TestContentBusyWait: a copy waits 5 s, then twice as long at each
// receive, never past the holder's lease.
func TestContentBusyWait(t *testing.T) {
	e := newTestEnv(t, nil)
	inv := e.h.newInvocation(t.Context())
	now := inv.now()
	for _, tt := range []struct {
		receives int
		lease    time.Duration
		want     time.Duration
	}{
		{1, time.Minute, 5 * time.Second},
		{2, time.Minute, 10 * time.Second},
		{4, time.Minute, 40 * time.Second},
		{5, time.Minute, time.Minute},
		{0, time.Hour, 5 * time.Second},
		{9, time.Hour, 1280 * time.Second},
		{1, -time.Second, 0},
	} {
		// The clock moves between readings: compare to the second.
		if got := inv.contentBusyWait(now.Add(tt.lease), tt.receives); got.Round(time.Second) != tt.want {
			t.Errorf("receive %d, lease %s: wait %s, want %s", tt.receives, tt.lease, got, tt.want)
		}
	}
}
