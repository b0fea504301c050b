package metastrip

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/photo/metastrip/metastriptest"
)

// Hostile files, built from the committed samples as a reviewer built them:
// each hides the owner's metadata where a stripper that follows the layouts
// it has seen would pass it on. Each is either refused (Check returns a
// *Problem, so the predictor records cannot_strip_metadata before any
// credit) or stripped so that exiftool, an independent reader, finds none
// of the owner's metadata in what is sent.

type hostile struct {
	name    string
	in      []byte
	refused bool
	// pixels, when set, is the original the stripped file must decode to
	// the same pixels as (Go's decoders for JPEG and PNG, libheif for HEIC).
	pixels []byte
}

// exifAPP1 is a phone's APP1 Exif segment: position, camera, serial, time.
func exifAPP1() []byte { return segment(0xE1, cat([]byte("Exif\x00\x00"), phoneTIFF(6))) }

// zlibOf compresses b.
func zlibOf(b []byte) []byte {
	var z bytes.Buffer
	w, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	w.Write(b)
	w.Close()
	return z.Bytes()
}

// bombBytes is what a zlib bomb inflates to: 32 MiB of zeros compress to
// some 32 KiB, within one PNG chunk the stripper reads whole.
const bombBytes = 32 << 20

func hostileFiles(t testing.TB, bombs bool) []hostile {
	heic := sample(t, "exif-gps-phone.heic")
	var hs []hostile
	add := func(name string, refused bool, pixels []byte, build func() []byte) {
		hs = append(hs, hostile{name: name, in: build(), refused: refused, pixels: pixels})
	}

	// HEIF: a second box where the format allows one. libheif reads the
	// first iinf/iloc, exiftool merges them: the old stripper read the
	// last, found no items and blanked nothing.
	add("heic-second-empty-iinf", true, nil, func() []byte {
		b := splitHEIC(t, heic)
		b.insertAfter("iinf", fullBox("iinf", 0, u16(0)))
		return b.bytes()
	})
	add("heic-second-empty-iloc", true, nil, func() []byte {
		b := splitHEIC(t, heic)
		b.insertAfter("iloc", fullBox("iloc", 0, []byte{0x44, 0x00}, u16(0)))
		return b.bytes()
	})
	add("heic-second-meta", true, nil, func() []byte {
		b := splitHEIC(t, heic)
		return cat(heic, heic[b.meta.start:b.meta.end])
	})
	// A hidden JPEG preview (ISO/IEC 23008-12 Annex H) with its own Exif.
	preview := func(b *heicBuild) {
		infe := isoBox("infe", []byte{2, 0, 0, 1}, u16(100), u16(0), []byte("jpeg"), []byte(ownerName+"\x00")) // flags 1: hidden
		b.addItem(100, infe, cat([]byte{0xFF, 0xD8}, exifAPP1(), encodeJPEG(t, gradient(16, 16))[2:]))
	}
	add("heic-hidden-jpeg-preview", false, heic, func() []byte {
		b := splitHEIC(t, heic)
		preview(b)
		return b.bytes()
	})
	// The preview's data runs on across a second mdat box: the box header
	// inside it would be sent as it is, read by exiftool as the preview's.
	add("heic-preview-across-two-mdat", true, nil, func() []byte {
		b := splitHEIC(t, heic)
		preview(b)
		b.tail = isoBox("mdat", exifAPP1())
		b.items.byID[100].extents[0].length += int64(len(b.tail))
		return b.bytes()
	})
	add("heic-jpeg-primary", true, nil, func() []byte {
		b := splitHEIC(t, heic)
		preview(b)
		b.editChild("pitm", func([]byte) []byte { return fullBox("pitm", 0, u16(100)) })
		return b.bytes()
	})
	add("heic-ispe-longer-than-its-fields", true, nil, func() []byte {
		b := splitHEIC(t, heic)
		b.editChild("iprp", func(old []byte) []byte {
			i := bytes.Index(old, []byte("ispe"))
			n := int(binary.BigEndian.Uint32(old[i-4:]))
			ispe := fullBox("ispe", 0, old[i+8:i-4+n], []byte(ownerName))
			if string(old[12:16]) != "ipco" {
				t.Fatal("sample's iprp does not start with ipco")
			}
			ipco := int(binary.BigEndian.Uint32(old[8:]))
			return cat(u32(len(old)+len(ownerName)), old[4:8], u32(ipco+len(ownerName)), old[12:i-4], ispe, old[i-4+n:])
		})
		return b.bytes()
	})
	// Descriptive properties, an ICC profile in colr and a handler name.
	add("heic-udes-crtt-colr-hdlr", false, heic, func() []byte {
		b := splitHEIC(t, heic)
		b.editProperties(func(props [][]byte) [][]byte {
			udes := fullBox("udes", 0, []byte("en-US\x00"+ownerName+"\x00taken at the harbour\x00"+ownerSerial+"\x00"))
			crtt := fullBox("crtt", 0, binary.BigEndian.AppendUint64(nil, 3800000000))
			colr := isoBox("colr", []byte("prof"), iccProfile())
			return append(props, udes, crtt, colr)
		})
		b.editChild("hdlr", func(old []byte) []byte { return fullBox("hdlr", 0, old[12:32], []byte(ownerName+"\x00")) })
		return b.bytes()
	})
	// Boxes of variable length a decoder keeps: a data reference's URL, an
	// auxiliary type's URN and subtype, SEI NAL units in hvcC and metadata
	// OBUs in av1C (user data, as x265 writes its settings), and bytes
	// past what their syntax accounts for.
	add("heic-dref-url", false, heic, func() []byte {
		b := splitHEIC(t, heic)
		// A self-contained entry (flags 1) has no location; the second has.
		url := fullBox("url ", 0, []byte("https://photos.example/"+ownerName+"/"+ownerSerial+"\x00"))
		b.insertAfter("hdlr", isoBox("dinf", fullBox("dref", 0, u32(2), isoBox("url ", []byte{0, 0, 0, 1}), url)))
		return b.bytes()
	})
	add("heic-auxc-urn-and-subtype", false, heic, func() []byte {
		b := splitHEIC(t, heic)
		b.editProperties(func(props [][]byte) [][]byte {
			return append(props, fullBox("auxC", 0, []byte("urn:example:"+ownerName+"\x00")),
				fullBox("auxC", 0, []byte("urn:mpeg:hevc:2015:auxid:1\x00"+ownerSerial)))
		})
		return b.bytes()
	})
	add("heic-colr-unknown-type", false, heic, func() []byte {
		b := splitHEIC(t, heic)
		b.editProperties(func(props [][]byte) [][]byte {
			return append(props, isoBox("colr", []byte("abcd"+ownerName+" "+ownerSerial)))
		})
		return b.bytes()
	})
	add("heic-nclx-longer-than-its-fields", true, nil, func() []byte {
		b := splitHEIC(t, heic)
		b.editProperties(func(props [][]byte) [][]byte {
			return append(props, isoBox("colr", []byte("nclx\x00\x01\x00\x0d\x00\x06\x80"+ownerName)))
		})
		return b.bytes()
	})
	add("heic-iinf-holds-another-box", true, nil, func() []byte {
		b := splitHEIC(t, heic)
		b.editChild("iinf", func(old []byte) []byte {
			box := isoBox("xxxx", []byte(ownerName))
			return cat(u32(len(old)+len(box)), old[4:], box)
		})
		return b.bytes()
	})
	add("heic-iref-longer-than-its-references", true, nil, func() []byte {
		b := splitHEIC(t, heic)
		b.editChild("iref", func(old []byte) []byte {
			n := int(binary.BigEndian.Uint32(old[12:])) // the first reference box
			return cat(u32(len(old)+len(ownerName)), old[4:12], u32(n+len(ownerName)), old[16:12+n], []byte(ownerName), old[12+n:])
		})
		return b.bytes()
	})
	add("heic-pixi-longer-than-its-channels", true, nil, func() []byte {
		b := splitHEIC(t, heic)
		b.editProperty("pixi", func(p []byte) []byte { return cat(p, []byte(ownerName)) })
		return b.bytes()
	})
	add("heic-hvcc-sei-user-data", false, heic, func() []byte {
		b := splitHEIC(t, heic)
		b.editProperty("hvcC", func(p []byte) []byte {
			if p[hvcCFields] != 3 {
				t.Fatalf("sample's hvcC has %d arrays", p[hvcCFields])
			}
			p[hvcCFields]++
			return cat(p, []byte{0x80 | 39}, u16(1), u16(len(seiUserData())), seiUserData())
		})
		return b.bytes()
	})
	add("heic-hvcc-longer-than-its-arrays", true, nil, func() []byte {
		b := splitHEIC(t, heic)
		b.editProperty("hvcC", func(p []byte) []byte { return cat(p, []byte(ownerName)) })
		return b.bytes()
	})
	// An av1C property no item uses still goes out with the file.
	seqHeader := []byte{av1SequenceHeader<<3 | 2, 3, 0, 0, 0}
	add("heic-av1c-metadata-obu", false, heic, func() []byte {
		b := splitHEIC(t, heic)
		meta := cat([]byte{4, 0xB5, 0, 0}, []byte(ownerName+" "+ownerSerial)) // ITU-T T.35 metadata
		b.editProperties(func(props [][]byte) [][]byte {
			return append(props, isoBox("av1C", []byte{0x81, 0, 0x0C, 0}, seqHeader, []byte{5<<3 | 2, byte(len(meta))}, meta))
		})
		return b.bytes()
	})
	add("heic-av1c-second-sequence-header", true, nil, func() []byte {
		b := splitHEIC(t, heic)
		b.editProperties(func(props [][]byte) [][]byte {
			return append(props, isoBox("av1C", []byte{0x81, 0, 0x0C, 0}, seqHeader, []byte{av1SequenceHeader << 3}, []byte(ownerName)))
		})
		return b.bytes()
	})

	// Bytes of idat and mdat that no item's extent covers: the Exif
	// item's iloc offset moved to a copy of it (its old bytes stay behind,
	// unreferenced, where a byte scan finds the serial), bytes after idat's
	// last item, and an mdat box no item points into.
	moveExif := func(b *heicBuild) {
		it := b.items.byID[b.itemsOfType("Exif")[0]]
		e := it.extents[0]
		if len(it.extents) != 1 || !bytes.Contains(heic[e.offset:e.offset+e.length], []byte(ownerSerial)) {
			t.Fatal("sample's Exif item is not one extent holding the serial")
		}
		it.extents[0].offset = extraAt + int64(len(b.extra))
		b.extra = append(b.extra, heic[e.offset:e.offset+e.length]...)
	}
	add("heic-exif-moved-old-bytes-orphaned", false, heic, func() []byte {
		b := splitHEIC(t, heic)
		moveExif(b)
		return b.bytes()
	})
	// The same with the first image item's length 0 (to the end of the
	// file), as a mutation run made it: its extent covers the old Exif
	// bytes and the moved ones.
	add("heic-image-extent-covers-the-exif-item", true, nil, func() []byte {
		b := splitHEIC(t, heic)
		moveExif(b)
		b.items.byID[b.itemsOfType("hvc1")[0]].extents[0].length = 0
		return b.bytes()
	})
	add("heic-idat-bytes-after-its-items", false, heic, func() []byte {
		b := splitHEIC(t, heic)
		b.editChild("idat", func(old []byte) []byte {
			return cat(u32(len(old)+len(ownerName+ownerSerial)), old[4:], []byte(ownerName+ownerSerial))
		})
		return b.bytes()
	})
	add("heic-mdat-no-item-points-into", false, heic, func() []byte {
		b := splitHEIC(t, heic)
		b.tail = isoBox("mdat", exifAPP1())
		return b.bytes()
	})
	add("heic-wide-box-with-a-payload", false, heic, func() []byte {
		return cat(heic, isoBox("wide", []byte(ownerName+ownerSerial)))
	})
	add("heic-second-ftyp", true, nil, func() []byte {
		return cat(heic, isoBox("ftyp", []byte("heic"), u32(0), []byte(ownerName+ownerSerial)))
	})
	// The strings of infe after the item's name: a mime item's content
	// type and encoding, a URI item's type, and bytes after them.
	add("heic-infe-strings-and-bytes-after-them", false, heic, func() []byte {
		b := splitHEIC(t, heic)
		b.addItem(101, isoBox("infe", []byte{2, 0, 0, 0}, u16(101), u16(0), []byte("mime\x00"),
			[]byte("application/x-"+ownerName+"\x00"+ownerSerial+"\x00Test Phone 15")), []byte{1})
		b.addItem(102, isoBox("infe", []byte{2, 0, 0, 0}, u16(102), u16(0), []byte("uri \x00"),
			[]byte("urn:"+ownerName+"\x00"+ownerSerial)), []byte{2})
		b.addItem(103, isoBox("infe", []byte{2, 0, 0, 0}, u16(103), u16(0), []byte("Exif\x00"), []byte(ownerSerial)), []byte{3})
		return b.bytes()
	})

	// JPEG: thumbnails in APP0, markers outside T.81's list, payload after
	// an Adobe segment, an ICC profile naming its owner.
	body := encodeJPEG(t, gradient(32, 24))
	jpegWith := func(segs ...[]byte) []byte { return cat(body[:2], cat(segs...), body[2:]) }
	thumb := cat([]byte{0xFF, 0xD8}, exifAPP1(), encodeJPEG(t, gradient(8, 8))[2:])
	add("jpeg-jfxx-thumbnail-with-exif", false, body, func() []byte {
		return jpegWith(segment(0xE0, []byte("JFIF\x00\x01\x02\x00\x00\x01\x00\x01\x00\x00")), segment(0xE0, cat([]byte("JFXX\x00\x10"), thumb)))
	})
	add("jpeg-jfif-thumbnail-and-payload", false, body, func() []byte {
		return jpegWith(segment(0xE0, cat([]byte("JFIF\x00\x01\x02\x00\x00\x01\x00\x01\x02\x01"), make([]byte, 6), []byte(ownerName))))
	})
	add("jpeg-adobe-payload", false, body, func() []byte {
		return jpegWith(segment(0xEE, cat([]byte("Adobe\x00\x64\x00\x00\x00\x00\x01"), []byte(ownerName))))
	})
	add("jpeg-icc-profile-names", false, body, func() []byte {
		return jpegWith(segment(0xE2, cat([]byte("ICC_PROFILE\x00\x01\x01"), iccProfile())))
	})
	add("jpeg-icc-bytes-no-tag-points-at", false, body, func() []byte {
		p := cat(iccProfile(), []byte("taken by "+ownerName+", "+ownerSerial))
		binary.BigEndian.PutUint32(p, uint32(len(p)))
		return jpegWith(segment(0xE2, cat([]byte("ICC_PROFILE\x00\x01\x01"), p)))
	})
	add("jpeg-dqt-longer-than-its-tables", true, nil, func() []byte {
		return jpegWith(segment(0xDB, cat(make([]byte, 65), []byte(ownerName))))
	})
	for _, m := range []byte{0x30, 0x4F, 0x92, 0xF7, 0xC8, 0xDE, 0x01, 0xD8} {
		// JPEG 2000's SOC (FF4F) and SOP (FF92), T.81's reserved FF30, JPEG-LS
		// (FFF7), JPG (FFC8), DHP (FFDE), TEM, a second SOI: each read
		// as a length segment wrapping an APP1 Exif, or as a bare marker
		// followed by one.
		add("jpeg-marker-FF"+strings.ToUpper(string("0123456789abcdef"[m>>4])+string("0123456789abcdef"[m&15])), true, nil, func() []byte {
			return jpegWith(segment(m, exifAPP1()))
		})
	}

	// PNG: a profile's name and text, a palette's name, zlib bombs.
	plain := func() []byte {
		var b bytes.Buffer
		if err := png.Encode(&b, gradient(16, 16)); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}()
	const ihdrEnd = 8 + 8 + 13 + 4
	pngWith := func(chunks ...[]byte) []byte { return cat(plain[:ihdrEnd], cat(chunks...), plain[ihdrEnd:]) }
	add("png-iccp-names", false, plain, func() []byte {
		return pngWith(pngChunk("iCCP", cat([]byte(ownerName+"\x00\x00"), zlibOf(iccProfile()))))
	})
	add("png-gama-longer-than-its-field", false, plain, func() []byte {
		return pngWith(pngChunk("gAMA", cat([]byte{0, 0, 0xB1, 0x8F}, []byte(ownerName))))
	})
	add("png-splt-name", false, plain, func() []byte {
		return pngWith(pngChunk("sPLT", cat([]byte(ownerName+"\x00\x08"), []byte{1, 2, 3, 4, 0, 1})))
	})
	if bombs {
		zeros := zlibOf(make([]byte, bombBytes))
		add("png-iccp-zlib-bomb", false, plain, func() []byte {
			return pngWith(pngChunk("iCCP", cat([]byte(ownerName+"\x00\x00"), zeros)))
		})
		// The largest profile the bound lets through, named, and a second
		// iCCP chunk behind it: one inflate per file.
		big := iccProfile()
		big = append(big, make([]byte, maxICCBytes-len(big))...)
		binary.BigEndian.PutUint32(big, uint32(len(big)))
		add("png-iccp-largest-profile-twice", false, plain, func() []byte {
			return pngWith(pngChunk("iCCP", cat([]byte(ownerName+"\x00\x00"), zlibOf(big))), pngChunk("iCCP", cat([]byte(ownerName+"\x00\x00"), zlibOf(big))))
		})
		add("png-ztxt-zlib-bomb", false, plain, func() []byte {
			return pngWith(pngChunk("zTXt", cat([]byte(ownerName+"\x00\x00"), zeros)))
		})
	}

	// WebP: an animation frame holding, besides its image, a chunk of
	// its own (RFC 9649 lets frames carry unknown chunks).
	add("webp-anmf-unknown-chunk", false, nil, func() []byte {
		simple := webpSample(t, "blue-purple-pink.lossy.webp")
		frame := cat(make([]byte, webpFrameHeader), simple[12:], riffChunk("c2pa", []byte(ownerName)))
		body := cat([]byte("WEBP"), riffChunk("VP8X", []byte{0x02, 0, 0, 0, 63, 0, 0, 63, 0, 0}),
			riffChunk("ANIM", make([]byte, 6)), riffChunk("ANMF", frame))
		return cat([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body))), body)
	})
	add("webp-vp8x-longer-than-its-fields", true, nil, func() []byte {
		simple := webpSample(t, "blue-purple-pink.lossy.webp")
		body := cat([]byte("WEBP"), riffChunk("VP8X", cat(make([]byte, 10), []byte(ownerName))), simple[12:])
		return cat([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body))), body)
	})
	return hs
}

// seiUserData is an HEVC prefix SEI NAL unit holding a user_data_unregistered
// message (H.265 D.2.7: a 16-byte UUID, then any bytes) naming the owner.
func seiUserData() []byte {
	text := []byte("taken by " + ownerName + ", " + ownerSerial)
	return cat([]byte{39 << 1, 1, 5, byte(16 + len(text))}, make([]byte, 16), text, []byte{0x80})
}

// TestHostileFilesAreRefusedOrStrippedClean is the corpus test of the
// differential check: every hostile file is refused by Check, or stripped
// to bytes in which exiftool (-a -ee -G1:4) finds no position, camera,
// serial, time, name, thumbnail or preview, and which decode to the
// original pixels. Whatever Check says, the streaming Reader's output (what
// a stream that met the problem past the head would send) is clean too.
func TestHostileFilesAreRefusedOrStrippedClean(t *testing.T) {
	et := metastriptest.StartExiftool(t)
	for _, h := range hostileFiles(t, true) {
		t.Run(h.name, func(t *testing.T) {
			if !h.refused && !bytes.Contains(h.in, []byte(ownerName)) && len(et.OwnerMetadata(t, h.in)) == 0 {
				t.Fatal("the hostile file holds no owner metadata: the test would prove nothing")
			}
			_, err := Check(h.in, int64(len(h.in)))
			var p *Problem
			switch {
			case h.refused && !errors.As(err, &p):
				t.Errorf("Check = %v, want a *Problem: the file must be refused before any credit", err)
			case h.refused:
				t.Logf("refused: %v", err)
			case !h.refused && err != nil:
				t.Errorf("Check = %v, want the file stripped", err)
			}
			out, _ := strip(t, h.in)
			if found := et.OwnerMetadata(t, out); len(found) != 0 {
				t.Errorf("exiftool finds %v in what is sent", found)
			}
			for _, s := range []string{ownerName, ownerSerial, "Test Phone 15"} {
				if bytes.Contains(out, []byte(s)) {
					t.Errorf("what is sent still holds %q", s)
				}
			}
			if h.pixels != nil {
				samePixelsAs(t, h.pixels, out)
			}
		})
	}
}

// samePixelsAs checks that stripped decodes to the pixels of orig.
func samePixelsAs(t *testing.T, orig, stripped []byte) {
	t.Helper()
	decode := func(b []byte) image.Image {
		var img image.Image
		var err error
		switch {
		case bytes.HasPrefix(b, []byte{0xFF, 0xD8}):
			img, err = jpeg.Decode(bytes.NewReader(b))
		case bytes.HasPrefix(b, []byte("\x89PNG")):
			img, err = png.Decode(bytes.NewReader(b))
		default:
			img = heifDecode(t, b)
		}
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		return img
	}
	samePixels(t, decode(orig), decode(stripped))
}

// heifDecode decodes a HEIF file's primary image with libheif.
func heifDecode(t *testing.T, b []byte) image.Image {
	t.Helper()
	convert := metastriptest.Tool(t, "heif-convert")
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "in.heic"), filepath.Join(dir, "out.png")
	if err := os.WriteFile(src, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(convert, src, dst).CombinedOutput(); err != nil {
		t.Fatalf("heif-convert: %v\n%s", err, msg)
	}
	f, err := os.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestHEICWithASecondIinfOrIlocIsRefused is the first file: the
// committed phone HEIC with one more, empty, iinf (or iloc) after the real
// one. libheif decodes it to the original's pixels and exiftool reads the
// owner's position, camera and serial from it; the old stripper kept the
// last box, found no items and passed everything ("removed: nothing").
func TestHEICWithASecondIinfOrIlocIsRefused(t *testing.T) {
	heic := sample(t, "exif-gps-phone.heic")
	for _, h := range hostileFiles(t, false)[:2] {
		t.Run(h.name, func(t *testing.T) {
			if found := metastriptest.OwnerMetadata(t, h.in); len(found) == 0 {
				t.Fatal("exiftool reads no owner metadata from the built file")
			}
			samePixels(t, heifDecode(t, heic), heifDecode(t, h.in))
			rep, err := Check(h.in, int64(len(h.in)))
			var p *Problem
			if !errors.As(err, &p) || !strings.Contains(p.Reason, "more than one") {
				t.Fatalf("Check = %v (report %v), want a *Problem naming the second box", err, rep)
			}
		})
	}
}

// TestICCProfilesKeepTheirColourTags checks the other side of blanking a
// profile's descriptive fields: its colour tags are the original's, byte
// for byte, in JPEG, WebP and HEIF.
func TestICCProfilesKeepTheirColourTags(t *testing.T) {
	icc := iccProfile()
	colour := func(p []byte) map[string]string {
		m := map[string]string{}
		for i := range int(binary.BigEndian.Uint32(p[128:])) {
			e := p[132+12*i:]
			sig, off, n := string(e[:4]), binary.BigEndian.Uint32(e[4:]), binary.BigEndian.Uint32(e[8:])
			if iccColourTags[sig] {
				m[sig] = string(p[off : off+n])
			}
		}
		return m
	}
	want := colour(icc)
	if len(want) != 7 {
		t.Fatalf("sample profile has %d colour tags", len(want))
	}
	for _, h := range hostileFiles(t, false) {
		if h.name != "jpeg-icc-profile-names" && h.name != "heic-udes-crtt-colr-hdlr" {
			continue
		}
		out, _ := strip(t, h.in)
		at := bytes.Index(out, []byte("acsp"))
		if at < 36 {
			t.Fatalf("%s: no profile in the output", h.name)
		}
		p := out[at-36 : at-36+len(icc)]
		for sig, data := range want {
			if got := colour(p)[sig]; got != data {
				t.Errorf("%s: colour tag %s changed", h.name, sig)
			}
		}
		if bytes.Contains(p, []byte("GEOL")) || !bytes.Equal(p[84:100], make([]byte, 16)) {
			t.Errorf("%s: header still names the device or keeps the old profile ID", h.name)
		}
	}
}

// TestZlibBombsAreNotInflated: a 32 MiB zlib bomb in iCCP is inflated to
// maxICCBytes at most, one in zTXt not at all; what the stripper allocates
// stays a few times the chunk, not the bomb.
func TestZlibBombsAreNotInflated(t *testing.T) {
	for _, h := range hostileFiles(t, true) {
		if !strings.Contains(h.name, "bomb") && !strings.Contains(h.name, "largest") {
			continue
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r, err := New(bytes.NewReader(h.in))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 8*maxICCBytes {
			t.Errorf("%s: stripping allocated %d bytes for a %d-byte file", h.name, n, len(h.in))
		}
		if k := r.Report().ByKind(); k[KindOther]+k[KindText] == 0 {
			t.Errorf("%s: the chunk was not blanked: %v", h.name, r.Report())
		}
	}
}

// BenchmarkStripICCP: the cost of an iCCP chunk inflating to 32 MiB
// (stopped at maxICCBytes), and of the largest profile the bound lets
// through (inflated, cleaned, compressed again) followed by a second iCCP
// chunk (blanked without inflating).
func BenchmarkStripICCP(b *testing.B) {
	for _, h := range hostileFiles(b, true) {
		if h.name != "png-iccp-zlib-bomb" && h.name != "png-iccp-largest-profile-twice" {
			continue
		}
		b.Run(h.name, func(b *testing.B) {
			b.SetBytes(int64(len(h.in)))
			b.ReportAllocs()
			for b.Loop() {
				r, _ := New(bytes.NewReader(h.in))
				if _, err := io.Copy(io.Discard, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestHEIFInfeStringsKeepTheirPlaces checks the other side of blanking infe
// strings: a content type readers act on (XMP's) is kept, any other string
// becomes spaces of its length with its NUL, so every entry still parses
// to the same items and types.
func TestHEIFInfeStringsKeepTheirPlaces(t *testing.T) {
	var in []byte
	for _, h := range hostileFiles(t, false) {
		if h.name == "heic-infe-strings-and-bytes-after-them" {
			in = h.in
		}
	}
	out, _ := strip(t, in)
	if len(out) != len(in) {
		t.Fatalf("stripped file of %d bytes, want the input's %d", len(out), len(in))
	}
	read := func(b []byte) *heifItems {
		t.Helper()
		x := &heifItems{byID: map[uint32]*heifItem{}}
		hb := splitHEIC(t, b)
		iinf := hb.children[hb.index("iinf")]
		if err := x.readIinf(slices.Clone(iinf)[8:]); err != nil {
			t.Fatal(err)
		}
		return x
	}
	before, after := read(in), read(out)
	xmp := 0
	for id, it := range before.byID {
		got := after.byID[id]
		switch {
		case got == nil || got.typ != it.typ:
			t.Errorf("item %d: %+v after stripping, want type %q", id, got, it.typ)
		case it.contentType == "application/rdf+xml":
			xmp++
			if got.contentType != it.contentType {
				t.Errorf("XMP item %d has content type %q after stripping", id, got.contentType)
			}
		case got.contentType != strings.Repeat(" ", len(it.contentType)):
			t.Errorf("item %d has content type %q after stripping, want %d spaces", id, got.contentType, len(it.contentType))
		}
	}
	if xmp != 1 || before.byID[101].contentType == "" {
		t.Fatalf("the built file has %d XMP items and mime item content type %q: the test would prove nothing", xmp, before.byID[101].contentType)
	}
}
