package downscale

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"io"
	"os"
	"reflect"
	"testing"

	"golang.org/x/image/webp"

	"github.com/geolocate-aws/geolocate/pkg/photo/downscale/downscaletest"
)

// FuzzGuardsTransparent: a guard that does not refuse a file changes
// nothing of its decode: image/jpeg through scanGuard and x/image/webp
// through webpGuard give the same image, or fail alike, as without them
// (the guard splits reads at scans and must not desynchronise from the
// decoder's view of the segments).
func FuzzGuardsTransparent(f *testing.F) {
	f.Add(downscaletest.ScanBomb(64, 48, 8))
	f.Add(downscaletest.ScanBomb(64, 48, 30))
	for _, name := range []string{"../../../testdata/images/gradient-64x48.jpg", "../../../testdata/images/exif-gps-phone.jpg",
		"testdata/blue-purple-pink.lossy.webp", "testdata/gopher-doc.8bpp.lossless.webp"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var (
			decode func(io.Reader) (image.Image, error)
			config func(io.Reader) (image.Config, error)
			guard  func(io.Reader) (io.Reader, func() error)
		)
		switch {
		case bytes.HasPrefix(data, []byte{0xFF, 0xD8}):
			decode, config = jpeg.Decode, jpeg.DecodeConfig
			guard = func(r io.Reader) (io.Reader, func() error) {
				g := newScanGuard(context.Background(), r)
				return g, func() error { return g.err }
			}
		case len(data) > 12 && string(data[8:12]) == "WEBP":
			decode, config = webp.Decode, webp.DecodeConfig
			guard = func(r io.Reader) (io.Reader, func() error) {
				g := newWebPGuard(context.Background(), r)
				return g, func() error { return g.err }
			}
		default:
			return
		}
		// Keep each run cheap: the decoders allocate what headers declare.
		if c, err := config(bytes.NewReader(data)); err != nil || c.Width*c.Height > 1<<20 {
			return
		}
		want, wantErr := decode(bytes.NewReader(data))
		r, refused := guard(bytes.NewReader(data))
		got, gotErr := decode(r)
		if refused() != nil {
			return
		}
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("without the guard: %v; with it: %v", wantErr, gotErr)
		}
		if wantErr == nil && !reflect.DeepEqual(want, got) {
			t.Fatal("the guard changed the decoded image")
		}
	})
}
