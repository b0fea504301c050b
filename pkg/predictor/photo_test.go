package predictor

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"image/jpeg"
	"math"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/geodist"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// harbourJPEG is a small photo carrying the sample EXIF block (Hamburg
// harbour, full GPS fix, time zone, camera).
func harbourJPEG() []byte { return exiftest.JPEG(exiftest.Harbour().Bytes(), nil, 0) }

func withGPS(mutate func(*exiftest.GPS)) []byte {
	p := exiftest.Harbour()
	g := *p.GPS
	mutate(&g)
	p.GPS = &g
	return exiftest.JPEG(p.Bytes(), nil, 0)
}

func TestEXIFIsRecordedWithThePredictionAndItsError(t *testing.T) {
	e := newTestEnv(t, reuseOff) // one GET: the digest would read the object a second time
	u := e.put("harbour.jpg", harbourJPEG())
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", u))); len(failed) != 0 {
		t.Fatalf("retry %v", failed)
	}
	if n := len(e.predictCalls()); n != 1 {
		t.Fatalf("%d calls, want 1 (exifGps=predict calls anyway)", n)
	}
	if n := e.requests.get("s3.GetObject"); n != 1 {
		t.Errorf("%d GETs, want 1: EXIF comes from the same read", n)
	}
	rec := e.record(u)
	want := exiftest.Harbour()
	if rec.Status != ledger.StatusSucceeded || rec.Source != ledger.SourceService {
		t.Fatalf("status %q source %q, want succeeded from the service", rec.Status, rec.Source)
	}
	if rec.ExifLatitude == nil || math.Abs(*rec.ExifLatitude-want.GPS.Lat) > 1e-5 ||
		rec.ExifLongitude == nil || math.Abs(*rec.ExifLongitude-want.GPS.Lon) > 1e-5 {
		t.Fatalf("EXIF position %v,%v, want %v,%v", rec.ExifLatitude, rec.ExifLongitude, want.GPS.Lat, want.GPS.Lon)
	}
	if rec.ExifAltitudeM == nil || *rec.ExifAltitudeM != *want.GPS.Altitude || rec.ExifDirectionDeg == nil || *rec.ExifDirectionDeg != *want.GPS.Direction {
		t.Errorf("altitude %v direction %v, want %v %v", rec.ExifAltitudeM, rec.ExifDirectionDeg, *want.GPS.Altitude, *want.GPS.Direction)
	}
	if rec.CapturedAt != "2024-06-01T21:42:05+02:00" {
		t.Errorf("captured_at %q, want the EXIF time with its offset", rec.CapturedAt)
	}
	if rec.CameraMake != want.Make || rec.CameraModel != want.Model {
		t.Errorf("camera %q %q, want %q %q", rec.CameraMake, rec.CameraModel, want.Make, want.Model)
	}
	if rec.Latitude == nil || rec.ErrorKm == nil {
		t.Fatalf("prediction %v or error %v missing", rec.Latitude, rec.ErrorKm)
	}
	wantKm := geodist.Km(*rec.Latitude, *rec.Longitude, *rec.ExifLatitude, *rec.ExifLongitude)
	if math.Abs(*rec.ErrorKm-wantKm) > 1e-9 {
		t.Errorf("error_km %v, want the distance prediction->EXIF %v", *rec.ErrorKm, wantKm)
	}
	// Once per pipeline and once per model.
	for _, model := range []string{"", rec.ModelID} {
		if got := sumMetric(t, e.metrics.String(), metricnames.PredictionErrorKm, "", model); math.Abs(got-wantKm) > 1e-6 {
			t.Errorf("PredictionErrorKm (model %q) sum %v, want %v", model, got, wantKm)
		}
	}
	within := geodist.Within(wantKm)
	for _, model := range []string{"", rec.ModelID} {
		if got := sumMetric(t, e.metrics.String(), metricnames.PredictionsWithin, "", model); got != float64(len(within)) {
			t.Errorf("PredictionsWithin (model %q) sum %v, want %d (thresholds %v)", model, got, len(within), within)
		}
	}
}

func TestPhotoWithoutEXIFHasNoErrorAndSaysWhy(t *testing.T) {
	e := newTestEnv(t, nil)
	u := e.put("plain.jpg", testJPEG(t, 3))
	e.invokeSQS(sqsBatch(uploadMessage("m1", u)))
	rec := e.record(u)
	if rec.Status != ledger.StatusSucceeded || rec.ErrorKm != nil || rec.ExifLatitude != nil {
		t.Fatalf("status %q error %v exif %v, want a prediction without accuracy", rec.Status, rec.ErrorKm, rec.ExifLatitude)
	}
	if rec.ExifGPSProblem != string(photoexif.ReasonNoEXIF) {
		t.Errorf("exif_gps_problem %q, want %q", rec.ExifGPSProblem, photoexif.ReasonNoEXIF)
	}
	if e.metricSum(metricnames.PredictionErrorKm) != 0 {
		t.Error("PredictionErrorKm published for a photo without a position")
	}
}

func TestSkipRecordsAValidEXIFPositionWithoutACall(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.ExifGPS = ExifGPSSkip })
	u := e.put("harbour.jpg", harbourJPEG())
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", u))); len(failed) != 0 {
		t.Fatalf("retry %v", failed)
	}
	if n := len(e.predictCalls()); n != 0 {
		t.Fatalf("%d calls, want none for a photo whose position is known", n)
	}
	rec := e.record(u)
	g := exiftest.Harbour().GPS
	if rec.Status != ledger.StatusSucceeded || rec.Source != ledger.SourceEXIF || rec.CreditsConsumed != 0 {
		t.Fatalf("status %q source %q credits %d, want succeeded from exif for 0 credits", rec.Status, rec.Source, rec.CreditsConsumed)
	}
	if rec.Latitude == nil || math.Abs(*rec.Latitude-g.Lat) > 1e-5 || math.Abs(*rec.Longitude-g.Lon) > 1e-5 {
		t.Errorf("position %v,%v, want the EXIF one %v,%v", rec.Latitude, rec.Longitude, g.Lat, g.Lon)
	}
	if rec.ErrorKm != nil {
		t.Errorf("error_km %v on a record that is its own ground truth", *rec.ErrorKm)
	}
	if e.metricSum(metricnames.ImagesFromEXIF) != 1 || e.metricSum(metricnames.CreditsConsumed) != 0 {
		t.Errorf("ImagesFromEXIF %v CreditsConsumed %v, want 1 and 0",
			e.metricSum(metricnames.ImagesFromEXIF), e.metricSum(metricnames.CreditsConsumed))
	}
}

// Invalid GPS is never ground truth: in skip mode each of these is paid for
// like a photo without EXIF, and the record says why the position was not
// used.
func TestSkipNeverSkipsOnInvalidGPS(t *testing.T) {
	zero := exiftest.Rational{Num: 53, Den: 0}
	cases := []struct {
		name  string
		photo []byte
		want  photoexif.Reason
	}{
		{"null island", withGPS(func(g *exiftest.GPS) { g.Lat, g.Lon = 0, 0 }), photoexif.ReasonNullIsland},
		{"status void", withGPS(func(g *exiftest.GPS) { g.Status = "V" }), photoexif.ReasonStatusVoid},
		{"no fix", withGPS(func(g *exiftest.GPS) { g.OmitLatLon = true }), photoexif.ReasonNoFix},
		{"out of range", withGPS(func(g *exiftest.GPS) { g.Lat = 95 }), photoexif.ReasonOutOfRange},
		{"zero denominator", withGPS(func(g *exiftest.GPS) {
			g.LatRationals = &[3]exiftest.Rational{zero, {Num: 0, Den: 1}, {Num: 0, Den: 1}}
		}), photoexif.ReasonZeroDenominator},
		{"truncated EXIF", truncatedEXIFJPEG(t), photoexif.ReasonTruncated},
		{"EXIF beyond the head", exiftest.JPEG(exiftest.Harbour().Bytes(), nil, headBytes+1024), photoexif.ReasonBeyondHead},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t, func(c *Config) { c.ExifGPS = ExifGPSSkip })
			u := e.put("photo.jpg", tc.photo)
			e.invokeSQS(sqsBatch(uploadMessage("m1", u)))
			rec := e.record(u)
			if n := len(e.predictCalls()); n != 1 {
				t.Fatalf("%d calls, want 1: invalid GPS must not cause a skip", n)
			}
			if rec.Source == ledger.SourceEXIF || rec.ExifLatitude != nil || rec.ErrorKm != nil {
				t.Errorf("source %q exif %v error %v: invalid GPS used", rec.Source, rec.ExifLatitude, rec.ErrorKm)
			}
			if rec.ExifGPSProblem != string(tc.want) {
				t.Errorf("exif_gps_problem %q, want %q", rec.ExifGPSProblem, tc.want)
			}
		})
	}
}

// truncatedEXIFJPEG is a JPEG whose APP1 segment announces more EXIF than
// the file holds: the file ends inside the block.
func truncatedEXIFJPEG(t *testing.T) []byte {
	t.Helper()
	full := exiftest.JPEG(exiftest.Harbour().Bytes(), nil, 0)
	i := bytes.Index(full, []byte("Exif\x00\x00"))
	if i < 0 {
		t.Fatal("no Exif header in the sample")
	}
	return full[:i+40]
}

func TestIgnoreNeitherRecordsNorComparesTheEXIFPosition(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.ExifGPS = ExifGPSIgnore })
	u := e.put("harbour.jpg", harbourJPEG())
	e.invokeSQS(sqsBatch(uploadMessage("m1", u)))
	rec := e.record(u)
	if n := len(e.predictCalls()); n != 1 {
		t.Fatalf("%d calls, want 1", n)
	}
	if rec.ExifLatitude != nil || rec.ErrorKm != nil {
		t.Errorf("exif %v error %v recorded with exifGps=ignore", rec.ExifLatitude, rec.ErrorKm)
	}
	if rec.CameraModel != exiftest.Harbour().Model {
		t.Errorf("camera model %q: ignore drops only the position", rec.CameraModel)
	}
}

func TestWithinTheLimitIsSentByteForByteWhenMetadataIsKept(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.UploadMetadata = UploadMetadataKeep })
	body := harbourJPEG()
	u := e.put("harbour.jpg", body)
	e.invokeSQS(sqsBatch(uploadMessage("m1", u)))
	calls := e.predictCalls()
	sum := sha256.Sum256(body)
	if len(calls) != 1 || calls[0].FileSHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("calls %+v, want one carrying the object's exact bytes", calls)
	}
	if rec := e.record(u); rec.Downscaled {
		t.Error("a photo within the limit is recorded as downscaled")
	}
}

// largeJPEG is a decodable JPEG over limit bytes carrying the sample EXIF.
func largeJPEG(t testing.TB, limit int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := exiftest.WriteLargeJPEG(&buf, limit+limit/20, exiftest.Harbour().Bytes()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestOverTheLimitIsDownscaledUnderIt(t *testing.T) {
	const limit = 400_000 // a small limit keeps the photo, and the test, small
	e := newTestEnv(t, func(c *Config) { c.MaxImageBytes = limit; c.DownscaleMaxSide = 600 })
	body := largeJPEG(t, limit)
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	u := e.put("big.jpg", body)
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", u))); len(failed) != 0 {
		t.Fatalf("retry %v", failed)
	}
	calls := e.predictCalls()
	if len(calls) != 1 || calls[0].BytesReceived > limit || calls[0].BytesReceived == 0 {
		t.Fatalf("calls %+v, want one under %d bytes", calls, limit)
	}
	if n := e.requests.get("s3.GetObject"); n != 1 {
		t.Errorf("%d GETs, want 1", n)
	}
	rec := e.record(u)
	if rec.Status != ledger.StatusSucceeded || !rec.Downscaled {
		t.Fatalf("status %q downscaled %v", rec.Status, rec.Downscaled)
	}
	if rec.Size != int64(len(body)) || rec.OriginalWidth != cfg.Width || rec.OriginalHeight != cfg.Height {
		t.Errorf("original %d bytes %dx%d, want %d bytes %dx%d", rec.Size, rec.OriginalWidth, rec.OriginalHeight, len(body), cfg.Width, cfg.Height)
	}
	if rec.SentBytes != calls[0].BytesReceived || max(rec.SentWidth, rec.SentHeight) > 600 {
		t.Errorf("sent %d bytes %dx%d; the service got %d, max side 600", rec.SentBytes, rec.SentWidth, rec.SentHeight, calls[0].BytesReceived)
	}
	if rec.ErrorKm == nil {
		t.Error("the EXIF of a downscaled photo (read from the original's head) gave no error_km")
	}
	if e.metricSum(metricnames.ImagesDownscaled) != 1 {
		t.Error("ImagesDownscaled not counted")
	}
}

func TestOversizeRejectKeepsTheOldBehaviour(t *testing.T) {
	const limit = 400_000
	e := newTestEnv(t, func(c *Config) { c.MaxImageBytes = limit; c.Oversize = OversizeReject })
	u := e.put("big.jpg", largeJPEG(t, limit))
	e.invokeSQS(sqsBatch(uploadMessage("m1", u)))
	rec := e.record(u)
	if rec.Status != ledger.StatusRejected || rec.ErrorCode != ReasonTooLarge {
		t.Fatalf("status %q code %q, want rejected too_large", rec.Status, rec.ErrorCode)
	}
	if n := e.requests.get("s3.GetObject"); n != 0 || len(e.predictCalls()) != 0 {
		t.Errorf("%d GETs, %d calls; want none", n, len(e.predictCalls()))
	}
}

func TestOversizeSkipNeedsNoDownscale(t *testing.T) {
	const limit = 400_000
	e := newTestEnv(t, func(c *Config) { c.MaxImageBytes = limit; c.ExifGPS = ExifGPSSkip })
	u := e.put("big.jpg", largeJPEG(t, limit))
	e.invokeSQS(sqsBatch(uploadMessage("m1", u)))
	rec := e.record(u)
	if rec.Source != ledger.SourceEXIF || rec.Downscaled || len(e.predictCalls()) != 0 {
		t.Fatalf("source %q downscaled %v calls %d, want recorded from EXIF, nothing else", rec.Source, rec.Downscaled, len(e.predictCalls()))
	}
}

// Each of these is refused with a clear reason before any call: nothing is
// spent on what cannot be sent.
func TestUnsendablePhotosAreRejectedWithoutACall(t *testing.T) {
	harbour := exiftest.Harbour().Bytes()
	cases := []struct {
		name   string
		limit  int64
		body   []byte
		code   string
		detail string
	}{
		{"decompression bomb within the limit", 0, exiftest.PNGBomb(harbour, 100_000, 100_000), ReasonTooManyPixels, "100000 x 100000"},
		{"HEIC over the limit", 2000, exiftest.HEIC(harbour, 4000, 3000, 4096), ReasonCannotDownscale, "no pure-Go HEIC decoder"},
		{"corrupt JPEG over the limit", 2000, corruptJPEG(t), ReasonCannotDownscale, "cannot be downscaled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t, func(c *Config) {
				if tc.limit > 0 {
					c.MaxImageBytes = tc.limit
				}
			})
			u := e.put("bad", tc.body)
			if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", u))); len(failed) != 0 {
				t.Fatalf("retry %v: a photo that can never be sent must be final", failed)
			}
			rec := e.record(u)
			if rec.Status != ledger.StatusRejected || rec.ErrorCode != tc.code || !strings.Contains(rec.ErrorMessage, tc.detail) {
				t.Errorf("status %q code %q message %q, want rejected %s mentioning %q", rec.Status, rec.ErrorCode, rec.ErrorMessage, tc.code, tc.detail)
			}
			if n := len(e.predictCalls()); n != 0 {
				t.Errorf("%d calls, want none", n)
			}
		})
	}
}

// corruptJPEG has a valid header and garbage where the scan should be.
func corruptJPEG(t *testing.T) []byte {
	t.Helper()
	good := largeJPEG(t, 3000)
	sos := bytes.LastIndex(good, []byte{0xFF, 0xDA})
	if sos < 0 {
		t.Fatal("no SOS marker")
	}
	bad := append([]byte{}, good[:sos]...)
	return append(bad, bytes.Repeat([]byte{0xFF, 0x00, 0x13}, 2000)...)
}
