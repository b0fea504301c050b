package downscale

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/photo/downscale/downscaletest"
)

// FuzzDownscale feeds arbitrary bytes to Downscale: it must never panic,
// every failure must be one of the package's typed errors (which carry the
// reason the pipeline records), and every success must be a decodable JPEG
// within MaxBytes and MaxSide with no metadata.
func FuzzDownscale(f *testing.F) {
	jpg := encodeJPEG(f, noisyYCbCr(40, 30, 8), 90)
	var pngBuf bytes.Buffer
	if err := png.Encode(&pngBuf, image.NewNRGBA(image.Rect(0, 0, 20, 90))); err != nil {
		f.Fatal(err)
	}
	seeds := [][]byte{jpg, jpg[:len(jpg)/2], withEXIF(jpg, "GPS"), pngBuf.Bytes(), pngBuf.Bytes()[:50],
		pngWithIHDR(100_000, 100_000), pngWithIHDR(0, 5), jpegWithSize(f, jpg, 65000, 65000),
		[]byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + string(make([]byte, 64)))}
	for _, name := range []string{"blue-purple-pink.lossy.webp", "gopher-doc.8bpp.lossless.webp"} {
		webp, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, webp, webp[:len(webp)/3])
	}
	seeds = append(seeds, downscaletest.ScanBomb(64, 48, 20))
	for _, s := range seeds {
		f.Add(s)
	}

	// Small limits keep each run fast: a mutated header may declare up to
	// 4 MP, which the decoders allocate before finding the data truncated.
	o := Options{MaxSide: 32, MaxPixels: 1 << 22, MaxBytes: 50_000}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Downscale(context.Background(), bytes.NewReader(data), o)
		if err != nil {
			var (
				ue *UnsupportedFormatError
				de *DimensionsError
				ce *DecodeError
				fe *FitError
				co *CostError
			)
			if !errors.As(err, &ue) && !errors.As(err, &de) && !errors.As(err, &ce) && !errors.As(err, &fe) && !errors.As(err, &co) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			if err.Error() == "" {
				t.Fatal("error with no reason")
			}
			return
		}
		checkOutput(t, res, o)
	})
}
