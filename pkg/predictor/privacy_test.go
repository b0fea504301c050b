package predictor

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/geodist"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/photo/metastrip/metastriptest"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// keepFiles makes the simulator keep what it received.
func keepFiles(c *geosim.Config) { c.KeepFiles = true }

func samplePhoto(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "images", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// receivedFile is the bytes the simulator received for an upload of size
// bytes (stripping keeps the length, and the samples differ in size).
func receivedFile(t *testing.T, calls []geosim.Call, size int64) []byte {
	t.Helper()
	for _, c := range calls {
		if c.BytesReceived == size {
			return c.File
		}
	}
	t.Fatalf("no call received %d bytes", size)
	return nil
}

func decodeJPEG(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode JPEG: %v", err)
	}
	return img
}

// The "done when": phone photos (a JPEG and a HEIC with GPS,
// camera, serial, capture time and XMP) reach the service with none of it,
// the JPEG's pixels unchanged, and the records still hold the EXIF facts
// and the distance from the prediction to the EXIF position.
func TestPhonePhotosReachTheServiceWithoutTheirOwnersMetadata(t *testing.T) {
	// reuseResults=content (the default): the photos are within
	// OnePassMaxBytes, so the digest's read is the upload's too.
	e := newTestEnv(t, nil, keepFiles)
	photos := map[string][]byte{
		"phone.jpg":  samplePhoto(t, "exif-gps-phone.jpg"),
		"phone.heic": samplePhoto(t, "exif-gps-phone.heic"),
	}
	var msgs []sqsMessage
	ups := map[string]upload{}
	for name, b := range photos {
		if found := metastriptest.OwnerMetadata(t, b); len(found) == 0 {
			t.Fatalf("%s: exiftool finds no owner metadata in the sample: the test would prove nothing", name)
		}
		ups[name] = e.put(name, b)
		msgs = append(msgs, uploadMessage(name, ups[name]))
	}
	if failed := e.invokeSQS(sqsBatch(msgs...)); len(failed) != 0 {
		t.Fatalf("retry %v", failed)
	}
	calls := e.predictCalls()
	if len(calls) != len(photos) {
		t.Fatalf("%d calls, want %d", len(calls), len(photos))
	}
	for name, b := range photos {
		sent := receivedFile(t, calls, int64(len(b)))
		if found := metastriptest.OwnerMetadata(t, sent); len(found) != 0 {
			t.Errorf("%s: the service received %v", name, found)
		}
		rec := e.record(ups[name])
		if sum := sha256.Sum256(sent); rec.ContentSHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: content_sha256 %s names other bytes than the service received", name, rec.ContentSHA256)
		}
		if rec.Status != ledger.StatusSucceeded || rec.UploadMetadata != UploadMetadataStrip || rec.MetadataRemoved["exif"] == 0 || rec.MetadataRemoved["xmp"] == 0 {
			t.Errorf("%s: status %q upload_metadata %q removed %v", name, rec.Status, rec.UploadMetadata, rec.MetadataRemoved)
		}
		if rec.ErrorKm == nil || rec.ExifLatitude == nil || rec.CameraModel == "" || rec.CapturedAt == "" || rec.PositionSent {
			t.Errorf("%s: error_km %v exif %v camera %q captured %q position_sent %v: EXIF is read before it is stripped",
				name, rec.ErrorKm, rec.ExifLatitude, rec.CameraModel, rec.CapturedAt, rec.PositionSent)
		} else if want := geodist.Km(*rec.Latitude, *rec.Longitude, *rec.ExifLatitude, *rec.ExifLongitude); *rec.ErrorKm != want {
			t.Errorf("%s: error_km %v, want %v", name, *rec.ErrorKm, want)
		}
	}
	jpg := photos["phone.jpg"]
	samePixelsJPEG(t, decodeJPEG(t, jpg), decodeJPEG(t, receivedFile(t, calls, int64(len(jpg)))))
	if n := e.requests.get("s3.GetObject"); n != len(photos) {
		t.Errorf("%d GETs for %d photos: neither stripping nor the digest may read an object twice", n, len(photos))
	}
	if e.metricSum(metricnames.PredictionErrorKm) == 0 {
		t.Error("no PredictionErrorKm for stripped uploads with an EXIF position")
	}
}

func samePixelsJPEG(t *testing.T, a, b image.Image) {
	t.Helper()
	if a.Bounds() != b.Bounds() {
		t.Fatalf("bounds %v, %v", a.Bounds(), b.Bounds())
	}
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			if a.At(x, y) != b.At(x, y) {
				t.Fatalf("pixel %d,%d differs: %v, %v", x, y, a.At(x, y), b.At(x, y))
			}
		}
	}
}

// With uploadMetadata=keep the object goes as stored, and a photo whose
// upload carried its position is left out of the accuracy figures.
func TestKeepSendsTheObjectAsStoredAndLeavesItOutOfTheAccuracy(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.UploadMetadata = UploadMetadataKeep }, keepFiles)
	body := samplePhoto(t, "exif-gps-phone.jpg")
	u := e.put("phone.jpg", body)
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", u))); len(failed) != 0 {
		t.Fatalf("retry %v", failed)
	}
	calls := e.predictCalls()
	sum := sha256.Sum256(body)
	if len(calls) != 1 || calls[0].FileSHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("calls %+v, want one carrying the object's exact bytes", calls)
	}
	rec := e.record(u)
	if rec.UploadMetadata != UploadMetadataKeep || !rec.PositionSent || rec.MetadataRemoved != nil {
		t.Errorf("upload_metadata %q position_sent %v removed %v", rec.UploadMetadata, rec.PositionSent, rec.MetadataRemoved)
	}
	if rec.ErrorKm != nil || rec.ExifLatitude == nil {
		t.Errorf("error_km %v exif %v: the EXIF position is recorded, the distance is not (the service was sent it)", rec.ErrorKm, rec.ExifLatitude)
	}
	if got := e.metricSum(metricnames.PredictionErrorKm); got != 0 {
		t.Errorf("PredictionErrorKm %v published for an upload that carried its position", got)
	}
}

// A photo that cannot be stripped is not sent, and costs nothing, unless
// the operator said to keep metadata.
func TestUnstrippablePhotosAreRejectedBeforeAnyCredit(t *testing.T) {
	gif := append([]byte("GIF89a\x10\x00\x10\x00\x00\x00\x00"), bytes.Repeat([]byte{0x3b}, 64)...)
	jpg := harbourJPEG()
	broken := append([]byte{0xFF, 0xD8, 0xFF, 0xE5, 0x00, 0x01}, jpg[2:]...) // a segment length below 2
	// A JPEG 2000 marker, which no JPEG holds: readers differ on whether a
	// length follows, so what it wraps could be an APP1 Exif to one of them.
	j2k := append([]byte{0xFF, 0xD8, 0xFF, 0x92, 0x00, 0x04, 0x00, 0x00}, jpg[2:]...)
	for _, tc := range []struct {
		name string
		body []byte
	}{{"gif", gif}, {"broken jpeg header", broken}, {"jpeg 2000 marker", j2k}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t, nil)
			u := e.put("photo", tc.body)
			e.invokeSQS(sqsBatch(uploadMessage("m1", u)))
			rec := e.record(u)
			if rec.Status != ledger.StatusRejected || rec.ErrorCode != ReasonCannotStripMetadata {
				t.Fatalf("status %q code %q (%s), want rejected %s", rec.Status, rec.ErrorCode, rec.ErrorMessage, ReasonCannotStripMetadata)
			}
			if n := len(e.predictCalls()); n != 0 {
				t.Errorf("%d calls for a photo that cannot be stripped", n)
			}
			keep := newTestEnv(t, func(c *Config) { c.UploadMetadata = UploadMetadataKeep })
			keep.invokeSQS(sqsBatch(uploadMessage("m1", keep.put("photo", tc.body))))
			if n := len(keep.predictCalls()); n != 1 {
				t.Errorf("uploadMetadata=keep: %d calls, want the photo sent as it is", n)
			}
		})
	}
}
