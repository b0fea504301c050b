package predictor

import (
	"bytes"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
)

// BenchmarkContentDigest measures what identifying a photo costs on top of
// its upload, for a JPEG of the service's maximum size with an EXIF block:
// SHA-256 over the bytes the service would receive, through the stripping
// reader (strip, the default) or as stored (keep). MB/s is the time per
// megabyte; the peak heap shows the digest holds no copy of the photo.
func BenchmarkContentDigest(b *testing.B) {
	var img bytes.Buffer
	if _, err := exiftest.WriteLargeJPEG(&img, 10_000_000, exiftest.Harbour().Bytes()); err != nil {
		b.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		strip bool
	}{{"strip", true}, {"keep", false}} {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(img.Len()))
			b.ReportAllocs()
			var peak uint64
			for b.Loop() {
				peak = max(peak, peakHeapGrowth(func() {
					if _, n, err := streamDigest(bytes.NewReader(img.Bytes()), tt.strip); err != nil || n != int64(img.Len()) {
						b.Fatalf("digest: %d bytes, %v", n, err)
					}
				}))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}
