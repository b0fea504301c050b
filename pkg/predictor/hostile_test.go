package predictor

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/photo/downscale"
	"github.com/geolocate-aws/geolocate/pkg/photo/downscale/downscaletest"
	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
	"github.com/geolocate-aws/geolocate/pkg/photo/phototest"
)

// upload32 is the 32-byte upload of issue 23 that killed the process: an
// APP1 Exif segment whose length (4) is shorter than its own header.
func upload32() []byte {
	return append([]byte("\xff\xd8\xff\xe1\x00\x04Exif\x00\x00"), bytes.Repeat([]byte{0xA5}, 20)...)
}

// fuzzConfig is a configuration whose limits keep one fuzz run cheap: a
// photo over 4 KB is downscaled to 512 px, within a 200 MB function's
// budget (32 MiB), so that a mutated header cannot make a run allocate
// gigabytes, while every path (refusals, decode, resize, encode) is taken.
func fuzzConfig() Config {
	return Config{MaxImageBytes: 4096, Oversize: OversizeDownscale, ExifGPS: ExifGPSPredict,
		DownscaleMaxSide: MinDownscaleMaxSide, MemoryMB: 200}
}

// FuzzPhotoPath drives what the predictor runs on an object's bytes between
// the S3 GET and the upload, the real functions without any recover: the
// head's checks (examineHead: sniff, declared dimensions, EXIF, the
// downscale's memory estimate) and, for a photo over the limit, Downscale
// and the verdict on its failure. No input may panic; every refusal must be
// a final rejection with a known reason and a sentence, since the same
// bytes would fail again; a downscale that succeeds must fit the limit.
func FuzzPhotoPath(f *testing.F) {
	harbour := exiftest.Harbour().Bytes()
	for _, s := range [][]byte{
		upload32(),
		exiftest.JPEG(harbour, nil, 0),
		exiftest.PNG(harbour, nil),
		exiftest.WebP(harbour, 64, 48, 0),
		exiftest.HEIC(harbour, 64, 48, 0),
		exiftest.PNGBomb(harbour, 100_000, 100_000),
		exiftest.JPEG(exiftest.AmplifyingGPS(2048, 0), nil, 0),
		exiftest.JPEG(harbour, exiftest.Gradient(700, 300), 0),
		[]byte("plain text, not an image at all, long enough to sniff"),
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	cfg := fuzzConfig()
	rejections := map[string]bool{ReasonNotAnImage: true, ReasonTooManyPixels: true, ReasonOverMemory: true, ReasonCannotDownscale: true,
		ReasonDecodeTooCostly: true}
	f.Fuzz(func(t *testing.T, b []byte, oversize bool) {
		size := int64(len(b))
		if oversize {
			size = max(size, cfg.MaxImageBytes+1)
		}
		head := b[:min(len(b), photoexif.DefaultCaptureLimit)]
		v := examineHead(head, size, cfg)
		if v.reason != "" {
			if !rejections[v.reason] || v.detail == "" {
				t.Fatalf("rejection %q %q: not a known reason with a sentence", v.reason, v.detail)
			}
			return
		}
		if v.format.MIME == "" {
			t.Fatal("accepted without a format")
		}
		var p *photoexif.Problem
		if v.exifErr != nil && !errors.As(v.exifErr, &p) {
			t.Fatalf("EXIF error %v is not a Problem", v.exifErr)
		}
		if size <= cfg.MaxImageBytes {
			return // sent byte for byte
		}
		res, err := downscale.Downscale(context.Background(), bytes.NewReader(b), cfg.DownscaleOptions())
		if err != nil {
			if reason, detail := downscaleVerdict(err, nil, size, cfg); !rejections[reason] || detail == "" {
				t.Fatalf("downscale error %v: verdict %q %q, want a final rejection (the same bytes fail again)", err, reason, detail)
			}
			return
		}
		if res.Bytes > cfg.MaxImageBytes || max(res.Width, res.Height) > cfg.DownscaleMaxSide {
			t.Fatalf("downscaled to %d bytes, %d x %d: over the limits", res.Bytes, res.Width, res.Height)
		}
	})
}

// TestHostileUploads runs the hostile uploads of issue 23 through the
// handler: each ends in a true final record, and the normal photo of the
// same batch succeeds.
func TestHostileUploads(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.MaxImageBytes = 100_000; c.MemoryMB = 200 })
	normal := e.put("normal.jpg", exiftest.JPEG(exiftest.Harbour().Bytes(), nil, 0))
	crash := e.put("crash32.jpg", upload32())
	amplifying := e.put("amplifying.png", exiftest.PNG(exiftest.AmplifyingGPS(250<<10-200, 0), nil))
	batch := sqsBatch(uploadMessage("m1", normal), uploadMessage("m2", crash), uploadMessage("m3", amplifying))
	if failed := e.invokeSQS(batch); len(failed) != 0 {
		t.Fatalf("returned for retry: %v", failed)
	}
	if rec := e.record(normal); rec.Status != ledger.StatusSucceeded {
		t.Errorf("normal photo: %s %s", rec.Status, rec.ErrorCode)
	}
	// The 32-byte JPEG sniffs as an image the service may take; its EXIF
	// is refused with a reason, and it is paid for once.
	if rec := e.record(crash); rec.Status != ledger.StatusSucceeded || rec.ExifGPSProblem != string(photoexif.ReasonMalformed) {
		t.Errorf("32-byte upload: %s %s, exif problem %q", rec.Status, rec.ErrorCode, rec.ExifGPSProblem)
	}
	// 250 KiB, over the 100 KB limit here: the tiny image under its
	// amplifying eXIf is downscaled, the EXIF refused for its count.
	if rec := e.record(amplifying); rec.Status != ledger.StatusSucceeded || rec.ExifGPSProblem != string(photoexif.ReasonIFDCount) {
		t.Errorf("amplifying PNG: %s %s, exif problem %q", rec.Status, rec.ErrorCode, rec.ExifGPSProblem)
	}
}

// TestOverMemoryBudgetRejected: a photo over the limit whose downscale
// would not fit in the function's memory is rejected from its header with
// over_memory_budget, before decoding, and never sent.
func TestOverMemoryBudgetRejected(t *testing.T) {
	phototest.NeedTools(t)
	// 2,000 x 2,000 progressive 4:4:4 costs about 61 MB to decode: over
	// the 32 MiB a 200 MB function can spare.
	base, err := phototest.JPEG(2000, 2000, 30, 1, "-sample", "1x1")
	if err != nil {
		t.Fatal(err)
	}
	body, err := phototest.Progressive(base)
	if err != nil {
		t.Fatal(err)
	}
	e := newTestEnv(t, func(c *Config) { c.MaxImageBytes = int64(len(body)) - 1; c.MemoryMB = 200 })
	u := e.put("progressive.jpg", body)
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", u))); len(failed) != 0 {
		t.Fatalf("returned for retry: %v", failed)
	}
	rec := e.record(u)
	if rec.Status != ledger.StatusRejected || rec.ErrorCode != ReasonOverMemory {
		t.Fatalf("record %s %s (%s), want rejected %s", rec.Status, rec.ErrorCode, rec.ErrorMessage, ReasonOverMemory)
	}
	for _, part := range []string{"2000 x 2000", "progressive JPEG, 4:4:4", "200 MB"} {
		if !strings.Contains(rec.ErrorMessage, part) {
			t.Errorf("reason %q does not say %q", rec.ErrorMessage, part)
		}
	}
	if calls := e.predictCalls(); len(calls) != 0 {
		t.Errorf("%d calls, want none", len(calls))
	}
	if rec.ContentType != imageformat.JPEG.MIME {
		t.Errorf("content type %q", rec.ContentType)
	}
	// The same photo fits the default function's budget.
	if _, _, err := downscale.Estimate(body, Config{MaxImageBytes: 1, DownscaleMaxSide: 4096}.DownscaleOptions()); err != nil {
		t.Errorf("at the default memory: %v", err)
	}
}

// TestScanBombRejected: issue 33's progressive JPEG of tiny refinement
// scans, over the limit, is rejected for good (decode_too_costly) in the
// invocation that claims it, with no call, and the normal photo beside it
// succeeds. Before, its decode ran into the deadline and was returned for
// retry on every receive until the dead-letter queue.
func TestScanBombRejected(t *testing.T) {
	bomb := downscaletest.ScanBomb(4000, 3000, 400)
	e := newTestEnv(t, func(c *Config) { c.MaxImageBytes = int64(len(bomb)) - 1 })
	normal := e.put("normal.jpg", exiftest.JPEG(exiftest.Harbour().Bytes(), nil, 0))
	u := e.put("scans.jpg", bomb)
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", u), uploadMessage("m2", normal))); len(failed) != 0 {
		t.Fatalf("returned for retry: %v", failed)
	}
	rec := e.record(u)
	if rec.Status != ledger.StatusRejected || rec.ErrorCode != ReasonDecodeTooCostly || !strings.Contains(rec.ErrorMessage, "visit its blocks") {
		t.Fatalf("record %s %s (%s), want rejected %s", rec.Status, rec.ErrorCode, rec.ErrorMessage, ReasonDecodeTooCostly)
	}
	if rec := e.record(normal); rec.Status != ledger.StatusSucceeded {
		t.Errorf("normal photo: %s %s", rec.Status, rec.ErrorCode)
	}
	if calls := e.predictCalls(); len(calls) != 1 {
		t.Errorf("%d calls, want the normal photo's alone", len(calls))
	}
}
