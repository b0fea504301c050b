package exiftest

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"math"
)

// LargeJPEGBytes is the size the generator and the tests use for the
// over-the-limit photo: half a megabyte over the service's 10,000,000 bytes.
const LargeJPEGBytes = 10_500_000

// WriteLargeJPEG writes a decodable, deterministic JPEG of at least minBytes
// bytes to w, with tiff (may be nil) as its EXIF block, and returns how many
// bytes it wrote. The picture is a smooth gradient under high-entropy noise
// at quality 100, which is what makes a real photo large; the dimensions are
// chosen from minBytes, and COM segments after the EXIF block top the file up
// to exactly minBytes when the encoder falls short of it.
func WriteLargeJPEG(w io.Writer, minBytes int64, tiff []byte) (int64, error) {
	// Noise at quality 100 costs about 3 bytes a pixel with the standard
	// library encoder (4:2:0); aim a little under so that padding, not a
	// second encode, closes the gap.
	px := float64(minBytes) / 3.2
	width := max(int(math.Sqrt(px*4/3)), 16)
	height := max(int(px)/width, 16)
	var body bytes.Buffer
	body.Grow(int(minBytes))
	if err := jpeg.Encode(&body, noisyGradient(width, height), &jpeg.Options{Quality: 100}); err != nil {
		return 0, fmt.Errorf("exiftest: encoding large JPEG: %w", err)
	}
	head := []byte{0xFF, 0xD8}
	if tiff != nil {
		head = AppendAPP1(head, tiff)
	}
	if short := minBytes - int64(len(head)+body.Len()-2); short > 0 {
		head = padExactly(head, max(short, 4))
	}
	var n int64
	for _, part := range [][]byte{head, body.Bytes()[2:]} { // the encoder's own SOI is dropped
		k, err := w.Write(part)
		n += int64(k)
		if err != nil {
			return n, fmt.Errorf("exiftest: writing large JPEG: %w", err)
		}
	}
	return n, nil
}

// padExactly appends COM segments totalling exactly n bytes (n >= 4).
func padExactly(b []byte, n int64) []byte {
	for n > 0 {
		seg := min(n, 0xFFFF+2)
		if rest := n - seg; rest > 0 && rest < 4 {
			seg -= 4 // leave room for a last segment
		}
		if seg < 4 {
			seg = 4 // cannot happen for n >= 4; keeps the marker well-formed
		}
		b = append(b, 0xFF, 0xFE, byte((seg-2)>>8), byte(seg-2))
		for range seg - 4 {
			b = append(b, '.')
		}
		n -= seg
	}
	return b
}

func noisyGradient(w, h int) image.Image {
	img := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	x := uint64(0x2545F4914F6CDD1D)
	next := func() byte {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return byte(x >> 40)
	}
	for y := range h {
		row := img.Y[y*img.YStride:]
		for i := range w {
			row[i] = byte((i*160/w + y*60/h) + int(next()>>2))
		}
	}
	for i := range img.Cb {
		img.Cb[i] = 96 + next()>>1
		img.Cr[i] = 96 + next()>>1
	}
	return img
}
