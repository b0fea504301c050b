package photoexif

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"

	exif "github.com/dsoprea/go-exif/v3"
	exifcommon "github.com/dsoprea/go-exif/v3/common"
)

// The go-exif tag index and IFD mapping are built once and shared; both are
// read-only after construction (the index locks its lazy loading).
var library = sync.OnceValues(func() (*exifcommon.IfdMapping, error) {
	return exifcommon.NewIfdMappingWithStandard()
})

var tagIndex = exif.NewTagIndex()

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

// readEXIF checks the block's structure, then has go-exif decode the tags
// the pipeline records, and fills m. On error m keeps what was read.
func readEXIF(m *Meta, block []byte, lim limits) error {
	layout, err := checkLayout(block, lim)
	if err != nil && layout.ifd0 == 0 {
		return err
	}
	tags, libErr := visit(block)
	m.CameraMake, m.CameraModel = tags.make, tags.model
	m.Captured, m.CapturedZoneKnown = capturedAt(tags.dateTimeOriginal, tags.subSec, tags.offsetTimeOriginal)
	if err != nil {
		return err
	}
	if libErr != nil {
		return problemf(ReasonMalformed, "decoding IFDs: %v", libErr)
	}
	if !layout.hasGPS {
		m.GPSProblem = problemf(ReasonNoGPS, "EXIF has no GPS block")
		return nil
	}
	tags.gps.types = layout.gpsTypes
	m.GPS, m.GPSProblem = gpsFrom(&tags.gps)
	return nil
}

// layout is what the structural check learned.
type layout struct {
	ifd0     uint32 // 0 when IFD0 itself is unusable
	hasGPS   bool
	gpsTypes map[uint16]uint16 // GPS tag -> TIFF type, as written
}

// checkLayout validates the TIFF header, IFD0 and the Exif and GPS IFDs it
// points to: every offset inside the block and every entry table within it.
// go-exif would either skip such IFDs silently or fail the whole block with
// a generic error; checking first gives each case its own reason.
func checkLayout(b []byte, lim limits) (layout, error) {
	var l layout
	if len(b) < 8 {
		return l, lim.outside(ReasonTruncated, int64(len(b)), fmt.Sprintf("TIFF header (EXIF block of %d bytes)", len(b)))
	}
	var order binary.ByteOrder
	switch string(b[:4]) {
	case "II*\x00":
		order = binary.LittleEndian
	case "MM\x00*":
		order = binary.BigEndian
	default:
		return l, problemf(ReasonMalformed, "EXIF block does not start with a TIFF header")
	}
	ifd0 := order.Uint32(b[4:])
	if err := checkIFD(b, order, ifd0, "IFD0", lim); err != nil {
		return l, err
	}
	l.ifd0 = ifd0
	var exifAt, gpsAt uint32
	n := int(order.Uint16(b[ifd0:]))
	for i := range n {
		e := b[int(ifd0)+2+12*i:]
		switch order.Uint16(e) {
		case tagExifIFD:
			exifAt = order.Uint32(e[8:])
		case tagGPSIFD:
			gpsAt, l.hasGPS = order.Uint32(e[8:]), true
		}
	}
	if exifAt != 0 {
		if err := checkIFD(b, order, exifAt, "Exif IFD", lim); err != nil {
			return l, err
		}
	}
	if l.hasGPS {
		if err := checkIFD(b, order, gpsAt, "GPS IFD", lim); err != nil {
			return l, err
		}
		l.gpsTypes = map[uint16]uint16{}
		n := int(order.Uint16(b[gpsAt:]))
		for i := range n {
			e := b[int(gpsAt)+2+12*i:]
			l.gpsTypes[order.Uint16(e)] = order.Uint16(e[2:])
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
	size := 2 + 12*n + 4
	if uint64(at)+size > uint64(len(b)) {
		return lim.outside(ReasonIFDCount, int64(at)+int64(size),
			fmt.Sprintf("%s declares %d entries (%d bytes) at byte %d, but the EXIF block holds %d bytes", name, n, size, at, len(b)))
	}
	return nil
}

// tags holds the raw values the pipeline uses, as written.
type tags struct {
	make, model                          string
	dateTimeOriginal, offsetTimeOriginal string
	subSec                               string
	gps                                  gpsTags
}

// errStop ends the walk at IFD1 (the thumbnail IFD), which holds nothing the
// pipeline uses. It also keeps go-exif from reading the thumbnail, which it
// allocates at the size IFD1 declares before checking it: a 200-byte block
// claiming a 4 GB thumbnail would otherwise allocate 4 GB.
var errStop = errors.New("photoexif: stop at IFD1")

// visit runs go-exif over the block. The library reports errors by panicking
// and recovering internally, and re-panics when it recovers a value that is
// not an error; the recover here makes sure nothing escapes.
func visit(block []byte) (t tags, err error) {
	mapping, err := library()
	if err != nil {
		return t, fmt.Errorf("loading the EXIF IFD mapping: %w", err)
	}
	stopped := false
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("EXIF library panic: %v", r)
		}
	}()
	_, _, err = exif.Visit(exifcommon.IfdStandardIfdIdentity, mapping, tagIndex, block, func(ite *exif.IfdTagEntry) error {
		if ite.IfdIdentity().Index() > 0 { // IFD1, or a second IFD anywhere
			stopped = true
			return errStop
		}
		t.record(ite, len(block))
		return nil
	}, nil)
	if stopped {
		err = nil
	}
	return t, err
}

// record keeps the tags the pipeline uses. A value declared larger than the
// whole block is not read: go-exif would allocate it before failing.
func (t *tags) record(ite *exif.IfdTagEntry, blockLen int) {
	path, id := ite.IfdPath(), ite.TagId()
	wanted := false
	switch path {
	case "IFD":
		wanted = id == tagMake || id == tagModel
	case "IFD/Exif":
		wanted = id == tagDateTimeOriginal || id == tagOffsetTimeOriginal || id == tagSubSecTimeOriginal
	case "IFD/GPSInfo":
		wanted = true
	}
	if !wanted {
		return
	}
	if uint64(ite.UnitCount())*uint64(ite.TagType().Size()) > uint64(blockLen) {
		if path == "IFD/GPSInfo" {
			t.gps.bad(id, fmt.Sprintf("declares %d values, more than the EXIF block holds", ite.UnitCount()))
		}
		return
	}
	v, err := ite.Value()
	if err != nil {
		if path == "IFD/GPSInfo" {
			t.gps.bad(id, "value outside the EXIF block")
		}
		return
	}
	switch path {
	case "IFD":
		if id == tagMake {
			t.make = ascii(v)
		} else {
			t.model = ascii(v)
		}
	case "IFD/Exif":
		switch id {
		case tagDateTimeOriginal:
			t.dateTimeOriginal = ascii(v)
		case tagOffsetTimeOriginal:
			t.offsetTimeOriginal = ascii(v)
		case tagSubSecTimeOriginal:
			t.subSec = ascii(v)
		}
	case "IFD/GPSInfo":
		t.gps.set(id, v)
	}
}

// ascii returns an ASCII value without padding; anything else is "".
func ascii(v any) string {
	s, _ := v.(string)
	return strings.TrimRight(s, "\x00 ")
}
