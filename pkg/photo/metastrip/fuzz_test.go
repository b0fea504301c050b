package metastrip

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzStrip feeds arbitrary bytes to the Reader: it must never panic, never
// fail on the image's structure, and its output is exactly as long as the
// input (so never longer than the input plus any constant). On a file it
// strips as a well-formed file (no problem, not truncated, no junk between
// JPEG segments), a second pass changes nothing.
func FuzzStrip(f *testing.F) {
	f.Add(phoneJPEG(f, gradient(16, 16), 6))
	f.Add(phonePNG(f, gradient(8, 8), 3))
	simple := webpSample(f, "blue-purple-pink.lossy.webp")
	f.Add(phoneWebP(f, simple, 64, 64, 2))
	f.Add(sample(f, "exif-gps-phone.heic"))
	f.Add(sample(f, "exif-gps-harbour.heic"))
	f.Add(sample(f, "exif-gps-phone.jpg"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := New(bytes.NewReader(in), func(o *Options) { o.MaxHeaderBytes = 64 << 10 })
		if errors.Is(err, ErrUnsupported) {
			return
		}
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		out, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if len(out) != len(in) {
			t.Fatalf("output %d bytes from %d", len(out), len(in))
		}
		rep := r.Report()
		if rep.Problem != nil || rep.Truncated || rep.ByKind()[KindJunk] != 0 {
			return
		}
		again, err := New(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("the stripped file is no longer recognised: %v", err)
		}
		twice, err := io.ReadAll(again)
		if err != nil || !bytes.Equal(out, twice) {
			t.Fatalf("a second pass changed the output (err %v)", err)
		}
	})
}
