package metastrip

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
)

// BenchmarkStripJPEG streams a 10 MB phone-like JPEG (EXIF, XMP, a scan of
// random entropy-coded data with its stuffed bytes) through a Reader: the
// cost of stripping per upload, in time and in what it allocates (a few
// buffers, whatever the size).
func BenchmarkStripJPEG(b *testing.B) {
	head := phoneJPEG(b, gradient(16, 16), 6)
	sos := bytes.Index(head, []byte{0xFF, 0xDA})
	scan := make([]byte, 10<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range scan {
		scan[i] = byte(r.Uint32())
		if i > 0 && scan[i-1] == 0xFF {
			scan[i] = 0
		}
	}
	in := cat(head[:sos], segment(0xDA, []byte{1, 1, 0, 0, 63, 0}), scan, []byte{0, 0xFF, 0xD9})
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		s, err := New(bytes.NewReader(in))
		if err != nil {
			b.Fatal(err)
		}
		if n, err := io.Copy(io.Discard, s); err != nil || n != int64(len(in)) {
			b.Fatalf("copied %d of %d: %v", n, len(in), err)
		}
	}
}
