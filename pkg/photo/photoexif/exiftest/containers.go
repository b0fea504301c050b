package exiftest

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
)

// Gradient is a small deterministic picture for the containers to carry.
func Gradient(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), 120, 255})
		}
	}
	return img
}

// JPEG encodes img and puts the EXIF block (a TIFF, as Photo.Bytes returns)
// in an APP1 segment right after SOI, where cameras write it. A nil img is a
// 16x16 gradient. pad bytes of COM segments go before the APP1 segment, to
// place the EXIF block beyond a reader's head; 0 for none.
func JPEG(tiff []byte, img image.Image, pad int) []byte {
	if img == nil {
		img = Gradient(16, 16)
	}
	var body bytes.Buffer
	if err := jpeg.Encode(&body, img, &jpeg.Options{Quality: 85}); err != nil {
		panic(err) // encoding to memory only fails on a programming error
	}
	out := []byte{0xFF, 0xD8}
	out = appendPadding(out, pad)
	if tiff != nil {
		out = AppendAPP1(out, tiff)
	}
	return append(out, body.Bytes()[2:]...) // without the encoder's SOI
}

// AppendAPP1 appends an APP1 Exif segment holding tiff. A block too large
// for one segment panics: a test asked for something JPEG cannot hold.
func AppendAPP1(out, tiff []byte) []byte {
	n := 2 + 6 + len(tiff)
	if n > 0xFFFF {
		panic("exiftest: EXIF block larger than one APP1 segment")
	}
	out = append(out, 0xFF, 0xE1)
	out = binary.BigEndian.AppendUint16(out, uint16(n))
	out = append(out, "Exif\x00\x00"...)
	return append(out, tiff...)
}

func appendPadding(out []byte, pad int) []byte {
	for pad > 0 {
		n := min(pad, 0xFFFF-2)
		out = append(out, 0xFF, 0xFE)
		out = binary.BigEndian.AppendUint16(out, uint16(n+2))
		out = append(out, bytes.Repeat([]byte{'.'}, n)...)
		pad -= n
	}
	return out
}

// HEIC is a minimal HEIF container (brand heic) with an image item and an
// Exif item located through iloc in mdat, the way phones store it: the item
// starts with a 4-byte offset to the TIFF header, here 6, followed by
// "Exif\0\0" and the block. pad bytes of stand-in image data precede the Exif
// item in mdat, to place it beyond a reader's head.
//
// The image item carries no HEVC bitstream or hvcC configuration: writing
// HEVC in pure Go is impractical, and the EXIF path never decodes pixels. A
// HEIF reader walks this file; a decoder would refuse the image.
func HEIC(tiff []byte, w, h uint32, pad int) []byte {
	pad = max(pad, 64) // an extent length of 0 would mean "to the end of the file"
	ftyp := box("ftyp", []byte("heic\x00\x00\x00\x00mif1heicmiaf"))
	hdlr := fullBox("hdlr", 0, 0, append(append(make([]byte, 4), "pict"...), make([]byte, 13)...))
	pitm := fullBox("pitm", 0, 0, []byte{0, 1})
	infe := func(id uint16, typ, name string) []byte {
		b := binary.BigEndian.AppendUint16(nil, id)
		b = append(b, 0, 0)
		b = append(b, typ...)
		b = append(b, name...)
		return fullBox("infe", 2, 0, append(b, 0))
	}
	iinf := fullBox("iinf", 0, 0, concat([]byte{0, 2}, infe(1, "hvc1", "image"), infe(2, "Exif", "")))
	ispe := fullBox("ispe", 0, 0, binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, w), h))
	ipco := box("ipco", ispe)
	ipma := fullBox("ipma", 0, 0, []byte{0, 0, 0, 1, 0, 1, 1, 0x81})
	iprp := box("iprp", concat(ipco, ipma))
	iref := fullBox("iref", 0, 0, box("cdsc", []byte{0, 2, 0, 1, 0, 1}))
	item := concat([]byte{0, 0, 0, 6}, []byte("Exif\x00\x00"), tiff)
	// iloc version 0: offset_size 4, length_size 4, base_offset_size 0.
	// Offsets are absolute, so the iloc size must be known first: build it
	// with zeros, measure, then fill in.
	iloc := func(imgOff, exifOff uint32) []byte {
		b := []byte{0x44, 0x00, 0, 2}
		b = binary.BigEndian.AppendUint16(b, 1)
		b = append(b, 0, 0, 0, 1)
		b = binary.BigEndian.AppendUint32(b, imgOff)
		b = binary.BigEndian.AppendUint32(b, uint32(pad))
		b = binary.BigEndian.AppendUint16(b, 2)
		b = append(b, 0, 0, 0, 1)
		b = binary.BigEndian.AppendUint32(b, exifOff)
		b = binary.BigEndian.AppendUint32(b, uint32(len(item)))
		return fullBox("iloc", 0, 0, b)
	}
	meta := func(l []byte) []byte { return fullBox("meta", 0, 0, concat(hdlr, pitm, l, iinf, iref, iprp)) }
	mdatStart := uint32(len(ftyp) + len(meta(iloc(0, 0))) + 8)
	out := concat(ftyp, meta(iloc(mdatStart, mdatStart+uint32(pad))))
	mdat := append(pseudoRandom(pad, 7), item...)
	return append(out, box("mdat", mdat)...)
}

func box(typ string, payload []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(8+len(payload)))
	b = append(b, typ...)
	return append(b, payload...)
}

func fullBox(typ string, version byte, flags uint32, payload []byte) []byte {
	vf := []byte{version, byte(flags >> 16), byte(flags >> 8), byte(flags)}
	return box(typ, append(vf, payload...))
}

func concat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// WebP is an extended-format WebP (VP8X) with its EXIF chunk after the image
// data, where the specification puts it. The image chunk is a VP8L chunk of
// pad stand-in bytes, not a decodable bitstream.
func WebP(tiff []byte, w, h uint32, pad int) []byte {
	vp8x := []byte{0x08, 0, 0, 0} // flags: EXIF present
	vp8x = appendUint24(vp8x, w-1)
	vp8x = appendUint24(vp8x, h-1)
	body := []byte("WEBP")
	body = appendChunk(body, "VP8X", vp8x)
	body = appendChunk(body, "VP8L", pseudoRandom(pad, 11))
	body = appendChunk(body, "EXIF", tiff)
	out := []byte("RIFF")
	out = binary.LittleEndian.AppendUint32(out, uint32(len(body)))
	return append(out, body...)
}

func appendUint24(b []byte, v uint32) []byte { return append(b, byte(v), byte(v>>8), byte(v>>16)) }

func appendChunk(b []byte, fourcc string, payload []byte) []byte {
	b = append(b, fourcc...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	b = append(b, payload...)
	if len(payload)%2 == 1 {
		b = append(b, 0)
	}
	return b
}

// PNG encodes img (nil: a 16x16 gradient) and inserts an eXIf chunk right
// after IHDR.
func PNG(tiff []byte, img image.Image) []byte {
	if img == nil {
		img = Gradient(16, 16)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	enc := b.Bytes()
	const ihdrEnd = 8 + 8 + 13 + 4
	out := append([]byte(nil), enc[:ihdrEnd]...)
	out = appendPNGChunk(out, "eXIf", tiff)
	return append(out, enc[ihdrEnd:]...)
}

// PNGBomb is a tiny PNG declaring width x height pixels (e.g. 100,000 x
// 100,000) with an eXIf chunk and no image data worth the name: a decoder
// trusting the header would try to allocate tens of gigabytes.
func PNGBomb(tiff []byte, width, height uint32) []byte {
	out := []byte("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, width)
	ihdr = binary.BigEndian.AppendUint32(ihdr, height)
	ihdr = append(ihdr, 8, 2, 0, 0, 0)
	out = appendPNGChunk(out, "IHDR", ihdr)
	out = appendPNGChunk(out, "eXIf", tiff)
	out = appendPNGChunk(out, "IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
	return appendPNGChunk(out, "IEND", nil)
}

func appendPNGChunk(b []byte, typ string, data []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	start := len(b)
	b = append(b, typ...)
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
}

// pseudoRandom is n deterministic high-entropy bytes (xorshift), standing in
// for compressed image data.
func pseudoRandom(n int, seed uint64) []byte {
	out := make([]byte, n)
	x := seed*0x9E3779B97F4A7C15 | 1
	for i := range out {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		out[i] = byte(x >> 32)
	}
	return out
}
