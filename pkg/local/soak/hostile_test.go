package soak

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
	"github.com/geolocate-aws/geolocate/pkg/photo/phototest"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// Photos built to hurt (issue 23), generated here: nothing big is
// committed. The 100 MP ones are their real headers padded past the
// size limit: the pipeline refuses them from the header alone, so what
// follows it is never read (make bench runs real 100 MP files and
// measures the predictor's peak RSS on them).

// crash32 is the 32-byte upload that killed the process: an APP1 Exif
// segment whose length (4) is shorter than its own header.
func crash32(testing.TB) []byte {
	return append([]byte("\xff\xd8\xff\xe1\x00\x04Exif\x00\x00"), bytes.Repeat([]byte{0xA5}, 20)...)
}

// amplifyingPNG is a 250 KiB PNG whose eXIf GPS entries are RATIONAL
// arrays spanning the whole block (48 s and 10.5 GB before the fix).
func amplifyingPNG(testing.TB) []byte {
	return exiftest.PNG(exiftest.AmplifyingGPS(250<<10-200, 0), nil)
}

// amplifyingJPEG is the same in a 64 KiB APP1 segment (1.8 s, 682 MB).
func amplifyingJPEG(testing.TB) []byte {
	return exiftest.JPEG(exiftest.AmplifyingGPS(0xFFFF-8, 0), nil, 0)
}

// progressive100MP is a 10,000 x 10,000 progressive 4:4:4 JPEG of 23 MB:
// about 1.5 GB to decode, more than a 1,024 MB function has.
func progressive100MP(testing.TB) []byte {
	return sized(phototest.JPEGHeader(true, 10_000, 10_000, 0x11, 0x11, 0x11), 23_000_000)
}

// png16bit100MP is a 10,000 x 10,000 16-bit RGBA PNG of 11 MB: 800 MB
// decoded, with the resize about 1 GB.
func png16bit100MP(testing.TB) []byte {
	return sized(phototest.PNGHeader(10_000, 10_000, 16, phototest.RGBA, false), 11_000_000)
}

// realJPEG is a 1,500 x 1,000 JPEG from cjpeg with args, made progressive
// with jpegtran when asked, or CMYK.
func realJPEG(kind string, args ...string) func(testing.TB) []byte {
	return func(t testing.TB) []byte {
		phototest.NeedTools(t)
		var b []byte
		var err error
		if kind == "cmyk" {
			b, err = phototest.CMYK(1500, 1000, 20, 7)
		} else {
			b, err = phototest.JPEG(1500, 1000, 20, 7, args...)
		}
		if err == nil && kind == "progressive" {
			b, err = phototest.Progressive(b)
		}
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

func interlacedPNG(t testing.TB) []byte {
	var b bytes.Buffer
	if err := phototest.PNG(&b, 1200, 900, 16, phototest.RGBA, true, 20, 7); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// smallLimit makes the real hostile photos (a few MB) oversize, so that
// they are decoded and downscaled as a 100 MP one would be.
var smallLimit = rigOptions{env: map[string]string{envvars.MaxImageBytes: "100000"}}

func wantDownscaled(t *testing.T, rec *ledger.Record) {
	if !rec.Downscaled || rec.SentBytes <= 0 || rec.SentBytes > 100_000 {
		t.Errorf("downscaled %v, sent %d bytes: want a JPEG under the 100,000-byte limit", rec.Downscaled, rec.SentBytes)
	}
}

// hostileInputs are issue 23's photos, each with the record it must end in.
func hostileInputs() []badInput {
	return []badInput{
		{name: "32-byte APP1 shorter than its Exif header", body: crash32, rig: skipEXIF,
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1, check: wantEXIFProblem(photoexif.ReasonMalformed)},
		{name: "PNG with a 250 KiB eXIf of amplifying GPS entries", key: "amplifying.png", body: amplifyingPNG, rig: skipEXIF,
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1, check: wantEXIFProblem(photoexif.ReasonIFDCount)},
		{name: "JPEG with a 64 KiB APP1 of amplifying GPS entries", body: amplifyingJPEG, rig: skipEXIF,
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1, check: wantEXIFProblem(photoexif.ReasonIFDCount)},
		{name: "100 MP progressive 4:4:4 JPEG of 23 MB", body: progressive100MP,
			wantStatus: ledger.StatusRejected, wantCode: predictor.ReasonOverMemory,
			check: wantMessage("progressive JPEG, 4:4:4")},
		{name: "100 MP 16-bit RGBA PNG of 11 MB", key: "wide.png", body: png16bit100MP,
			wantStatus: ledger.StatusRejected, wantCode: predictor.ReasonOverMemory,
			check: wantMessage("16-bit RGBA PNG")},
		{name: "progressive 4:4:4 JPEG over the limit", body: realJPEG("progressive", "-sample", "1x1"), rig: smallLimit,
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1, check: wantDownscaled},
		{name: "CMYK JPEG over the limit", body: realJPEG("cmyk"), rig: smallLimit,
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1, check: wantDownscaled},
		{name: "interlaced 16-bit PNG over the limit", key: "interlaced.png", body: interlacedPNG, rig: smallLimit,
			wantStatus: ledger.StatusSucceeded, wantCalls: 1, wantCharged: 1, check: wantDownscaled},
	}
}

// TestHostileBesideNormalPhotos: the hostile uploads delivered in the same
// batches as normal photos, at the default limits: no crash, a final
// record for each, and every normal photo succeeded. The time of the mixed
// batches against all-normal ones is logged (timed assertions flake on a
// shared machine).
func TestHostileBesideNormalPhotos(t *testing.T) {
	r := newRig(t, rigOptions{logLevel: "INFO"})
	hostile := map[string]struct {
		body           func(testing.TB) []byte
		status, reason string
	}{
		"crash32.jpg":       {crash32, ledger.StatusSucceeded, ""},
		"amplifying.png":    {amplifyingPNG, ledger.StatusSucceeded, ""},
		"amplifying.jpg":    {amplifyingJPEG, ledger.StatusSucceeded, ""},
		"progressive.jpg":   {progressive100MP, ledger.StatusRejected, predictor.ReasonOverMemory},
		"wide.png":          {png16bit100MP, ledger.StatusRejected, predictor.ReasonOverMemory},
		"bomb.png":          {func(testing.TB) []byte { return exiftest.PNGBomb(exiftest.Harbour().Bytes(), 100_000, 100_000) }, ledger.StatusRejected, predictor.ReasonTooManyPixels},
		"over-10MB.jpg":     {func(t testing.TB) []byte { return sized(uniqueJPEG(t, "big"), 10_000_001) }, ledger.StatusSucceeded, ""},
		"text-as-photo.jpg": {func(testing.TB) []byte { return textFile() }, ledger.StatusRejected, predictor.ReasonNotAnImage},
	}
	var normal, mixed []object
	normalOnly := func(i int) object {
		return r.put(fmt.Sprintf("normal/%02d.jpg", i), uniqueJPEG(t, fmt.Sprint("normal", i)))
	}
	for i := range 10 {
		normal = append(normal, normalOnly(i))
	}
	i := 0
	for key, h := range hostile {
		mixed = append(mixed, r.put(key, h.body(t)), normalOnly(100+i))
		i++
	}
	deliver := func(objs []object) time.Duration {
		start := time.Now()
		for len(objs) > 0 {
			n := min(5, len(objs)) // the stack's batch size
			var bodies []string
			for _, o := range objs[:n] {
				bodies = append(bodies, uploadEvent(t, o))
			}
			if retried := r.invokeBatch(bodies); len(retried) != 0 {
				t.Errorf("returned for retry: %v", retried)
			}
			objs = objs[n:]
		}
		return time.Since(start)
	}
	normalTime := deliver(normal)
	mixedTime := deliver(mixed)
	t.Logf("10 normal photos: %v; 8 hostile files beside 8 normal photos: %v", normalTime, mixedTime)

	for _, o := range append(normal, mixed...) {
		rec := r.record(o)
		if rec == nil {
			t.Errorf("%s: no record", o.Key)
			continue
		}
		want, isHostile := hostile[o.Key]
		switch {
		case !isHostile && rec.Status != ledger.StatusSucceeded:
			t.Errorf("normal photo %s: %s %s (%s)", o.Key, rec.Status, rec.ErrorCode, rec.ErrorMessage)
		case isHostile && (rec.Status != want.status || rec.ErrorCode != want.reason):
			t.Errorf("%s: %s %q (%s), want %s %q", o.Key, rec.Status, rec.ErrorCode, rec.ErrorMessage, want.status, want.reason)
		}
	}
	if n := strings.Count(r.scanTable(), "in_progress"); n != 0 {
		t.Errorf("%d records left in progress", n)
	}
}
