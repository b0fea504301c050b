// Package exiftest builds images carrying real EXIF blocks in memory, so that
// tests anywhere in the repository can exercise EXIF handling without
// committing sample photos: a TIFF/EXIF builder that can also write the
// malformed blocks the bad-input tests need, and wrappers that put a block
// into a JPEG, HEIC, WebP or PNG container.
//
// Everything here is deterministic: the same arguments give the same bytes.
package exiftest

import (
	"encoding/binary"
	"fmt"
)

// TIFF field types (TIFF 6.0 section 2, EXIF 2.32 section 4.6.2).
const (
	TypeByte      uint16 = 1
	TypeASCII     uint16 = 2
	TypeShort     uint16 = 3
	TypeLong      uint16 = 4
	TypeRational  uint16 = 5
	TypeUndefined uint16 = 7
	TypeSRational uint16 = 10
)

// Tags that link IFDs together; the builder writes them itself unless a
// field with the same tag is supplied (which is how a test points one
// outside the block).
const (
	TagExifIFD uint16 = 0x8769
	TagGPSIFD  uint16 = 0x8825
)

// Field is one IFD entry. Data holds the value in big-endian order whatever
// the block's byte order; the builder converts it unit by unit.
type Field struct {
	Tag   uint16
	Type  uint16
	Count uint32
	Data  []byte
	// Offset, when set, is written verbatim as the entry's value/offset word
	// and Data is not placed: the way to declare values that lie outside the
	// block or counts far larger than the data.
	Offset *uint32
}

// ASCII is a NUL-terminated ASCII field.
func ASCII(tag uint16, s string) Field {
	b := append([]byte(s), 0)
	return Field{Tag: tag, Type: TypeASCII, Count: uint32(len(b)), Data: b}
}

// Bytes is a BYTE field.
func Bytes(tag uint16, v ...byte) Field {
	return Field{Tag: tag, Type: TypeByte, Count: uint32(len(v)), Data: v}
}

// Short is a SHORT field.
func Short(tag uint16, v ...uint16) Field {
	b := make([]byte, 0, 2*len(v))
	for _, x := range v {
		b = binary.BigEndian.AppendUint16(b, x)
	}
	return Field{Tag: tag, Type: TypeShort, Count: uint32(len(v)), Data: b}
}

// Long is a LONG field.
func Long(tag uint16, v ...uint32) Field {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.BigEndian.AppendUint32(b, x)
	}
	return Field{Tag: tag, Type: TypeLong, Count: uint32(len(v)), Data: b}
}

// Rational is an unsigned EXIF rational. A zero Den is allowed on purpose.
type Rational struct{ Num, Den uint32 }

// Rationals is a RATIONAL field.
func Rationals(tag uint16, v ...Rational) Field {
	b := make([]byte, 0, 8*len(v))
	for _, r := range v {
		b = binary.BigEndian.AppendUint32(b, r.Num)
		b = binary.BigEndian.AppendUint32(b, r.Den)
	}
	return Field{Tag: tag, Type: TypeRational, Count: uint32(len(v)), Data: b}
}

// Raw is a field whose value/offset word is written as given, with no data:
// for an offset outside the block or a count the block cannot hold.
func Raw(tag, typ uint16, count, offset uint32) Field {
	return Field{Tag: tag, Type: typ, Count: count, Offset: &offset}
}

// TIFF describes an EXIF block: IFD0 with its Exif and GPS sub-IFDs and an
// optional IFD1 (the thumbnail IFD).
type TIFF struct {
	BigEndian bool
	IFD0      []Field
	Exif      []Field // nil: no Exif IFD and no pointer to it
	GPS       []Field // nil: no GPS IFD and no pointer to it
	IFD1      []Field // nil: IFD0 ends the chain
}

// Bytes lays the block out the way cameras do: header, IFD0 and its
// out-of-line values, then each sub-IFD with its values, then IFD1.
func (t TIFF) Bytes() []byte {
	var order binary.AppendByteOrder = binary.LittleEndian
	head := []byte("II*\x00\x08\x00\x00\x00")
	if t.BigEndian {
		order = binary.BigEndian
		head = []byte("MM\x00*\x00\x00\x00\x08")
	}
	ifd0 := append([]Field(nil), t.IFD0...)
	if t.Exif != nil && !hasTag(ifd0, TagExifIFD) {
		ifd0 = append(ifd0, Long(TagExifIFD, 0))
	}
	if t.GPS != nil && !hasTag(ifd0, TagGPSIFD) {
		ifd0 = append(ifd0, Long(TagGPSIFD, 0))
	}
	// IFDs in file order; a nil list is skipped.
	lists := [][]Field{ifd0, t.Exif, t.GPS, t.IFD1}
	offsets := make([]uint32, len(lists))
	pos := uint32(len(head))
	for i, l := range lists {
		if l == nil {
			continue
		}
		offsets[i] = pos
		pos += ifdSize(l)
	}
	// Fill in the links the builder owns.
	for i, f := range ifd0 {
		if f.Offset != nil || f.Data == nil {
			continue
		}
		switch {
		case f.Tag == TagExifIFD && t.Exif != nil && len(f.Data) == 4 && binary.BigEndian.Uint32(f.Data) == 0:
			ifd0[i] = Long(TagExifIFD, offsets[1])
		case f.Tag == TagGPSIFD && t.GPS != nil && len(f.Data) == 4 && binary.BigEndian.Uint32(f.Data) == 0:
			ifd0[i] = Long(TagGPSIFD, offsets[2])
		}
	}
	lists[0] = ifd0
	out := append([]byte(nil), head...)
	for i, l := range lists {
		if l == nil {
			continue
		}
		next := uint32(0)
		if i == 0 && t.IFD1 != nil {
			next = offsets[3]
		}
		out = appendIFD(out, order, l, next)
	}
	return out
}

func hasTag(fs []Field, tag uint16) bool {
	for _, f := range fs {
		if f.Tag == tag {
			return true
		}
	}
	return false
}

// ifdSize is the IFD's entry table plus its out-of-line values, each padded
// to an even length as TIFF requires.
func ifdSize(fs []Field) uint32 {
	n := uint32(2 + 12*len(fs) + 4)
	for _, f := range fs {
		if f.Offset == nil && len(f.Data) > 4 {
			n += uint32(len(f.Data) + len(f.Data)%2)
		}
	}
	return n
}

func appendIFD(out []byte, order binary.AppendByteOrder, fs []Field, next uint32) []byte {
	start := uint32(len(out))
	data := start + uint32(2+12*len(fs)+4)
	out = order.AppendUint16(out, uint16(len(fs)))
	var tail []byte
	for _, f := range fs {
		out = order.AppendUint16(out, f.Tag)
		out = order.AppendUint16(out, f.Type)
		out = order.AppendUint32(out, f.Count)
		v := convert(order, f.Type, f.Data)
		switch {
		case f.Offset != nil:
			out = order.AppendUint32(out, *f.Offset)
		case len(v) <= 4:
			var word [4]byte
			copy(word[:], v)
			out = append(out, word[:]...)
		default:
			out = order.AppendUint32(out, data+uint32(len(tail)))
			tail = append(tail, v...)
			if len(v)%2 == 1 {
				tail = append(tail, 0)
			}
		}
	}
	out = order.AppendUint32(out, next)
	return append(out, tail...)
}

// convert re-encodes big-endian field data in the block's byte order.
func convert(order binary.AppendByteOrder, typ uint16, be []byte) []byte {
	unit := 1
	switch typ {
	case TypeShort:
		unit = 2
	case TypeLong, TypeRational, TypeSRational:
		unit = 4
	}
	if unit == 1 || order == binary.BigEndian {
		return be
	}
	out := make([]byte, len(be))
	for i := 0; i+unit <= len(be); i += unit {
		for j := range unit {
			out[i+j] = be[i+unit-1-j]
		}
	}
	return out
}

// GPS tags (EXIF 2.32 section 4.6.6).
const (
	TagGPSVersionID       uint16 = 0x0000
	TagGPSLatitudeRef     uint16 = 0x0001
	TagGPSLatitude        uint16 = 0x0002
	TagGPSLongitudeRef    uint16 = 0x0003
	TagGPSLongitude       uint16 = 0x0004
	TagGPSAltitudeRef     uint16 = 0x0005
	TagGPSAltitude        uint16 = 0x0006
	TagGPSStatus          uint16 = 0x0009
	TagGPSImgDirectionRef uint16 = 0x0010
	TagGPSImgDirection    uint16 = 0x0011
)

// Other tags the photos carry.
const (
	TagImageWidth         uint16 = 0x0100
	TagImageLength        uint16 = 0x0101
	TagMake               uint16 = 0x010f
	TagModel              uint16 = 0x0110
	TagDateTime           uint16 = 0x0132
	TagDateTimeOriginal   uint16 = 0x9003
	TagOffsetTimeOriginal uint16 = 0x9011
	TagPixelXDimension    uint16 = 0xa002
	TagPixelYDimension    uint16 = 0xa003
	TagThumbnailOffset    uint16 = 0x0201
	TagThumbnailLength    uint16 = 0x0202
)

// DMS turns decimal degrees (sign ignored) into the degrees, minutes and
// seconds rationals EXIF stores, seconds to a thousandth.
func DMS(deg float64) [3]Rational {
	if deg < 0 {
		deg = -deg
	}
	ms := uint64(deg*3_600_000 + 0.5)
	d := ms / 3_600_000
	m := ms / 60_000 % 60
	s := ms % 60_000
	return [3]Rational{{uint32(d), 1}, {uint32(m), 1}, {uint32(s), 1000}}
}

// Photo is what a phone writes, in terms a test states directly.
type Photo struct {
	BigEndian          bool
	Make, Model        string
	DateTimeOriginal   string // "2006:01:02 15:04:05"; empty: absent
	OffsetTimeOriginal string // "+02:00"; empty: absent
	Width, Height      uint32 // PixelX/YDimension; zero: absent
	GPS                *GPS   // nil: no GPS IFD
}

// GPS is a GPS IFD in terms of decimal degrees; the hemisphere references
// come from the signs unless set.
type GPS struct {
	Lat, Lon      float64
	Altitude      *float64 // metres; negative is below sea level
	Direction     *float64 // degrees, true north
	Status        string   // "A", "V" or empty for absent
	OmitLatLon    bool     // a GPS block without a fix
	LatRef        string   // overrides the sign-derived "N"/"S"
	LatRationals  *[3]Rational
	LonRationals  *[3]Rational
	ExtraGPSField []Field
}

// TIFF is the photo's EXIF block.
func (p Photo) TIFF() TIFF {
	t := TIFF{BigEndian: p.BigEndian}
	if p.Make != "" {
		t.IFD0 = append(t.IFD0, ASCII(TagMake, p.Make))
	}
	if p.Model != "" {
		t.IFD0 = append(t.IFD0, ASCII(TagModel, p.Model))
	}
	if p.DateTimeOriginal != "" || p.OffsetTimeOriginal != "" || p.Width != 0 {
		t.Exif = []Field{}
		if p.DateTimeOriginal != "" {
			t.Exif = append(t.Exif, ASCII(TagDateTimeOriginal, p.DateTimeOriginal))
		}
		if p.OffsetTimeOriginal != "" {
			t.Exif = append(t.Exif, ASCII(TagOffsetTimeOriginal, p.OffsetTimeOriginal))
		}
		if p.Width != 0 {
			t.Exif = append(t.Exif, Long(TagPixelXDimension, p.Width), Long(TagPixelYDimension, p.Height))
		}
	}
	if g := p.GPS; g != nil {
		t.GPS = []Field{Bytes(TagGPSVersionID, 2, 3, 0, 0)}
		if !g.OmitLatLon {
			latRef, lonRef := "N", "E"
			if g.Lat < 0 {
				latRef = "S"
			}
			if g.Lon < 0 {
				lonRef = "W"
			}
			if g.LatRef != "" {
				latRef = g.LatRef
			}
			lat, lon := DMS(g.Lat), DMS(g.Lon)
			if g.LatRationals != nil {
				lat = *g.LatRationals
			}
			if g.LonRationals != nil {
				lon = *g.LonRationals
			}
			t.GPS = append(t.GPS,
				ASCII(TagGPSLatitudeRef, latRef), Rationals(TagGPSLatitude, lat[:]...),
				ASCII(TagGPSLongitudeRef, lonRef), Rationals(TagGPSLongitude, lon[:]...))
		}
		if g.Altitude != nil {
			ref, a := byte(0), *g.Altitude
			if a < 0 {
				ref, a = 1, -a
			}
			t.GPS = append(t.GPS, Bytes(TagGPSAltitudeRef, ref), Rationals(TagGPSAltitude, Rational{uint32(a*100 + 0.5), 100}))
		}
		if g.Status != "" {
			t.GPS = append(t.GPS, ASCII(TagGPSStatus, g.Status))
		}
		if g.Direction != nil {
			t.GPS = append(t.GPS, ASCII(TagGPSImgDirectionRef, "T"), Rationals(TagGPSImgDirection, Rational{uint32(*g.Direction*100 + 0.5), 100}))
		}
		t.GPS = append(t.GPS, g.ExtraGPSField...)
	}
	return t
}

// Bytes is the photo's EXIF block encoded.
func (p Photo) Bytes() []byte { return p.TIFF().Bytes() }

// String names the photo in test output.
func (p Photo) String() string {
	if p.GPS == nil {
		return fmt.Sprintf("%s %s, no GPS", p.Make, p.Model)
	}
	return fmt.Sprintf("%s %s at %.5f,%.5f", p.Make, p.Model, p.GPS.Lat, p.GPS.Lon)
}

// Harbour is the sample photo used across tests: Hamburg harbour at dusk,
// taken on a phone with a full GPS fix, time zone and camera names.
func Harbour() Photo {
	alt, dir := 12.5, 287.25
	return Photo{
		Make:               "Geolocate",
		Model:              "Test Phone 15",
		DateTimeOriginal:   "2024:06:01 21:42:05",
		OffsetTimeOriginal: "+02:00",
		Width:              80, Height: 60,
		GPS: &GPS{Lat: 53.54389, Lon: 9.96611, Altitude: &alt, Direction: &dir, Status: "A"},
	}
}
