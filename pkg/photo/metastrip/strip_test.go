package metastrip

import (
	"bytes"
	"errors"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"golang.org/x/image/webp"

	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif"
)

// strip runs a Reader over in, in small reads so the streaming path (ops
// split across calls) is what is tested.
func strip(t testing.TB, in []byte, optFns ...func(*Options)) ([]byte, Report) {
	t.Helper()
	r, err := New(bytes.NewReader(in), optFns...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	out, err := io.ReadAll(iotest.OneByteReader(r))
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	rep := r.Report()
	if !rep.Complete {
		t.Errorf("report not complete after EOF: %+v", rep)
	}
	if len(out) != len(in) {
		t.Fatalf("output %d bytes, input %d: the upload's length must not change", len(out), len(in))
	}
	return out, rep
}

// ownerFacts are byte strings of the owner's metadata that must not survive.
var ownerFacts = []string{ownerName, ownerSerial, "Geolocate", "Test Phone 15", "2024:06:01", "Image_UTC_Data", "c2pa", "XML:com.adobe.xmp", "http://ns.adobe.com/xap", "Photoshop 3.0"}

func assertNoOwnerFacts(t *testing.T, out []byte) {
	t.Helper()
	for _, s := range ownerFacts {
		if bytes.Contains(out, []byte(s)) {
			t.Errorf("stripped output still contains %q", s)
		}
	}
	if m, err := photoexif.Parse(out); err == nil && (m.GPS != nil || m.CameraMake != "" || m.Captured != nil) {
		t.Errorf("EXIF still readable in the output: %+v", m)
	}
}

func samePixels(t *testing.T, a, b image.Image) {
	t.Helper()
	if a.Bounds() != b.Bounds() {
		t.Fatalf("bounds %v and %v", a.Bounds(), b.Bounds())
	}
	diff := 0
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			r1, g1, b1, a1 := a.At(x, y).RGBA()
			r2, g2, b2, a2 := b.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
				diff++
			}
		}
	}
	if diff != 0 {
		t.Errorf("%d pixels differ between the original and the stripped image", diff)
	}
}

func kinds(rep Report) map[string]int64 { return rep.ByKind() }

func TestJPEGKeepsThePixelsAndLosesTheOwner(t *testing.T) {
	in := phoneJPEG(t, gradient(64, 48), 6)
	out, rep := strip(t, in)
	assertNoOwnerFacts(t, out)
	a, err := jpeg.Decode(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	b, err := jpeg.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("stripped JPEG does not decode: %v", err)
	}
	samePixels(t, a, b)
	if rep.Orientation != 6 || orientation(out[bytes.Index(out, []byte("Exif\x00\x00"))+6:]) != 6 {
		t.Errorf("orientation %d, want 6 kept in a minimal EXIF block", rep.Orientation)
	}
	for _, k := range []string{KindEXIF, KindXMP, KindIPTC, KindComment, KindOther, KindTrailer} {
		if kinds(rep)[k] == 0 {
			t.Errorf("report %v has no %s", rep, k)
		}
	}
	for _, kept := range []string{"JFIF\x00", "ICC_PROFILE\x00"} {
		if !bytes.Contains(out, []byte(kept)) {
			t.Errorf("%q was removed: it changes how the picture looks", kept)
		}
	}
	if rep.Problem != nil || rep.Truncated {
		t.Errorf("problem %v truncated %v on a valid file", rep.Problem, rep.Truncated)
	}
}

func TestJPEGWithoutOrientationGetsUpright(t *testing.T) {
	out, rep := strip(t, phoneJPEG(t, gradient(16, 16), 0))
	if rep.Orientation != 1 {
		t.Errorf("orientation %d, want 1 (upright) for a block without the tag", rep.Orientation)
	}
	assertNoOwnerFacts(t, out)
}

func TestJPEGProgressiveScansAreFollowed(t *testing.T) {
	// A COM segment between two scans (where progressive JPEGs keep their
	// tables) is found as well as one in the header.
	in := phoneJPEG(t, gradient(32, 32), 1)
	eoi := bytes.LastIndex(in[:bytes.Index(in, []byte("SEFT"))], []byte{0xFF, 0xD9})
	first := bytes.Index(in, []byte{0xFF, 0xD9})
	withCOM := cat(in[:first], segment(0xFE, []byte("between scans "+ownerName)), in[first:])
	out, _ := strip(t, withCOM)
	if bytes.Contains(out, []byte("between scans")) {
		t.Error("a comment after the scan was not blanked")
	}
	if eoi < 0 {
		t.Fatal("no EOI in the sample")
	}
}

func TestPNGKeepsThePixelsAndLosesTheOwner(t *testing.T) {
	in := phonePNG(t, gradient(40, 30), 8)
	out, rep := strip(t, in)
	assertNoOwnerFacts(t, out)
	a, err := png.Decode(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	b, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("stripped PNG does not decode (chunk CRCs?): %v", err)
	}
	samePixels(t, a, b)
	if !bytes.Contains(out, []byte("gAMA")) {
		t.Error("gAMA was removed: it changes how the picture looks")
	}
	if rep.Orientation != 8 {
		t.Errorf("orientation %d, want 8", rep.Orientation)
	}
	for _, k := range []string{KindEXIF, KindText, KindTime, KindOther, KindTrailer} {
		if kinds(rep)[k] == 0 {
			t.Errorf("report %v has no %s", rep, k)
		}
	}
}

func TestWebPKeepsThePixelsAndLosesTheOwner(t *testing.T) {
	for _, tc := range []struct {
		file string
		w, h int
	}{{"blue-purple-pink.lossy.webp", 0, 0}, {"gopher-doc.8bpp.lossless.webp", 0, 0}} {
		t.Run(tc.file, func(t *testing.T) {
			simple := webpSample(t, tc.file)
			cfg, err := webp.DecodeConfig(bytes.NewReader(simple))
			if err != nil {
				t.Fatal(err)
			}
			in := phoneWebP(t, simple, cfg.Width, cfg.Height, 3)
			want, err := webp.Decode(bytes.NewReader(in))
			if err != nil {
				t.Fatalf("sample does not decode: %v", err)
			}
			out, rep := strip(t, in)
			assertNoOwnerFacts(t, out)
			got, err := webp.Decode(bytes.NewReader(out))
			if err != nil {
				t.Fatalf("stripped WebP does not decode: %v", err)
			}
			samePixels(t, want, got)
			if flags := out[20]; flags&webpXMPFlag != 0 || flags&0x08 == 0 || flags&0x20 == 0 {
				t.Errorf("VP8X flags %08b: want XMP cleared, EXIF (minimal block) and ICC kept", flags)
			}
			if string(out[4:8]) != string(in[4:8]) {
				t.Error("RIFF size changed")
			}
			if rep.Orientation != 3 || kinds(rep)[KindXMP] == 0 || kinds(rep)[KindOther] == 0 || kinds(rep)[KindTrailer] == 0 {
				t.Errorf("report %+v", rep)
			}
		})
	}
}

func TestHEIFItemsAreBlankedInPlace(t *testing.T) {
	for _, name := range []string{"exif-gps-phone.heic", "exif-gps-harbour.heic"} {
		t.Run(name, func(t *testing.T) {
			in := sample(t, name)
			if m, err := photoexif.Parse(in); err != nil || m.GPS == nil {
				t.Fatalf("sample has no EXIF position: %v", err)
			}
			out, rep := strip(t, in)
			assertNoOwnerFacts(t, out)
			if kinds(rep)[KindEXIF] == 0 {
				t.Errorf("report %v has no exif", rep)
			}
			// Only the metadata items' bytes changed: the boxes and the image
			// data are where they were.
			if m, err := photoexif.Parse(out); err != nil || m.GPS != nil {
				t.Errorf("stripped Exif item: %+v %v, want a readable block with no position", m, err)
			}
		})
	}
}

func TestBMPPassesAndGIFAndTIFFAreRefused(t *testing.T) {
	bmp := make([]byte, 64)
	copy(bmp, "BM")
	bmp[14] = 40
	out, rep := strip(t, bmp)
	if !bytes.Equal(out, bmp) || len(rep.Removed) != 0 {
		t.Errorf("BMP changed: %v", rep)
	}
	for _, in := range [][]byte{append([]byte("GIF89a"), make([]byte, 64)...), append([]byte("II*\x00"), make([]byte, 64)...), []byte(strings.Repeat("text ", 20))} {
		if _, err := New(bytes.NewReader(in)); !errors.Is(err, ErrUnsupported) {
			t.Errorf("New(%q...) = %v, want ErrUnsupported", in[:6], err)
		}
	}
}

func TestStrippingTwiceChangesNothing(t *testing.T) {
	simple := webpSample(t, "blue-purple-pink.lossy.webp")
	cfg, _ := webp.DecodeConfig(bytes.NewReader(simple))
	for name, in := range map[string][]byte{
		"jpeg": phoneJPEG(t, gradient(24, 24), 5),
		"png":  phonePNG(t, gradient(24, 24), 2),
		"webp": phoneWebP(t, simple, cfg.Width, cfg.Height, 7),
		"heic": sample(t, "exif-gps-phone.heic"),
	} {
		once, _ := strip(t, in)
		twice, rep := strip(t, once)
		if !bytes.Equal(once, twice) {
			t.Errorf("%s: a second pass changed the output", name)
		}
		if name != "heic" && kinds(rep)[KindEXIF] != 0 {
			// HEIF reports the items again: they are found by iinf, not by content.
			t.Errorf("%s: second pass reports %v", name, rep)
		}
	}
}

func TestBrokenStructureIsZeroedToTheEnd(t *testing.T) {
	in := phoneJPEG(t, gradient(16, 16), 1)
	bad := cat(in[:2], []byte{0xFF, 0xE5, 0x00, 0x01}, in[2:]) // a length below 2
	out, rep := strip(t, bad)
	if rep.Problem == nil || rep.Problem.Offset != 2 {
		t.Fatalf("problem %v, want one at byte 2", rep.Problem)
	}
	if !bytes.Equal(out[2:], make([]byte, len(out)-2)) {
		t.Error("bytes after the broken segment were not zeroed")
	}
	if _, err := Check(bad, int64(len(bad))); err == nil {
		t.Error("Check accepted a file whose structure breaks")
	}
}

func TestTruncatedFilesKeepTheirLength(t *testing.T) {
	in := phoneJPEG(t, gradient(16, 16), 1)
	exif := bytes.Index(in, []byte("Exif\x00\x00"))
	for _, n := range []int{exif + 12, exif + 40, len(in) / 2} {
		out, rep := strip(t, in[:n])
		if !rep.Truncated && n < len(in)/2 {
			t.Errorf("%d bytes: not reported truncated", n)
		}
		if bytes.Contains(out, []byte("Geolocate")) {
			t.Errorf("%d bytes: a cut EXIF block leaked", n)
		}
	}
}

func TestCheckSeesTheHEIFHeaderWithinTheHead(t *testing.T) {
	in := sample(t, "exif-gps-phone.heic")
	if _, err := Check(in, int64(len(in))); err != nil {
		t.Fatalf("Check on the whole file: %v", err)
	}
	// A head that ends inside meta, of a longer file: the streaming Reader
	// would have to hold more than the head, so the file is refused.
	var p *Problem
	if _, err := Check(in[:200], int64(len(in))); !errors.As(err, &p) {
		t.Errorf("Check on a head cut inside meta = %v, want a *Problem", err)
	}
	// A JPEG head cut anywhere is fine: what follows streams.
	j := phoneJPEG(t, gradient(16, 16), 1)
	if _, err := Check(j[:300], int64(len(j))); err != nil {
		t.Errorf("Check on a JPEG head: %v", err)
	}
}

func TestMetaAfterMediaDataIsRefused(t *testing.T) {
	in := sample(t, "exif-gps-phone.heic")
	ftypEnd := int(in[3]) // the ftyp box is small: its size is its last byte
	boxes, err := boxesIn(in, 0, len(in))
	if err != nil {
		t.Fatal(err)
	}
	var meta, mdat []byte
	for _, b := range boxes {
		switch b.typ {
		case "meta":
			meta = in[b.start:b.end]
		case "mdat":
			mdat = in[b.start:b.end]
		}
	}
	moved := cat(in[:ftypEnd], mdat, meta)
	_, err = Check(moved, int64(len(moved)), func(o *Options) { o.MaxHeaderBytes = len(in[:ftypEnd]) + 64 })
	var p *Problem
	if !errors.As(err, &p) {
		t.Errorf("meta after mdat = %v, want a *Problem", err)
	}
}
