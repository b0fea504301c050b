package soak

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash/fnv"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/photo/metastrip"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
)

// The images are made at test time: nothing binary is committed, and every
// upload's bytes are unique, also once the predictor has stripped their
// metadata (uploadMetadata=strip, the default), so the simulator's call log
// (sha256 of the file received, strippedSHA) tells which upload each charge
// was for. The tag is drawn into the pixels: bytes after the end marker or
// in metadata are blanked on the way.

// tagImage is a small gradient with tag's FNV hash drawn into its first
// row of 8x8 blocks, one block per hash byte, so distinct tags give
// distinct entropy-coded data.
func tagImage(tag string) image.Image {
	h := fnv.New64a()
	h.Write([]byte(tag))
	sum := h.Sum64()
	img := image.NewRGBA(image.Rect(0, 0, 64, 24))
	for y := range 24 {
		for x := range 64 {
			c := color.RGBA{uint8(x * 4), uint8(y * 10), 128, 255}
			if y < 8 {
				c.B = uint8(sum >> (8 * (x / 8)))
			}
			img.Set(x, y, c)
		}
	}
	return img
}

// uniqueJPEG is a small valid JPEG whose pixels are unique to tag.
func uniqueJPEG(t testing.TB, tag string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, tagImage(tag), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// strippedSHA is the hex sha256 of what the service receives for body:
// body with its metadata stripped, as the predictor streams it.
func strippedSHA(t testing.TB, body []byte) string {
	t.Helper()
	r, err := metastrip.New(bytes.NewReader(body), func(o *metastrip.Options) { o.MaxHeaderBytes = photoexif.DefaultCaptureLimit })
	if err != nil {
		t.Fatalf("strip: %v", err)
	}
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func smallPNG(t testing.TB) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 8, 8))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 4)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// uniqueHEIC is a HEIF container (brand heic) with an Exif item, as
// exiftest builds it, whose image item's data starts with tag's SHA-256:
// the bytes sent differ for every tag. Not a second mdat box: stripping
// zeroes every mdat byte no kept item covers, so a tag there is sent as
// zeros and two tags of one length would be the same photo to the service
// (and to content reuse). The simulator, like the sniffer, reads the magic
// bytes.
func uniqueHEIC(tag string) []byte {
	b := exiftest.HEIC(exiftest.Harbour().Bytes(), 64, 48, 0)
	mdat := bytes.Index(b, []byte("mdat"))
	if mdat < 0 {
		panic("exiftest.HEIC wrote no mdat box")
	}
	// exiftest.HEIC's image item is the first 64 bytes of its mdat.
	sum := sha256.Sum256([]byte(tag))
	copy(b[mdat+4:], sum[:])
	return b
}

// webpHeader is the start of a lossy WebP file.
func webpHeader() []byte {
	b := make([]byte, 0, 256)
	b = append(b, "RIFF"...)
	b = binary.LittleEndian.AppendUint32(b, 248)
	b = append(b, "WEBPVP8 "...)
	b = binary.LittleEndian.AppendUint32(b, 236)
	return append(b, bytes.Repeat([]byte{0x2a}, 236)...)
}

// textFile is plain text, whatever its name says.
func textFile() []byte {
	return bytes.Repeat([]byte("this is a text file, not a photograph\n"), 8)
}

// sized pads head with zero bytes to exactly n bytes.
func sized(head []byte, n int) []byte {
	b := make([]byte, n)
	copy(b, head)
	return b
}

// exifGPSJPEG is a small JPEG carrying a real EXIF block with a valid GPS
// position (the harbour photo moved by i hundredths of a degree east), made
// unique by its pixels.
func exifGPSJPEG(tag string, i int) []byte {
	p := exiftest.Harbour()
	g := *p.GPS
	g.Lon += float64(i%1000) / 100
	p.GPS = &g
	return exiftest.JPEG(p.Bytes(), tagImage(tag), 0)
}

// TestSoakImagesAreDistinct: the soak's accounting holds only if no two of
// its uploads send the service the same bytes (planUploads fails the soak
// otherwise); at 10,000 uploads every HEIC among them is sent as its own
// photo, which a tag the stripper zeroes was not (uploads 1009, 1059, ...
// were one photo, and one charge looked like 18 double charges).
func TestSoakImagesAreDistinct(t *testing.T) {
	ups := planUploads(t, 10000)
	heics := 0
	for _, u := range ups {
		if len(u.body) > 12 && bytes.Equal(u.body[4:12], []byte("ftypheic")) {
			heics++
		}
	}
	if heics < 100 {
		t.Fatalf("%d HEIC uploads in 10,000: the plan changed, this test proves nothing", heics)
	}
}
