package metastrip

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
)

// Photos as phones write them, built here so every metadata structure the
// stripper handles is present and known: a position, a camera, its serial
// number, a capture time, a person's name.

const (
	ownerName   = "Ada Example"
	ownerSerial = "SN-4711-0815"
)

// phoneTIFF is the sample EXIF block of a phone photo: the harbour photo's
// GPS fix, time and camera, plus an orientation, a body serial number and a
// thumbnail IFD.
func phoneTIFF(orient uint16) []byte {
	t := exiftest.Harbour().TIFF()
	if orient != 0 {
		t.IFD0 = append(t.IFD0, exiftest.Short(tagOrientation, orient))
	}
	t.IFD0 = append(t.IFD0, exiftest.ASCII(exiftest.TagDateTime, "2024:06:01 21:42:05"))
	t.Exif = append(t.Exif, exiftest.ASCII(0xa431, ownerSerial)) // BodySerialNumber
	t.IFD1 = []exiftest.Field{exiftest.Long(exiftest.TagImageWidth, 8)}
	return t.Bytes()
}

// xmpPacket carries the same facts as XMP does in phone photos.
func xmpPacket() []byte {
	return []byte(`<?xpacket begin="` + "\ufeff" + `" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:exif="http://ns.adobe.com/exif/1.0/"
 xmlns:aux="http://ns.adobe.com/exif/1.0/aux/" exif:GPSLatitude="53,32.6334N" exif:GPSLongitude="9,57.9666E"
 aux:SerialNumber="` + ownerSerial + `"><dc:creator><rdf:Seq><rdf:li>` + ownerName + `</rdf:li></rdf:Seq></dc:creator>
</rdf:Description></rdf:RDF></x:xmpmeta>
<?xpacket end="w"?>`)
}

func gradient(w, h int) image.Image { return exiftest.Gradient(w, h) }

func encodeJPEG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func segment(marker byte, payload []byte) []byte {
	b := []byte{0xFF, marker}
	b = binary.BigEndian.AppendUint16(b, uint16(2+len(payload)))
	return append(b, payload...)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// phoneJPEG is a JPEG with everything a phone, an editor and a vendor put
// in one: JFIF, Exif (orientation orient), XMP and extended XMP, an ICC
// profile, MPF, IPTC, C2PA (APP11), a comment, and after the image's end a
// secondary image with its own Exif (as MPF gain maps) and a vendor trailer.
func phoneJPEG(t testing.TB, img image.Image, orient uint16) []byte {
	t.Helper()
	body := encodeJPEG(t, img)[2:] // without its SOI
	secondary := cat([]byte{0xFF, 0xD8}, segment(0xE1, cat([]byte("Exif\x00\x00"), phoneTIFF(0))), encodeJPEG(t, gradient(8, 8))[2:])
	return cat(
		[]byte{0xFF, 0xD8},
		segment(0xE0, []byte("JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")),
		segment(0xE1, cat([]byte("Exif\x00\x00"), phoneTIFF(orient))),
		segment(0xE1, cat([]byte("http://ns.adobe.com/xap/1.0/\x00"), xmpPacket())),
		segment(0xE1, cat([]byte("http://ns.adobe.com/xmp/extension/\x00"), bytes.Repeat([]byte("0"), 32), []byte{0, 0, 0, 40, 0, 0, 0, 0}, []byte("<rdf:li>"+ownerName+"</rdf:li>"))),
		segment(0xE2, cat([]byte("ICC_PROFILE\x00\x01\x01"), iccProfile())),
		segment(0xE2, cat([]byte("MPF\x00II*\x00"), make([]byte, 32))),
		segment(0xED, cat([]byte("Photoshop 3.0\x008BIM\x04\x04\x00\x00\x00\x00\x00\x10\x1c\x02\x50\x00\x0b"), []byte(ownerName))),
		segment(0xEB, cat([]byte("JP\x00\x00\x00\x01c2pa"), []byte(ownerName))),
		segment(0xFE, []byte("taken by "+ownerName)),
		body,
		secondary,
		[]byte("SEFT\x00Image_UTC_Data1717270925000"),
	)
}

func pngChunk(typ string, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	b = append(b, typ...)
	b = append(b, data...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[4:]))
}

// phonePNG is a PNG with eXIf, text chunks (XMP in iTXt), tIME, a gamma
// that changes how it looks, and a trailer after IEND.
func phonePNG(t testing.TB, img image.Image, orient uint16) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	enc := b.Bytes()
	const ihdrEnd = 8 + 8 + 13 + 4
	iend := len(enc) - 12
	return cat(
		enc[:ihdrEnd],
		pngChunk("gAMA", []byte{0, 0, 0xB1, 0x8F}),
		pngChunk("eXIf", phoneTIFF(orient)),
		pngChunk("tEXt", []byte("Author\x00"+ownerName)),
		pngChunk("iTXt", cat([]byte("XML:com.adobe.xmp\x00\x00\x00\x00\x00"), xmpPacket())),
		pngChunk("zTXt", []byte("Comment\x00\x00\x78\x9c\x03\x00\x00\x00\x00\x01")),
		pngChunk("tIME", []byte{0x07, 0xE8, 6, 1, 19, 42, 5}),
		enc[ihdrEnd:iend],
		pngChunk("caBX", []byte(ownerName)),
		enc[iend:],
		[]byte("trailing "+ownerName),
	)
}

func riffChunk(fourcc string, data []byte) []byte {
	b := append([]byte(fourcc), binary.LittleEndian.AppendUint32(nil, uint32(len(data)))...)
	b = append(b, data...)
	if len(data)%2 == 1 {
		b = append(b, 0)
	}
	return b
}

// webpSample is a real WebP image (golang.org/x/image's test files, copied
// into pkg/photo/downscale/testdata).
func webpSample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "downscale", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// phoneWebP wraps the image chunk of a simple WebP in the extended format
// with an ICC profile, EXIF, XMP and an unknown chunk, flags set to match,
// and a trailer past the RIFF size.
func phoneWebP(t testing.TB, simple []byte, w, h int, orient uint16) []byte {
	t.Helper()
	image := simple[12:] // the VP8 or VP8L chunk
	vp8x := []byte{0x20 | 0x08 | 0x04, 0, 0, 0}
	vp8x = append(vp8x, byte(w-1), byte((w-1)>>8), byte((w-1)>>16), byte(h-1), byte((h-1)>>8), byte((h-1)>>16))
	body := cat([]byte("WEBP"),
		riffChunk("VP8X", vp8x),
		riffChunk("ICCP", iccProfile()),
		image,
		riffChunk("EXIF", phoneTIFF(orient)),
		riffChunk("XMP ", xmpPacket()),
		riffChunk("c2pa", []byte(ownerName)),
	)
	out := append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...)
	return cat(out, body, []byte("trailing "+ownerName))
}

// sample reads a file of the repository's sample images.
func sample(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "images", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// iccProfile is a display profile as phones embed them (Display P3 like),
// whose descriptive fields name the owner: the header's creation time,
// device manufacturer and model and creator, and the desc, dmnd, dmdd and
// cprt tags. Its colour tags (white point, primaries, tone curves) are
// what a stripped profile must keep.
func iccProfile() []byte {
	mluc := func(s string) []byte {
		u := make([]byte, 0, 2*len(s))
		for _, c := range s {
			u = binary.BigEndian.AppendUint16(u, uint16(c))
		}
		b := cat([]byte("mluc\x00\x00\x00\x00"), binary.BigEndian.AppendUint32(nil, 1), binary.BigEndian.AppendUint32(nil, 12), []byte("enUS"))
		b = binary.BigEndian.AppendUint32(b, uint32(len(u)))
		b = binary.BigEndian.AppendUint32(b, 28)
		return append(b, u...)
	}
	xyz := func(x, y, z uint32) []byte {
		return cat([]byte("XYZ \x00\x00\x00\x00"), binary.BigEndian.AppendUint32(nil, x), binary.BigEndian.AppendUint32(nil, y), binary.BigEndian.AppendUint32(nil, z))
	}
	curv := []byte("curv\x00\x00\x00\x00\x00\x00\x00\x01\x02\x33\x00\x00") // gamma 2.2
	tags := []struct {
		sig  string
		data []byte
	}{
		{"desc", mluc(ownerName + "'s phone profile")},
		{"cprt", append([]byte("text\x00\x00\x00\x00Copyright "+ownerName), 0)},
		{"dmnd", mluc("Geolocate")},
		{"dmdd", mluc("Test Phone 15 " + ownerSerial)},
		{"wtpt", xyz(0xF6D6, 0x10000, 0xD32D)},
		{"rXYZ", xyz(0x83DF, 0x3DF9, 0x0303)},
		{"gXYZ", xyz(0x4AB9, 0xAA92, 0x101A)},
		{"bXYZ", xyz(0x2838, 0x0F74, 0xBE67)},
		{"rTRC", curv}, {"gTRC", curv}, {"bTRC", curv},
	}
	table := binary.BigEndian.AppendUint32(nil, uint32(len(tags)))
	var data []byte
	off := 128 + 4 + 12*len(tags)
	for _, tg := range tags {
		for len(tg.data)%4 != 0 {
			tg.data = append(tg.data, 0)
		}
		table = append(table, tg.sig...)
		table = binary.BigEndian.AppendUint32(table, uint32(off+len(data)))
		table = binary.BigEndian.AppendUint32(table, uint32(len(tg.data)))
		data = append(data, tg.data...)
	}
	h := make([]byte, 128)
	binary.BigEndian.PutUint32(h, uint32(128+len(table)+len(data)))
	copy(h[4:], "lcms")
	binary.BigEndian.PutUint32(h[8:], 0x04300000)
	copy(h[12:], "mntrRGB XYZ ")
	for i, v := range []uint16{2024, 6, 1, 21, 42, 5} { // creation time
		binary.BigEndian.PutUint16(h[24+2*i:], v)
	}
	copy(h[36:], "acspAPPL")
	copy(h[48:], "GEOLTP15")
	copy(h[68:], []byte{0, 0, 0xF6, 0xD6, 0, 1, 0, 0, 0, 0, 0xD3, 0x2D}) // D50
	copy(h[80:], "GEOL")
	copy(h[84:], "0123456789abcdef") // profile ID
	return cat(h, table, data)
}
