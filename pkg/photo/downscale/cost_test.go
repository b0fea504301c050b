package downscale

import (
	"bytes"
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
	"github.com/geolocate-aws/geolocate/pkg/photo/phototest"
)

// costCase is one kind of image whose decode the estimate must price.
type costCase struct {
	name string
	make func(t testing.TB) []byte
	// kind is a part of Cost.Kind.
	kind string
}

func cjpeg(w, h int, args ...string) func(t testing.TB) []byte {
	return func(t testing.TB) []byte {
		phototest.NeedTools(t)
		b, err := phototest.JPEG(w, h, 20, 1, args...)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

func progressive(mk func(t testing.TB) []byte) func(t testing.TB) []byte {
	return func(t testing.TB) []byte {
		b, err := phototest.Progressive(mk(t))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

func cmyk(w, h int) func(t testing.TB) []byte {
	return func(t testing.TB) []byte {
		phototest.NeedTools(t)
		b, err := phototest.CMYK(w, h, 20, 1)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

func pngOf(w, h, depth, colorType int, interlaced bool) func(t testing.TB) []byte {
	return func(t testing.TB) []byte {
		var b bytes.Buffer
		if err := phototest.PNG(&b, w, h, depth, colorType, interlaced, 20, 1); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
}

func fileOf(name string) func(t testing.TB) []byte {
	return func(t testing.TB) []byte {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// costCases cover every branch of the estimate: chroma sampling,
// progressive coefficients, CMYK and RGB conversion, PNG bit depths,
// colour types and interlacing, lossy and lossless WebP.
func costCases() []costCase {
	const w, h = 1203, 805 // not multiples of 8 or 16: the padding counts
	return []costCase{
		{"baseline 4:2:0", cjpeg(w, h), "baseline JPEG, 4:2:0"},
		{"baseline 4:4:4", cjpeg(w, h, "-sample", "1x1"), "baseline JPEG, 4:4:4"},
		{"baseline 4:2:2", cjpeg(w, h, "-sample", "2x1"), "baseline JPEG, 4:2:2"},
		{"progressive 4:4:4", progressive(cjpeg(w, h, "-sample", "1x1")), "progressive JPEG, 4:4:4"},
		{"progressive 4:2:0", progressive(cjpeg(w, h)), "progressive JPEG, 4:2:0"},
		{"progressive grey", progressive(cjpeg(w, h, "-grayscale")), "progressive JPEG, grey"},
		{"RGB JPEG", cjpeg(w, h, "-rgb"), "baseline JPEG, 4:4:4"},
		{"CMYK", cmyk(w, h), "baseline JPEG, CMYK"},
		{"progressive CMYK", progressive(cmyk(w, h)), "progressive JPEG, CMYK"},
		{"PNG 16-bit RGBA", pngOf(w, h, 16, phototest.RGBA, false), "16-bit RGBA PNG"},
		{"PNG 16-bit RGB interlaced", pngOf(w, h, 16, phototest.RGB, true), "16-bit RGB PNG, interlaced"},
		{"PNG 8-bit RGBA interlaced", pngOf(w, h, 8, phototest.RGBA, true), "8-bit RGBA PNG, interlaced"},
		{"PNG 8-bit grey", pngOf(w, h, 8, phototest.Grey, false), "8-bit grey PNG"},
		{"PNG 16-bit grey+alpha", pngOf(w, h, 16, phototest.GreyAlpha, false), "16-bit grey+alpha PNG"},
		{"WebP lossy", fileOf("blue-purple-pink.lossy.webp"), "lossy WebP"},
		{"WebP lossless", fileOf("gopher-doc.8bpp.lossless.webp"), "lossless WebP"},
	}
}

// allocatedBy is the bytes f allocates.
func allocatedBy(f func()) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc - before.TotalAlloc)
}

// TestEstimateMatchesDecoders: for every kind of image, the estimated
// decode cost is at least what the decoder allocates (nearly everything it
// allocates is live at its end, or in an interlaced PNG's passes, counted
// in full), and not far above it, so the budget neither lets an image
// through that does not fit nor refuses one that does.
func TestEstimateMatchesDecoders(t *testing.T) {
	for _, tc := range costCases() {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.make(t)
			c, ok, err := Estimate(b, Options{})
			if !ok || err != nil {
				t.Fatalf("Estimate: ok %v, err %v", ok, err)
			}
			if !strings.Contains(c.Kind, tc.kind) {
				t.Errorf("kind %q, want %q", c.Kind, tc.kind)
			}
			format, _ := imageformat.Detect(b)
			var derr error
			got := allocatedBy(func() { _, derr = codecs[format].decode(bytes.NewReader(b)) })
			if derr != nil {
				t.Fatalf("decode: %v", derr)
			}
			t.Logf("%d x %d: estimated %d, decoder allocated %d (%.2fx)", c.Width, c.Height, c.Decode, got, float64(c.Decode)/float64(got))
			// Allocated, not live: zlib's inflater makes a little garbage
			// per compressed block (its Huffman tables), which the
			// collector takes back; 2% covers it.
			if c.Decode < got-got/50 {
				t.Errorf("estimated %d bytes, the decoder allocated %d: the estimate is not an upper bound", c.Decode, got)
			}
			// The WebP files are small: fixed costs dominate.
			if slack := got*13/10 + 1<<20; c.Decode > slack && !strings.Contains(tc.kind, "WebP") {
				t.Errorf("estimated %d bytes, the decoder allocated %d: more than 30%% over", c.Decode, got)
			}
		})
	}
}

// TestMemoryBudgetRefuses: an image over the budget is refused with a
// *MemoryError from its header, before decoding (here the budget is set
// under the image's cost; the 100 MP cases run in the soak and make
// bench), and one under it is downscaled.
func TestMemoryBudgetRefuses(t *testing.T) {
	b := progressive(cjpeg(1203, 805, "-sample", "1x1"))(t)
	o := Options{MaxSide: 512}
	c, _, err := Estimate(b, o)
	if err != nil {
		t.Fatal(err)
	}
	o.MemoryBudget = c.Peak - 1
	var res Result
	var derr error
	n := allocatedBy(func() { res, derr = Downscale(context.Background(), bytes.NewReader(b), o) })
	var me *MemoryError
	if !errors.As(derr, &me) {
		t.Fatalf("Downscale: %v, want a *MemoryError", derr)
	}
	if !strings.Contains(me.Error(), "progressive JPEG, 4:4:4") || !strings.Contains(me.Error(), "1203 x 805") {
		t.Errorf("reason %q does not say what the image is", me.Error())
	}
	if n > c.Decode/4 {
		t.Errorf("allocated %d bytes before refusing: it decoded (the decode costs %d)", n, c.Decode)
	}
	if _, _, err := Estimate(b, o); !errors.As(err, &me) {
		t.Errorf("Estimate: %v, want a *MemoryError", err)
	}
	o.MemoryBudget = c.Peak
	if res, derr = Downscale(context.Background(), bytes.NewReader(b), o); derr != nil {
		t.Fatalf("within the budget: %v", derr)
	}
	checkOutput(t, res, o)
}

// TestMemoryBudget: the budget of a function of the default 1,024 MB is
// 80% of it less the reserve, and a function too small for any downscale
// gets none.
func TestMemoryBudget(t *testing.T) {
	if got, want := MemoryBudget(1024<<20), int64(1024<<20)*8/10-ProcessReserve; got != want || got != DefaultMemoryBudget {
		t.Errorf("MemoryBudget(1024 MiB) = %d, want %d = DefaultMemoryBudget %d", got, want, DefaultMemoryBudget)
	}
	if got := MemoryBudget(128 << 20); got != 1 {
		t.Errorf("MemoryBudget(128 MiB) = %d, want 1 (nothing fits)", got)
	}
}
