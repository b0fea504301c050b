package downscale

import (
	"bytes"
	"context"
	"errors"
	"image/jpeg"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/photo/downscale/downscaletest"
	"github.com/geolocate-aws/geolocate/pkg/photo/phototest"
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

// largestScanBomb is the largest 4:3 greyscale progressive image the memory
// budget of a function of memMB accepts, as (width, height).
func largestScanBomb(tb testing.TB, memMB int64) (int, int) {
	opts := Options{MemoryBudget: MemoryBudget(memMB << 20)}
	lo, hi := 8, 1<<14 // width in multiples of 4
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if _, ok, err := Estimate(downscaletest.ScanBomb(mid*4, mid*3, 0), opts); ok && err == nil {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo * 4, lo * 3
}

// BenchmarkScanBombAt512MB measures the worst decode the scan limit lets
// through on a 512 MB function: the largest greyscale progressive image its
// memory budget accepts, with tiny refinement scans (the cheapest bytes per
// block visit). "refused" carries 100 of them and is stopped at the scan
// past MaxProgressivePasses; "accepted" carries one fewer than the limit
// (the limit's passes with its DC scan) and is decoded, resized and
// encoded; "libjpeg" has libjpeg's greyscale 6 passes, for comparison.
// Reported: time per input MB and the input's size.
func BenchmarkScanBombAt512MB(b *testing.B) {
	w, h := largestScanBomb(b, 512)
	opts := Options{MemoryBudget: MemoryBudget(512 << 20)}
	for _, bc := range []struct {
		name        string
		refinements int
	}{{"refused", 100}, {"accepted", MaxProgressivePasses - 1}, {"libjpeg", 5}} {
		b.Run(bc.name, func(b *testing.B) {
			bomb := downscaletest.ScanBomb(w, h, bc.refinements)
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			for b.Loop() {
				_, err := Downscale(context.Background(), bytes.NewReader(bomb), opts)
				var ce *CostError
				if refused := errors.As(err, &ce); refused != (bc.name == "refused") || (!refused && err != nil) {
					b.Fatalf("%d x %d, %d scans: %v", w, h, bc.refinements+1, err)
				}
			}
			cpu := (cpuTime(b) - cpu0).Seconds() / float64(b.N)
			mb := float64(len(bomb)) / 1e6
			b.ReportMetric(float64(w*h)/1e6, "MP")
			b.ReportMetric(mb, "input-MB")
			b.ReportMetric(cpu, "cpu-s/op")
			b.ReportMetric(cpu/mb, "cpu-s/input-MB")
		})
	}
}

// TestRealProgressiveWithinPasses: what libjpeg-turbo's encoders write
// (cjpeg -progressive's default scripts for greyscale, 4:2:0, 4:2:2, 4:4:4;
// jpegtran -progressive of a CMYK JPEG) visits its blocks at most half
// MaxProgressivePasses times, so the limit refuses no such photo.
func TestRealProgressiveWithinPasses(t *testing.T) {
	phototest.NeedTools(t)
	cmyk, err := phototest.CMYK(96, 64, 30, 2)
	if err != nil {
		t.Fatal(err)
	}
	cmykProgressive, err := phototest.Progressive(cmyk)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"cmyk (jpegtran)": cmykProgressive}
	for name, args := range map[string][]string{
		"greyscale": {"-progressive", "-grayscale"},
		"4:2:0":     {"-progressive"},
		"4:2:2":     {"-progressive", "-sample", "2x1"},
		"4:4:4":     {"-progressive", "-sample", "1x1"},
	} {
		jpg, err := phototest.JPEG(200, 150, 30, 1, args...)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = jpg
	}
	for name, jpg := range files {
		g := newScanGuard(context.Background(), bytes.NewReader(jpg))
		if _, err := jpeg.Decode(g); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Logf("%s: %d scans, %.2f passes", name, g.scans, g.passes())
		if !g.progressive || g.passes() > MaxProgressivePasses/2 {
			t.Errorf("%s: progressive %v, %.2f passes: over half the limit of %d", name, g.progressive, g.passes(), MaxProgressivePasses)
		}
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestScanBombBehindStrayFF00: image/jpeg skips an FF 00 between segments;
// read as a marker with a length, it would make the guard skip the next
// 64 KB, the scans in them uncounted. The bomb behind one is still refused.
func TestScanBombBehindStrayFF00(t *testing.T) {
	bomb := downscaletest.ScanBomb(4000, 3000, 200)
	sos := bytes.Index(bomb, []byte{0xFF, 0xDA})
	stray := append(append(append([]byte{}, bomb[:sos]...), 0xFF, 0x00), bomb[sos:]...)
	if _, err := jpeg.DecodeConfig(bytes.NewReader(stray)); err != nil {
		t.Fatal(err)
	}
	_, err := Downscale(context.Background(), bytes.NewReader(stray), Options{})
	var ce *CostError
	if !errors.As(err, &ce) || ce.Scans != MaxProgressivePasses+1 {
		t.Fatalf("Downscale = %v, want a CostError at scan %d", err, MaxProgressivePasses+1)
	}
}
