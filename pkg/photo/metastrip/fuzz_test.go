package metastrip

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/photo/metastrip/metastriptest"
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

// FuzzStripExiftool is the differential check against an independent
// reader: it mutates the committed phone photos and the hostile files
// (hostileFiles, the zlib bombs left out for speed), strips each, and
// whatever the Reader made of it, refused or not, asserts that exiftool
// (-a -ee -G1:4 -b, one -stay_open process per fuzz worker) finds in the
// output no position, camera, serial, time, name, thumbnail or preview.
// make fuzz runs it 30 s in CI, where exiftool is installed; elsewhere
// without exiftool it is skipped.
func FuzzStripExiftool(f *testing.F) {
	et := metastriptest.StartExiftool(f)
	f.Add(phoneJPEG(f, gradient(16, 16), 6))
	f.Add(phonePNG(f, gradient(8, 8), 3))
	f.Add(phoneWebP(f, webpSample(f, "blue-purple-pink.lossy.webp"), 64, 64, 2))
	for _, name := range []string{"exif-gps-phone.heic", "exif-gps-harbour.heic", "exif-gps-phone.jpg", "exif-gps-harbour.jpg"} {
		f.Add(sample(f, name))
	}
	for _, h := range hostileFiles(f, false) {
		f.Add(h.in)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := New(bytes.NewReader(in), func(o *Options) { o.MaxHeaderBytes = 64 << 10 })
		if err != nil {
			return // not an image it strips: nothing is sent
		}
		out, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if found := et.OwnerMetadata(t, out); len(found) != 0 {
			t.Fatalf("exiftool finds %v in the stripped output (report %v)", found, r.Report())
		}
	})
}
