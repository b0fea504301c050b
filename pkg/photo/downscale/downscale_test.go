package downscale

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
)

// checkOutput asserts what every success must hold: a decodable baseline
// JPEG of the reported size and dimensions, within the limits, with no
// metadata segment.
func checkOutput(t *testing.T, res Result, o Options) image.Image {
	t.Helper()
	o = o.withDefaults()
	if res.Bytes != int64(len(res.JPEG)) || res.Bytes > o.MaxBytes {
		t.Fatalf("Bytes = %d, len(JPEG) = %d, MaxBytes = %d", res.Bytes, len(res.JPEG), o.MaxBytes)
	}
	if max(res.Width, res.Height) > o.MaxSide {
		t.Fatalf("output %d x %d exceeds MaxSide %d", res.Width, res.Height, o.MaxSide)
	}
	img, err := jpeg.Decode(bytes.NewReader(res.JPEG))
	if err != nil {
		t.Fatalf("output does not decode: %v", err)
	}
	if b := img.Bounds(); b.Dx() != res.Width || b.Dy() != res.Height {
		t.Fatalf("output decodes as %v, Result says %d x %d", b, res.Width, res.Height)
	}
	if apps := appSegments(t, res.JPEG); len(apps) != 0 {
		t.Fatalf("output carries APPn segments % X: metadata must not survive", apps)
	}
	return img
}

// checkAspect asserts the output keeps the source's aspect ratio to within
// a pixel of rounding.
func checkAspect(t *testing.T, res Result) {
	t.Helper()
	if res.SourceWidth >= res.SourceHeight {
		want := float64(res.SourceHeight) * float64(res.Width) / float64(res.SourceWidth)
		if d := float64(res.Height) - want; d < -1 || d > 1 {
			t.Fatalf("height %d, want %.1f +-1 for %d x %d", res.Height, want, res.SourceWidth, res.SourceHeight)
		}
	} else {
		want := float64(res.SourceWidth) * float64(res.Height) / float64(res.SourceHeight)
		if d := float64(res.Width) - want; d < -1 || d > 1 {
			t.Fatalf("width %d, want %.1f +-1 for %d x %d", res.Width, want, res.SourceWidth, res.SourceHeight)
		}
	}
}

func TestDownscaleJPEGOver10MB(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and decodes a 24 MP JPEG")
	}
	src := withEXIF(encodeJPEG(t, noisyYCbCr(6000, 4000, 16), 95), "GPS 48.8584N 2.2945E")
	if int64(len(src)) <= DefaultMaxBytes {
		t.Fatalf("test input is %d bytes, want over %d", len(src), DefaultMaxBytes)
	}
	res, err := Downscale(context.Background(), bytes.NewReader(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bytes 6000 x 4000 -> %d bytes %d x %d at quality %d", len(src), res.Bytes, res.Width, res.Height, res.Quality)
	checkOutput(t, res, Options{})
	checkAspect(t, res)
	if res.SourceFormat != imageformat.JPEG || res.SourceWidth != 6000 || res.SourceHeight != 4000 {
		t.Errorf("source = %v %d x %d", res.SourceFormat, res.SourceWidth, res.SourceHeight)
	}
	if res.Width != 4096 || res.Height != 2731 || !res.Resized() {
		t.Errorf("output %d x %d, want 4096 x 2731", res.Width, res.Height)
	}
	if bytes.Contains(res.JPEG, []byte("Exif")) || bytes.Contains(res.JPEG, []byte("GPS 48.8584N")) {
		t.Error("the source's EXIF survived in the output")
	}
}

func TestDownscaleLowersQualityBeforeSize(t *testing.T) {
	src := encodeJPEG(t, noisyYCbCr(600, 400, 16), 95)
	atTop := len(encodeJPEG(t, noisyYCbCr(600, 400, 16), DefaultQuality))
	o := Options{MaxBytes: int64(atTop) * 3 / 4}
	res, err := Downscale(context.Background(), bytes.NewReader(src), o)
	if err != nil {
		t.Fatal(err)
	}
	checkOutput(t, res, o)
	if res.Quality >= DefaultQuality || res.Quality < DefaultMinQuality {
		t.Errorf("quality %d, want below %d and at least %d", res.Quality, DefaultQuality, DefaultMinQuality)
	}
	if res.Resized() {
		t.Errorf("resized to %d x %d although a lower quality fits", res.Width, res.Height)
	}
}

func TestDownscaleShrinksBelowMaxSideAtFloorQuality(t *testing.T) {
	src := encodeJPEG(t, noisyYCbCr(600, 400, 16), 95)
	o := Options{MaxBytes: 8_000, MaxSide: 500}
	res, err := Downscale(context.Background(), bytes.NewReader(src), o)
	if err != nil {
		t.Fatal(err)
	}
	checkOutput(t, res, o)
	checkAspect(t, res)
	if res.Width >= 500 || res.Quality != DefaultMinQuality {
		t.Errorf("got %d x %d at quality %d, want narrower than 500 at quality %d", res.Width, res.Height, res.Quality, DefaultMinQuality)
	}
	t.Logf("600 x 400 -> %d x %d, %d bytes at quality %d", res.Width, res.Height, res.Bytes, res.Quality)
}

func TestDownscaleFitError(t *testing.T) {
	src := encodeJPEG(t, noisyYCbCr(200, 100, 16), 95)
	_, err := Downscale(context.Background(), bytes.NewReader(src), Options{MaxBytes: 100})
	var fe *FitError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want *FitError", err)
	}
	if max(fe.Width, fe.Height) > minSide || !strings.Contains(err.Error(), "cannot fit the image under 100 bytes") {
		t.Errorf("FitError = %+v (%v)", fe, err)
	}
}

func TestDownscalePNGWithTransparency(t *testing.T) {
	// Left half opaque red, right half fully transparent: JPEG has no alpha,
	// and transparent must come out white, not black.
	src := image.NewNRGBA(image.Rect(0, 0, 300, 200))
	for y := 0; y < 200; y++ {
		for x := 0; x < 150; x++ {
			src.SetNRGBA(x, y, color.NRGBA{R: 255, A: 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, src); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{MaxSide: 120}, {}} { // resized, and re-encoded only
		res, err := Downscale(context.Background(), bytes.NewReader(buf.Bytes()), o)
		if err != nil {
			t.Fatal(err)
		}
		out := checkOutput(t, res, o)
		checkAspect(t, res)
		if res.SourceFormat != imageformat.PNG {
			t.Errorf("SourceFormat = %v", res.SourceFormat)
		}
		r, g, b, _ := out.At(res.Width/4, res.Height/2).RGBA()
		if r>>8 < 230 || g>>8 > 30 || b>>8 > 30 {
			t.Errorf("MaxSide %d: left half is %d,%d,%d, want red", o.MaxSide, r>>8, g>>8, b>>8)
		}
		r, g, b, _ = out.At(res.Width*3/4, res.Height/2).RGBA()
		if r>>8 < 240 || g>>8 < 240 || b>>8 < 240 {
			t.Errorf("MaxSide %d: transparent half is %d,%d,%d, want white", o.MaxSide, r>>8, g>>8, b>>8)
		}
	}
}

func TestDownscaleWebP(t *testing.T) {
	for _, name := range []string{"blue-purple-pink.lossy.webp", "gopher-doc.8bpp.lossless.webp"} {
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile("testdata/" + name)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range []Options{{MaxSide: 40}, {}} {
				res, err := Downscale(context.Background(), bytes.NewReader(src), o)
				if err != nil {
					t.Fatal(err)
				}
				checkOutput(t, res, o)
				checkAspect(t, res)
				if res.SourceFormat != imageformat.WebP {
					t.Errorf("SourceFormat = %v", res.SourceFormat)
				}
				if o.MaxSide == 40 && (!res.Resized() || max(res.Width, res.Height) != 40) {
					t.Errorf("%d x %d -> %d x %d, want longest side 40", res.SourceWidth, res.SourceHeight, res.Width, res.Height)
				}
			}
		})
	}
}

// TestDecompressionBomb: a 45-byte PNG declaring 100,000 x 100,000 pixels
// (30 GB as RGB) is refused from its header, allocating almost nothing.
func TestDecompressionBomb(t *testing.T) {
	bomb := pngWithIHDR(100_000, 100_000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Downscale(context.Background(), bytes.NewReader(bomb), Options{})
	runtime.ReadMemStats(&after)

	var de *DimensionsError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v, want *DimensionsError", err)
	}
	const want = "png declares 100000 x 100000 pixels (10,000 MP), more than the 100 MP the downscaler decodes"
	if err.Error() != want {
		t.Errorf("err = %q\nwant  %q", err, want)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("refusing the bomb allocated %d bytes, want under 1 MiB", alloc)
	}
	allocs := testing.AllocsPerRun(20, func() {
		_, _ = Downscale(context.Background(), bytes.NewReader(bomb), Options{})
	})
	if allocs > 50 {
		t.Errorf("%v allocations per refusal", allocs)
	}
}

func TestRefusedFromHeader(t *testing.T) {
	small := encodeJPEG(t, noisyYCbCr(16, 16, 8), 90)
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"jpeg 65000 x 65000", jpegWithSize(t, small, 65000, 65000),
			"jpeg declares 65000 x 65000 pixels (4,225 MP), more than the 100 MP the downscaler decodes"},
		{"png 12000 x 9000", pngWithIHDR(12000, 9000),
			"png declares 12000 x 9000 pixels (108 MP), more than the 100 MP the downscaler decodes"},
		{"jpeg with zero width", jpegWithSize(t, small, 0, 16), "jpeg declares 0 x 16 pixels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Downscale(context.Background(), bytes.NewReader(tt.data), Options{})
			var de *DimensionsError
			if !errors.As(err, &de) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %v, want *DimensionsError %q", err, tt.want)
			}
		})
	}
}

func TestLimitIsConfigurable(t *testing.T) {
	src := encodeJPEG(t, noisyYCbCr(100, 100, 8), 90)
	_, err := Downscale(context.Background(), bytes.NewReader(src), Options{MaxPixels: 9_999})
	var de *DimensionsError
	if !errors.As(err, &de) || de.MaxPixels != 9_999 {
		t.Fatalf("err = %v, want *DimensionsError with MaxPixels 9999", err)
	}
	if _, err := Downscale(context.Background(), bytes.NewReader(src), Options{MaxPixels: 10_000}); err != nil {
		t.Fatalf("exactly at the limit: %v", err)
	}
}

func TestUnsupportedFormats(t *testing.T) {
	pad := func(b []byte) []byte { return append(b, make([]byte, 64)...) }
	heic := pad([]byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"))
	tests := []struct {
		name, format, want string
		data               []byte
	}{
		{"heic", "heic", "HEIC over the limit cannot be downscaled: no pure-Go HEIC decoder", heic},
		{"avif", "avif", "AVIF over the limit cannot be downscaled: no pure-Go AVIF decoder",
			pad([]byte("\x00\x00\x00\x18ftypavif\x00\x00\x00\x00mif1avif"))},
		{"gif", "gif", "GIF over the limit cannot be downscaled: only JPEG, PNG and WebP are downscaled",
			pad([]byte("GIF89a\x10\x00\x10\x00"))},
		{"text", "", "unrecognised data cannot be downscaled: not a JPEG, PNG or WebP image",
			[]byte(strings.Repeat("just some text, not a photo. ", 10))},
		{"empty", "", "unrecognised data cannot be downscaled: not a JPEG, PNG or WebP image", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Downscale(context.Background(), bytes.NewReader(tt.data), Options{})
			var ue *UnsupportedFormatError
			if !errors.As(err, &ue) || ue.Format != tt.format || err.Error() != tt.want {
				t.Fatalf("err = %v, want *UnsupportedFormatError %q", err, tt.want)
			}
		})
	}
}

func TestTruncatedAndCorrupt(t *testing.T) {
	jpg := encodeJPEG(t, noisyYCbCr(64, 48, 8), 90)
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, noisyYCbCr(64, 48, 8)); err != nil {
		t.Fatal(err)
	}
	webp, err := os.ReadFile("testdata/blue-purple-pink.lossy.webp")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"jpeg half":        jpg[:len(jpg)/2],
		"jpeg header only": jpg[:200],
		"png half":         pngBuf.Bytes()[:pngBuf.Len()/2],
		"webp half":        webp[:len(webp)/2],
		"png header only":  pngBuf.Bytes()[:40],
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Downscale(context.Background(), bytes.NewReader(data), Options{})
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v, want *DecodeError", err)
			}
		})
	}
}

func TestCancelledContextStopsDecoding(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	src := encodeJPEG(t, noisyYCbCr(64, 48, 8), 90)
	_, err := Downscale(ctx, bytes.NewReader(src), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestFitWithin(t *testing.T) {
	tests := []struct{ w, h, max, ww, wh int }{
		{6000, 4000, 4096, 4096, 2731},
		{4000, 6000, 4096, 2731, 4096},
		{8660, 5773, 4096, 4096, 2731},
		{4096, 4096, 4096, 4096, 4096},
		{100, 50, 4096, 100, 50},
		{100000, 1, 4096, 4096, 1},
		{1, 100000, 4096, 1, 4096},
	}
	for _, tt := range tests {
		if w, h := fitWithin(tt.w, tt.h, tt.max); w != tt.ww || h != tt.wh {
			t.Errorf("fitWithin(%d, %d, %d) = %d x %d, want %d x %d", tt.w, tt.h, tt.max, w, h, tt.ww, tt.wh)
		}
	}
}

func TestMegapixels(t *testing.T) {
	for n, want := range map[int64]string{
		10_000_000_000: "10,000", 100_000_000: "100", 108_000_000: "108",
		4_225_000_000: "4,225", 2_500_000: "2.5", 1_000_000_000_000: "1,000,000",
	} {
		if got := megapixels(n); got != want {
			t.Errorf("megapixels(%d) = %q, want %q", n, got, want)
		}
	}
}
