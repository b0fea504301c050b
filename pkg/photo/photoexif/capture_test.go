package photoexif

import (
	"bytes"
	"errors"
	"image/jpeg"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
)

// stream passes file through a Capture the way the predictor would, with
// io.TeeReader on the upload body, and returns what the Capture saw.
func stream(t testing.TB, file io.Reader, limit int) *Capture {
	t.Helper()
	c := NewCapture(limit)
	if _, err := io.Copy(io.Discard, io.TeeReader(file, c)); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCaptureKeepsOnlyTheHead(t *testing.T) {
	c := NewCapture(10)
	for _, s := range []string{"abc", "defghij", "klmnop"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if string(c.Head()) != "abcdefghij" || c.Total() != 16 {
		t.Fatalf("head %q total %d", c.Head(), c.Total())
	}
	if got := cap(NewCapture(0).Head()); got != DefaultCaptureLimit {
		t.Fatalf("default limit %d, want %d", got, DefaultCaptureLimit)
	}
}

func TestCaptureWriteDoesNotAllocate(t *testing.T) {
	c := NewCapture(0)
	chunk := make([]byte, 32<<10)
	if n := testing.AllocsPerRun(400, func() { c.Write(chunk) }); n != 0 {
		t.Fatalf("Write allocates %v times per call", n)
	}
	if c.Total() < 10_000_000 || len(c.Head()) != DefaultCaptureLimit {
		t.Fatalf("total %d head %d", c.Total(), len(c.Head()))
	}
}

// TestEXIFBeyondHead: a block that starts after the captured head is not
// read, and the reason says so and where to continue; with a head large
// enough, the same file yields its position.
func TestEXIFBeyondHead(t *testing.T) {
	tiff := exiftest.Harbour().Bytes()
	const pad = 300 << 10
	for name, file := range map[string][]byte{
		"jpeg": exiftest.JPEG(tiff, nil, pad),
		"heic": exiftest.HEIC(tiff, 80, 60, pad),
		"webp": exiftest.WebP(tiff, 80, 60, pad),
	} {
		t.Run(name, func(t *testing.T) {
			m, err := stream(t, bytes.NewReader(file), 0).Meta()
			var p *Problem
			if !errors.As(err, &p) || p.Reason != ReasonBeyondHead {
				t.Fatalf("error %v, want exif_beyond_head", err)
			}
			if p.Offset < DefaultCaptureLimit || p.Offset > int64(len(file)) {
				t.Errorf("offset %d, want within (%d, %d]", p.Offset, DefaultCaptureLimit, len(file))
			}
			if m.GPS != nil || m.GPSProblem != p {
				t.Errorf("GPS %v problem %v", m.GPS, m.GPSProblem)
			}
			if !bytes.Contains([]byte(p.Detail), []byte("exif beyond first 262144 bytes: not read")) {
				t.Errorf("detail %q", p.Detail)
			}
			m, err = stream(t, bytes.NewReader(file), 512<<10).Meta()
			if err != nil || m.GPS == nil {
				t.Fatalf("with a 512 KiB head: %v, %v", err, m.GPSProblem)
			}
		})
	}
}

func TestParseHeadOfUnknownSize(t *testing.T) {
	file := exiftest.JPEG(exiftest.Harbour().Bytes(), nil, 0)
	// A head cut inside the block of a file of unknown size: the rest may
	// follow, so it is beyond the head, not truncated.
	_, err := ParseHead(file[:300], -1)
	var p *Problem
	if !errors.As(err, &p) || p.Reason != ReasonBeyondHead {
		t.Fatalf("error %v, want exif_beyond_head", err)
	}
	if _, err := ParseHead(file, -1); err != nil {
		t.Fatalf("whole file of unknown size: %v", err)
	}
}

// TestLargeJPEG streams a photo over the service limit through a Capture:
// the file is built in t.TempDir, never committed.
func TestLargeJPEG(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 10.5 MB file")
	}
	path := filepath.Join(t.TempDir(), "large.jpg")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := exiftest.WriteLargeJPEG(f, exiftest.LargeJPEGBytes, exiftest.Harbour().Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if n != exiftest.LargeJPEGBytes {
		t.Fatalf("wrote %d bytes, want %d", n, exiftest.LargeJPEGBytes)
	}
	f, err = os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := stream(t, f, 0)
	if c.Total() != n {
		t.Fatalf("streamed %d bytes, want %d", c.Total(), n)
	}
	m, err := c.Meta()
	if err != nil || m.GPS == nil {
		t.Fatalf("Meta: %v, %v", err, m.GPSProblem)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	cfg, err := jpeg.DecodeConfig(f)
	if err != nil {
		t.Fatalf("not a decodable JPEG: %v", err)
	}
	if cfg.Width*cfg.Height < 2_000_000 {
		t.Errorf("%dx%d: too small to be a real large photo", cfg.Width, cfg.Height)
	}
}

// zeros is an endless reader of a JPEG-looking stream for the benchmark.
type zeros struct{ left int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.left <= 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), z.left))
	clear(p[:n])
	z.left -= int64(n)
	return n, nil
}

// BenchmarkCapture shows the Capture's memory is flat in the stream's size:
// B/op is the 256 KiB buffer plus io.Copy's 32 KiB, for 1 MB as for 50 MB.
func BenchmarkCapture(b *testing.B) {
	head := exiftest.JPEG(exiftest.Harbour().Bytes(), nil, 0)
	for _, size := range []int64{1_000_000, 10_000_000, 50_000_000} {
		b.Run(byteSize(size), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(size)
			for b.Loop() {
				r := io.MultiReader(bytes.NewReader(head), &zeros{left: size - int64(len(head))})
				c := stream(b, r, 0)
				if m, err := c.Meta(); err != nil || m.GPS == nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func byteSize(n int64) string {
	return map[int64]string{1_000_000: "1MB", 10_000_000: "10MB", 50_000_000: "50MB"}[n]
}
