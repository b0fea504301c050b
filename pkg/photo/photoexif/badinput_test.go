package photoexif

import (
	"encoding/binary"
	"errors"
	"runtime"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
)

func dms10() []exiftest.Rational {
	d := exiftest.DMS(10)
	return d[:]
}

// withGPS is the harbour photo with its GPS IFD changed by edit.
func withGPS(edit func(g *exiftest.GPS)) []byte {
	p := exiftest.Harbour()
	g := *p.GPS
	edit(&g)
	p.GPS = &g
	return exiftest.JPEG(p.Bytes(), nil, 0)
}

// withTIFF is the harbour photo's block changed by edit, in a JPEG.
func withTIFF(edit func(t *exiftest.TIFF)) []byte {
	t := exiftest.Harbour().TIFF()
	edit(&t)
	return exiftest.JPEG(t.Bytes(), nil, 0)
}

func rationals(v ...uint32) *[3]exiftest.Rational {
	return &[3]exiftest.Rational{{Num: v[0], Den: v[1]}, {Num: v[2], Den: v[3]}, {Num: v[4], Den: v[5]}}
}

// allocated runs f and returns the bytes it allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestBadInput is the bad-input suite of issue 15 point 6 and the GPS
// validity rules of point 3: each input is refused, or its GPS rejected,
// with the stated reason; none panics, none returns a position, and none
// allocates more than a small multiple of its own size.
func TestBadInput(t *testing.T) {
	harbour := exiftest.Harbour().Bytes()
	jpeg := exiftest.JPEG(harbour, nil, 0)
	heic := exiftest.HEIC(harbour, 80, 60, 0)

	hugeCount := []byte("II*\x00\x08\x00\x00\x00\xff\xff")
	hugeCount = append(hugeCount, make([]byte, 100)...)

	// IFD0 at 8 with one entry, the GPS pointer to byte 26, where a GPS
	// IFD declares 65535 entries in 20 bytes.
	hugeGPS := []byte("II*\x00\x08\x00\x00\x00\x01\x00\x25\x88\x04\x00\x01\x00\x00\x00\x1a\x00\x00\x00\x00\x00\x00\x00\xff\xff")
	hugeGPS = append(hugeGPS, make([]byte, 20)...)

	tests := []struct {
		name string
		file []byte
		err  Reason // the error's reason; "" for none
		gps  Reason // Meta.GPSProblem's reason
	}{
		// Truncated EXIF.
		{"jpeg cut inside the APP1 Exif segment", jpeg[:200], ReasonTruncated, ReasonTruncated},
		{"tiff file cut inside IFD0", harbour[:40], ReasonTruncated, ReasonTruncated},
		{"tiff file of 5 bytes", append([]byte("II*\x00"), 8), ReasonUnsupportedFormat, ReasonUnsupportedFormat},
		{"exif block cut inside IFD0 in a whole jpeg", exiftest.JPEG(harbour[:40], nil, 0), ReasonIFDCount, ReasonIFDCount},
		{"exif block cut before its sub-IFDs in a whole jpeg", exiftest.JPEG(harbour[:80], nil, 0), ReasonOffsetOutside, ReasonOffsetOutside},
		{"heic cut before its Exif item", heic[:len(heic)-40], ReasonTruncated, ReasonTruncated},
		{"exif block shorter than a TIFF header", exiftest.JPEG([]byte("II*\x00"), nil, 0), ReasonTruncated, ReasonTruncated},
		{"exif block without a TIFF header", exiftest.JPEG([]byte("not a tiff header at all"), nil, 0), ReasonMalformed, ReasonMalformed},

		// EXIF pointing outside the file.
		{"IFD0 offset outside the block", exiftest.JPEG([]byte("II*\x00\x00\xff\xff\xff\x00\x00"), nil, 0), ReasonOffsetOutside, ReasonOffsetOutside},
		{"GPS IFD offset outside the block", withTIFF(func(t *exiftest.TIFF) {
			t.IFD0 = append(t.IFD0, exiftest.Raw(exiftest.TagGPSIFD, exiftest.TypeLong, 1, 0x7fff_ffff))
		}), ReasonOffsetOutside, ReasonOffsetOutside},
		{"Exif IFD offset outside the block", withTIFF(func(t *exiftest.TIFF) {
			t.IFD0 = append(t.IFD0, exiftest.Raw(exiftest.TagExifIFD, exiftest.TypeLong, 1, 0xffff_fff0))
		}), ReasonOffsetOutside, ReasonOffsetOutside},
		{"GPS latitude value outside the block", withGPS(func(g *exiftest.GPS) {
			g.OmitLatLon = true
			g.ExtraGPSField = []exiftest.Field{
				exiftest.ASCII(exiftest.TagGPSLatitudeRef, "N"),
				exiftest.Raw(exiftest.TagGPSLatitude, exiftest.TypeRational, 3, 0x00ff_0000),
				exiftest.ASCII(exiftest.TagGPSLongitudeRef, "E"),
				exiftest.Rationals(exiftest.TagGPSLongitude, dms10()...),
			}
		}), "", ReasonGPSMalformed},
		{"heic Exif item offset outside the file", heicItemAt(heic, 0x7fff_0000), ReasonTruncated, ReasonTruncated},

		// Huge counts.
		{"IFD0 declaring 65535 entries", exiftest.JPEG(hugeCount, nil, 0), ReasonIFDCount, ReasonIFDCount},
		{"GPS IFD declaring 65535 entries", exiftest.JPEG(hugeGPS, nil, 0), ReasonIFDCount, ReasonIFDCount},
		{"GPS latitude declaring 500 million rationals", withGPS(func(g *exiftest.GPS) {
			g.OmitLatLon = true
			g.ExtraGPSField = []exiftest.Field{
				exiftest.ASCII(exiftest.TagGPSLatitudeRef, "N"),
				exiftest.Raw(exiftest.TagGPSLatitude, exiftest.TypeRational, 0x1fff_ffff, 8),
			}
		}), "", ReasonGPSMalformed},
		{"thumbnail declaring 4 GB", withTIFF(func(t *exiftest.TIFF) {
			t.IFD1 = []exiftest.Field{
				exiftest.Long(exiftest.TagThumbnailOffset, 8),
				exiftest.Long(exiftest.TagThumbnailLength, 0xf000_0000),
			}
		}), "", ""},
		{"png declaring 100,000 x 100,000 pixels", exiftest.PNGBomb(harbour, 100_000, 100_000), "", ""},
		{"jpeg segment length below 2", []byte("\xff\xd8\xff\xe1\x00\x01" + string(make([]byte, 40))), ReasonMalformed, ReasonMalformed},
		// Issue 23: the APP1 length (4) is shorter than the Exif header
		// behind it; the block was sliced backwards and the process died.
		{"APP1 Exif segment shorter than its header", []byte("\xff\xd8\xff\xe1\x00\x04Exif\x00\x00" + string(make([]byte, 20))), ReasonMalformed, ReasonMalformed},

		// Absurd rationals.
		{"latitude with zero denominator", withGPS(func(g *exiftest.GPS) { g.LatRationals = rationals(53, 0, 32, 1, 38, 1) }), "", ReasonZeroDenominator},
		{"longitude seconds 0/0", withGPS(func(g *exiftest.GPS) { g.LonRationals = rationals(9, 1, 57, 1, 0, 0) }), "", ReasonZeroDenominator},
		{"latitude of 4294967295 degrees", withGPS(func(g *exiftest.GPS) { g.LatRationals = rationals(0xffff_ffff, 1, 0, 1, 0, 1) }), "", ReasonOutOfRange},
		{"minutes of 75", withGPS(func(g *exiftest.GPS) { g.LatRationals = rationals(53, 1, 75, 1, 0, 1) }), "", ReasonOutOfRange},
		{"longitude of 190 degrees", withGPS(func(g *exiftest.GPS) { g.Lon = 190 }), "", ReasonOutOfRange},
		{"latitude of 95 degrees", withGPS(func(g *exiftest.GPS) { g.Lat = 95 }), "", ReasonOutOfRange},

		// GPS validity rules.
		{"position 0,0", withGPS(func(g *exiftest.GPS) { g.Lat, g.Lon = 0, 0 }), "", ReasonNullIsland},
		{"GPS block without a fix", withGPS(func(g *exiftest.GPS) { g.OmitLatLon = true }), "", ReasonNoFix},
		{"latitude without longitude", withGPS(func(g *exiftest.GPS) {
			g.OmitLatLon = true
			g.ExtraGPSField = []exiftest.Field{exiftest.ASCII(exiftest.TagGPSLatitudeRef, "N"), exiftest.Rationals(exiftest.TagGPSLatitude, dms10()...)}
		}), "", ReasonNoFix},
		{"GPSStatus V", withGPS(func(g *exiftest.GPS) { g.Status = "V" }), "", ReasonStatusVoid},
		{"latitude reference X", withGPS(func(g *exiftest.GPS) { g.LatRef = "X" }), "", ReasonGPSMalformed},
		{"latitude without reference", withGPS(func(g *exiftest.GPS) {
			g.OmitLatLon = true
			g.ExtraGPSField = []exiftest.Field{
				exiftest.Rationals(exiftest.TagGPSLatitude, dms10()...),
				exiftest.ASCII(exiftest.TagGPSLongitudeRef, "E"), exiftest.Rationals(exiftest.TagGPSLongitude, dms10()...),
			}
		}), "", ReasonGPSMalformed},
		{"latitude as two rationals", withGPS(func(g *exiftest.GPS) {
			g.OmitLatLon = true
			g.ExtraGPSField = []exiftest.Field{
				exiftest.ASCII(exiftest.TagGPSLatitudeRef, "N"), exiftest.Rationals(exiftest.TagGPSLatitude, dms10()[:2]...),
				exiftest.ASCII(exiftest.TagGPSLongitudeRef, "E"), exiftest.Rationals(exiftest.TagGPSLongitude, dms10()...),
			}
		}), "", ReasonGPSMalformed},
		{"latitude as a LONG", withGPS(func(g *exiftest.GPS) {
			g.OmitLatLon = true
			g.ExtraGPSField = []exiftest.Field{
				exiftest.ASCII(exiftest.TagGPSLatitudeRef, "N"), exiftest.Long(exiftest.TagGPSLatitude, 53, 32, 38),
				exiftest.ASCII(exiftest.TagGPSLongitudeRef, "E"), exiftest.Rationals(exiftest.TagGPSLongitude, dms10()...),
			}
		}), "", ReasonGPSMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m Meta
			var err error
			n := allocated(func() { m, err = Parse(tt.file) })
			var p *Problem
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case tt.err != "" && (!errors.As(err, &p) || p.Reason != tt.err):
				t.Fatalf("error %v, want reason %s", err, tt.err)
			}
			if m.GPS != nil && tt.gps != "" {
				t.Fatalf("position %v returned, want none (%s)", m.GPS, tt.gps)
			}
			if tt.gps == "" {
				if m.GPS == nil {
					t.Fatalf("no position: %v", m.GPSProblem)
				}
			} else if m.GPSProblem == nil || m.GPSProblem.Reason != tt.gps {
				t.Fatalf("GPS problem %v, want %s", m.GPSProblem, tt.gps)
			}
			if m.GPSProblem != nil && m.GPSProblem.Detail == "" {
				t.Errorf("problem %s has no human text", m.GPSProblem.Reason)
			}
			// go-exif's tag index is built on first use (a few MB, once).
			if limit := uint64(64*len(tt.file)) + 8<<20; n > limit {
				t.Errorf("allocated %d bytes for a %d-byte file", n, len(tt.file))
			}
		})
	}
}

// heicItemAt rewrites the Exif item's extent offset in a file built by
// exiftest.HEIC (iloc version 0, 4-byte offsets, item 2 last).
func heicItemAt(heic []byte, offset uint32) []byte {
	b := append([]byte(nil), heic...)
	i := indexOf(b, "iloc")
	// box type, version+flags, sizes (2), count (2), item 1 (2+2+2+4+4),
	// item 2 id, data ref, extent count: then the offset.
	at := i + 4 + 4 + 2 + 2 + 14 + 6
	binary.BigEndian.PutUint32(b[at:], offset)
	return b
}
