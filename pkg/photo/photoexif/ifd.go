package photoexif

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The tags read, by IFD.
const (
	tagMake               = 0x010f
	tagModel              = 0x0110
	tagExifIFD            = 0x8769
	tagGPSIFD             = 0x8825
	tagDateTimeOriginal   = 0x9003
	tagOffsetTimeOriginal = 0x9011
	tagSubSecTimeOriginal = 0x9291

	gpsLatitudeRef     = 0x01
	gpsLatitude        = 0x02
	gpsLongitudeRef    = 0x03
	gpsLongitude       = 0x04
	gpsAltitudeRef     = 0x05
	gpsAltitude        = 0x06
	gpsStatus          = 0x09
	gpsImgDirectionRef = 0x10
	gpsImgDirection    = 0x11
)

// readEXIF checks the block's structure, then decodes the tags the
// pipeline records, and fills m. On error m keeps what was read.
func readEXIF(m *Meta, block []byte, lim limits) error {
	layout, err := checkLayout(block, lim)
	if err != nil && layout.ifd0 == 0 {
		return err
	}
	tags := visit(block, layout)
	m.CameraMake, m.CameraModel = tags.make, tags.model
	m.Captured, m.CapturedZoneKnown = capturedAt(tags.dateTimeOriginal, tags.subSec, tags.offsetTimeOriginal)
	if err != nil {
		return err
	}
	if !layout.hasGPS {
		m.GPSProblem = problemf(ReasonNoGPS, "EXIF has no GPS block")
		return nil
	}
	m.GPS, m.GPSProblem = gpsFrom(&tags.gps)
	return nil
}

// layout is what the structural check learned.
type layout struct {
	order binary.ByteOrder
	ifd0  uint32 // 0 when IFD0 itself is unusable
	// exifAt and gpsAt are the Exif and GPS IFDs' offsets as IFD0 gives
	// them (0: none), whether or not they passed the check.
	exifAt, gpsAt uint32
	hasGPS        bool
}

// Bounds on the work one block can ask for. An IFD's entries are walked
// once and only the tags in tags are decoded, each at most at the size its
// meaning allows, so parsing a head costs time and memory proportional to
// the head, never to what its counts declare (issue 23: a 250 KiB block
// whose GPS entries were RATIONAL arrays spanning the block cost 11 GB of
// allocation when every entry was decoded in full).
const (
	// maxIFDEntries is the most entries an IFD may declare. Cameras write
	// a few dozen per IFD (the GPS IFD defines 32 tags); maker notes, the
	// long ones, live in their own IFD, which is never read.
	maxIFDEntries = 1024
	// maxTextBytes is the most of an ASCII value kept. Makes, models,
	// times and offsets are under 40 bytes; anything longer is cut here,
	// so that no hostile string reaches a record or a log line whole.
	maxTextBytes = 128
)

// checkLayout validates the TIFF header, IFD0 and the Exif and GPS IFDs it
// points to: every offset inside the block and every entry table within it,
// so each case gets its own reason.
func checkLayout(b []byte, lim limits) (layout, error) {
	var l layout
	if len(b) < 8 {
		return l, lim.outside(ReasonTruncated, int64(len(b)), fmt.Sprintf("TIFF header (EXIF block of %d bytes)", len(b)))
	}
	order, ok := byteOrder(b)
	if !ok {
		return l, problemf(ReasonMalformed, "EXIF block does not start with a TIFF header")
	}
	l.order = order
	ifd0 := order.Uint32(b[4:])
	if err := checkIFD(b, order, ifd0, "IFD0", lim); err != nil {
		return l, err
	}
	l.ifd0 = ifd0
	eachEntry(b, order, ifd0, func(e []byte) {
		switch order.Uint16(e) {
		case tagExifIFD:
			l.exifAt = order.Uint32(e[8:])
		case tagGPSIFD:
			l.gpsAt, l.hasGPS = order.Uint32(e[8:]), true
		}
	})
	if l.exifAt != 0 {
		if err := checkIFD(b, order, l.exifAt, "Exif IFD", lim); err != nil {
			return l, err
		}
	}
	if l.hasGPS {
		if err := checkIFD(b, order, l.gpsAt, "GPS IFD", lim); err != nil {
			return l, err
		}
	}
	return l, nil
}

func checkIFD(b []byte, order binary.ByteOrder, at uint32, name string, lim limits) error {
	if at < 8 || uint64(at)+2 > uint64(len(b)) {
		return lim.outside(ReasonOffsetOutside, int64(at),
			fmt.Sprintf("%s at byte %d, outside the %d-byte EXIF block", name, at, len(b)))
	}
	n := uint64(order.Uint16(b[at:]))
	if n > maxIFDEntries {
		return problemf(ReasonIFDCount, "%s declares %d entries, more than the %d read", name, n, maxIFDEntries)
	}
	size := 2 + 12*n + 4
	if uint64(at)+size > uint64(len(b)) {
		return lim.outside(ReasonIFDCount, int64(at)+int64(size),
			fmt.Sprintf("%s declares %d entries (%d bytes) at byte %d, but the EXIF block holds %d bytes", name, n, size, at, len(b)))
	}
	return nil
}

// eachEntry calls fn with each 12-byte entry of the IFD at at, if the
// whole table lies within b and declares at most maxIFDEntries; otherwise
// with none (checkIFD says why).
func eachEntry(b []byte, order binary.ByteOrder, at uint32, fn func(e []byte)) {
	if at < 8 || uint64(at)+2 > uint64(len(b)) {
		return
	}
	n := uint64(order.Uint16(b[at:]))
	if n > maxIFDEntries || uint64(at)+2+12*n > uint64(len(b)) {
		return
	}
	for i := range n {
		fn(b[uint64(at)+2+12*i:][:12])
	}
}

// tags holds the raw values the pipeline uses, as written.
type tags struct {
	make, model                          string
	dateTimeOriginal, offsetTimeOriginal string
	subSec                               string
	gps                                  gpsTags
}

// TIFF field types (TIFF 6.0, section 2, and EXIF 2.3, 4.6.2).
const (
	typeByte      = 1
	typeASCII     = 2
	typeShort     = 3
	typeLong      = 4
	typeRational  = 5
	typeUndefined = 7
	typeSRational = 10
)

// typeSize is the size in bytes of one value of each TIFF type.
var typeSize = map[uint16]uint64{1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8}

// visit reads the tags the pipeline records from IFD0, the Exif IFD and the
// GPS IFD that checkLayout found, and nothing else (not IFD1 and its
// thumbnail). It is written here rather than taken from an EXIF library:
// the one that fits (go-exif) links text/template, whose reflective method
// calls make the linker keep every exported method of every type, which
// doubled the predictor's binary (11.8 MB to 21.2 MB, mostly unused AWS SDK
// methods). Every offset and count is checked against the block before it
// is read; an IFD that checkLayout refused is skipped. l.ifd0 must be set.
//
// Only the wanted tags are decoded, each bounded by wanted's maximum
// count: IFD0 and the Exif IFD also hold large values (XMP, maker notes),
// and a hostile GPS IFD can repeat huge arrays, none of which the pipeline
// reads. A tag written twice keeps its last value.
func visit(block []byte, l layout) (t tags) {
	order := l.order
	text := func(at uint32, into map[uint16]*string) {
		eachEntry(block, order, at, func(e []byte) {
			if dst, ok := into[order.Uint16(e)]; ok {
				if v, err := value(block, order, e, maxTextBytes); err == nil {
					*dst = ascii(v)
				}
			}
		})
	}
	text(l.ifd0, map[uint16]*string{tagMake: &t.make, tagModel: &t.model})
	text(l.exifAt, map[uint16]*string{
		tagDateTimeOriginal: &t.dateTimeOriginal, tagOffsetTimeOriginal: &t.offsetTimeOriginal, tagSubSecTimeOriginal: &t.subSec,
	})
	eachEntry(block, order, l.gpsAt, func(e []byte) {
		id := order.Uint16(e)
		most, wanted := gpsMaxCount[id]
		if !wanted {
			return
		}
		t.gps.seen(id, order.Uint16(e[2:]))
		v, err := value(block, order, e, most)
		if err != nil {
			t.gps.bad(id, err.Error())
			return
		}
		t.gps.set(id, v)
	})
	return t
}

// gpsMaxCount is, for each GPS tag read, the most values it is decoded
// with: three rationals for a coordinate, one for altitude and direction,
// and a letter and its NUL for a reference or status. A coordinate with
// more is refused undecoded; a longer text is cut (see value).
var gpsMaxCount = map[uint16]uint64{
	gpsLatitudeRef: 2, gpsLatitude: 3, gpsLongitudeRef: 2, gpsLongitude: 3,
	gpsAltitudeRef: 1, gpsAltitude: 1, gpsStatus: 2, gpsImgDirectionRef: 2, gpsImgDirection: 1,
}

// byteOrder reads the TIFF header's byte order.
func byteOrder(b []byte) (binary.ByteOrder, bool) {
	if len(b) < 8 {
		return nil, false
	}
	switch string(b[:4]) {
	case "II*\x00":
		return binary.LittleEndian, true
	case "MM\x00*":
		return binary.BigEndian, true
	}
	return nil, false
}

// value decodes one IFD entry: ASCII as a string up to its first NUL, BYTE
// and UNDEFINED as bytes, SHORT and LONG as numbers, RATIONAL and SRATIONAL
// as rationals kept as written. Values of up to four bytes sit in the entry
// itself, larger ones at an offset that must lie within the block. Other
// types decode to nil.
//
// most bounds the work: an ASCII value is cut to its first most bytes,
// any other with more than most values is refused undecoded. So one entry
// never costs more than most values, whatever its count declares.
func value(block []byte, order binary.ByteOrder, e []byte, most uint64) (any, error) {
	typ, count := order.Uint16(e[2:]), uint64(order.Uint32(e[4:]))
	size, ok := typeSize[typ]
	if !ok {
		return nil, fmt.Errorf("has unknown TIFF type %d", typ)
	}
	n := size * count
	if n > uint64(len(block)) {
		return nil, fmt.Errorf("declares %d values, more than the EXIF block holds", count)
	}
	if count > most && typ != typeASCII {
		return nil, fmt.Errorf("declares %d values, more than the %d it can have", count, most)
	}
	data := e[8 : 8+min(n, 4)]
	if n > 4 {
		at := uint64(order.Uint32(e[8:]))
		if at+n > uint64(len(block)) {
			return nil, errors.New("value outside the EXIF block")
		}
		data = block[at : at+n]
	}
	switch typ {
	case typeASCII:
		data = data[:min(uint64(len(data)), most)]
		if i := bytes.IndexByte(data, 0); i >= 0 {
			data = data[:i]
		}
		return string(data), nil
	case typeByte, typeUndefined:
		return slices.Clone(data), nil
	case typeShort:
		out := make([]uint16, count)
		for i := range out {
			out[i] = order.Uint16(data[2*i:])
		}
		return out, nil
	case typeLong:
		out := make([]uint32, count)
		for i := range out {
			out[i] = order.Uint32(data[4*i:])
		}
		return out, nil
	case typeRational, typeSRational:
		out := make([]rat, count)
		for i := range out {
			num, den := order.Uint32(data[8*i:]), order.Uint32(data[8*i+4:])
			if typ == typeSRational {
				out[i] = rat{int64(int32(num)), int64(int32(den))}
			} else {
				out[i] = rat{int64(num), int64(den)}
			}
		}
		return out, nil
	}
	return nil, nil
}

// ascii returns an ASCII value without padding; anything else is "".
func ascii(v any) string {
	s, _ := v.(string)
	return strings.TrimRight(s, "\x00 ")
}
