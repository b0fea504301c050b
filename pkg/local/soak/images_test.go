package soak

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"sync"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
)

// The images are made at test time: nothing binary is committed, and every
// upload's bytes are unique so the simulator's call log (sha256 of the
// file) tells which upload each charge was for.

var (
	baseJPEGOnce sync.Once
	baseJPEG     []byte
)

// uniqueJPEG is a small valid JPEG followed by a tag after its end marker
// (decoders ignore trailing bytes): distinct bytes for every tag.
func uniqueJPEG(t testing.TB, tag string) []byte {
	t.Helper()
	baseJPEGOnce.Do(func() {
		img := image.NewRGBA(image.Rect(0, 0, 32, 24))
		for y := range 24 {
			for x := range 32 {
				img.Set(x, y, color.RGBA{uint8(x * 8), uint8(y * 10), 128, 255})
			}
		}
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}); err != nil {
			panic(err)
		}
		baseJPEG = buf.Bytes()
	})
	b := make([]byte, 0, len(baseJPEG)+len(tag)+8)
	b = append(b, baseJPEG...)
	return append(b, "\x00soak:"+tag...)
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

// heicHeader is the start of an HEIC file: an ftyp box with the heic brand,
// then filler. The simulator, like the sniffer, reads the magic bytes.
func heicHeader() []byte {
	b := make([]byte, 0, 256)
	b = binary.BigEndian.AppendUint32(b, 24)
	b = append(b, "ftypheic"...)
	b = binary.BigEndian.AppendUint32(b, 0)
	b = append(b, "mif1heic"...)
	return append(b, bytes.Repeat([]byte{0}, 232)...)
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
// unique by a tag after its end marker.
func exifGPSJPEG(tag string, i int) []byte {
	p := exiftest.Harbour()
	g := *p.GPS
	g.Lon += float64(i%1000) / 100
	p.GPS = &g
	return append(exiftest.JPEG(p.Bytes(), nil, 0), "\x00soak:"+tag...)
}
