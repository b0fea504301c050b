package downscale

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/jpeg"
	"testing"
)

// noise is a deterministic per-index hash (splitmix64's finaliser): the
// high-entropy content that makes a JPEG large from few pixels.
func noise(i uint64) uint64 {
	i += 0x9e3779b97f4a7c15
	i = (i ^ i>>30) * 0xbf58476d1ce4e5b9
	i = (i ^ i>>27) * 0x94d049bb133111eb
	return i ^ i>>31
}

// noisyYCbCr builds a w x h 4:2:0 image: a diagonal gradient with per-pixel
// noise of +-amp on luma and +-amp/2 on chroma. amp sets the entropy, and so
// the JPEG's size.
func noisyYCbCr(w, h, amp int) *image.YCbCr {
	img := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	clamp := func(v int) uint8 { return uint8(max(0, min(255, v))) }
	for y := 0; y < h; y++ {
		row := img.Y[y*img.YStride : y*img.YStride+w]
		for x := range row {
			n := noise(uint64(y)<<32 | uint64(x))
			row[x] = clamp(64 + (x+y)*128/(w+h) + int(n%uint64(2*amp+1)) - amp)
		}
	}
	camp := max(1, amp/2)
	for i := range img.Cb {
		n := noise(uint64(i) | 1<<62)
		img.Cb[i] = clamp(128 + int(n%uint64(2*camp+1)) - camp)
		img.Cr[i] = clamp(128 + int((n>>32)%uint64(2*camp+1)) - camp)
	}
	return img
}

func encodeJPEG(tb testing.TB, img image.Image, q int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: q}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// withEXIF inserts an APP1 "Exif" segment right after SOI, as a camera
// writes it, carrying a recognisable marker string.
func withEXIF(jpg []byte, marker string) []byte {
	payload := append([]byte("Exif\x00\x00MM\x00*\x00\x00\x00\x08"), marker...)
	seg := []byte{0xFF, 0xE1, 0, 0}
	binary.BigEndian.PutUint16(seg[2:], uint16(len(payload)+2))
	seg = append(seg, payload...)
	out := append([]byte{}, jpg[:2]...)
	out = append(out, seg...)
	return append(out, jpg[2:]...)
}

// pngWithIHDR is a PNG signature, an IHDR chunk declaring w x h 8-bit RGB
// (with a valid CRC, as png.DecodeConfig checks it) and IEND: enough for the
// header check, with no pixel data at all.
func pngWithIHDR(w, h uint32) []byte {
	b := []byte("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
		start := len(b)
		b = append(b, typ...)
		b = append(b, data...)
		b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
	}
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 2, 0, 0, 0) // depth 8, RGB, deflate, filter 0, no interlace
	chunk("IHDR", ihdr)
	chunk("IEND", nil)
	return b
}

// jpegWithSize returns a copy of a valid JPEG whose SOF0 declares w x h.
func jpegWithSize(tb testing.TB, jpg []byte, w, h uint16) []byte {
	tb.Helper()
	out := append([]byte{}, jpg...)
	for i := 2; i+9 < len(out); {
		if out[i] != 0xFF {
			tb.Fatalf("no marker at %d", i)
		}
		m := out[i+1]
		if m == 0xC0 {
			binary.BigEndian.PutUint16(out[i+5:], h)
			binary.BigEndian.PutUint16(out[i+7:], w)
			return out
		}
		i += 2 + int(binary.BigEndian.Uint16(out[i+2:]))
	}
	tb.Fatal("no SOF0")
	return nil
}

// appSegments lists the APPn markers (0xE0-0xEF) of a JPEG before its first
// scan: where EXIF (APP1), ICC (APP2), XMP and all other metadata live.
func appSegments(tb testing.TB, jpg []byte) []byte {
	tb.Helper()
	if len(jpg) < 4 || jpg[0] != 0xFF || jpg[1] != 0xD8 {
		tb.Fatal("not a JPEG")
	}
	var apps []byte
	for i := 2; i+4 <= len(jpg); {
		if jpg[i] != 0xFF {
			tb.Fatalf("no marker at offset %d", i)
		}
		m := jpg[i+1]
		if m == 0xDA { // SOS: entropy-coded data follows
			return apps
		}
		if m >= 0xE0 && m <= 0xEF {
			apps = append(apps, m)
		}
		i += 2 + int(binary.BigEndian.Uint16(jpg[i+2:]))
	}
	tb.Fatal("no SOS")
	return nil
}
