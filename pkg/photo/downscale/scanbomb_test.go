package downscale

import (
	"bytes"
	"context"
	"errors"
	"image/jpeg"
	"io"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/photo/downscale/downscaletest"
)

// TestScanBombValid: the builder's file is a JPEG image/jpeg decodes, so
// the refusal below is the guard's, not a format error.
func TestScanBombValid(t *testing.T) {
	img, err := jpeg.Decode(bytes.NewReader(downscaletest.ScanBomb(64, 48, 30)))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 64 || b.Dy() != 48 {
		t.Fatalf("decoded %v", b)
	}
}

// TestScanBombRefused: the 4000 x 3000 file (with 200 of its
// 422,170 scans, which image/jpeg decoded in about 4 s of CPU) is refused
// with a CostError at the scan that passes MaxProgressivePasses, before
// its blocks are walked, as is the same file at 64 x 48.
func TestScanBombRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		w, h, scans int
		wantScans   int
	}{
		"4000 x 3000, 200 scans": {4000, 3000, 200, MaxProgressivePasses + 1},
		"64 x 48, 600 scans":     {64, 48, 600, MaxProgressivePasses + 1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Downscale(context.Background(), bytes.NewReader(downscaletest.ScanBomb(tc.w, tc.h, tc.scans)), Options{MaxBytes: 100})
			var ce *CostError
			if !errors.As(err, &ce) {
				t.Fatalf("Downscale = %v, want a CostError", err)
			}
			if ce.Scans != tc.wantScans {
				t.Errorf("stopped at scan %d, want %d: %v", ce.Scans, tc.wantScans, err)
			}
		})
	}
}

// TestSequentialScanTwiceRefused: a baseline JPEG scanning its component
// a second time (each scan a full decode) is refused at that scan.
func TestSequentialScanTwiceRefused(t *testing.T) {
	jpg := encodeJPEG(t, noisyYCbCr(64, 48, 8), 80)
	sos := bytes.Index(jpg, []byte{0xFF, 0xDA})
	eoi := bytes.LastIndex(jpg, []byte{0xFF, 0xD9})
	twice := append(append(append([]byte{}, jpg[:eoi]...), jpg[sos:eoi]...), 0xFF, 0xD9)
	if _, err := jpeg.Decode(bytes.NewReader(twice)); err != nil {
		t.Fatalf("image/jpeg refuses the file itself: %v", err)
	}
	_, err := Downscale(context.Background(), bytes.NewReader(twice), Options{})
	var ce *CostError
	if !errors.As(err, &ce) || ce.Scans != 2 || ce.Progressive {
		t.Fatalf("Downscale = %v, want a CostError at the second sequential scan", err)
	}
	if _, err := Downscale(context.Background(), bytes.NewReader(jpg), Options{}); err != nil {
		t.Fatalf("the same JPEG scanned once: %v", err)
	}
}

// cancelAt cancels its context once offset bytes have been read through it.
type cancelAt struct {
	r      io.Reader
	n      int
	offset int
	cancel context.CancelFunc
}

func (c *cancelAt) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	if c.n >= c.offset {
		c.cancel()
	}
	return n, err
}

// TestGuardChecksContextPerScan: once the context is done the decoder is
// given no further scan: of a file within the limits, cancelled as scan 3's
// bytes are read, the decoder gets at most scan 4's header. (Before, the
// context was checked per 64 KiB refill: about 2,900 of these 22-byte scans,
// each ~20 ms of CPU at 4000 x 3000.)
func TestGuardChecksContextPerScan(t *testing.T) {
	bomb := downscaletest.ScanBomb(640, 480, 20)
	sos := 0
	for i := 0; i < 3; i++ {
		sos += bytes.Index(bomb[sos+1:], []byte{0xFF, 0xDA}) + 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := newScanGuard(ctx, &cancelAt{r: bytes.NewReader(bomb), offset: sos, cancel: cancel})
	_, err := jpeg.Decode(g)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("decode = %v, want context.Canceled", err)
	}
	if g.scans > 4 {
		t.Errorf("the decoder was given %d scans after the cancellation at scan 3", g.scans)
	}
}
