package metastrip

import (
	"bytes"
	"encoding/binary"
)

// tagOrientation is EXIF/TIFF tag 0x0112: how the stored pixels must be
// turned to show the photo upright (1 to 8).
const tagOrientation = 0x0112

// minimalEXIFLen is the size of the block minimalEXIF writes: the TIFF
// header (8), one IFD of one entry (2 + 12) and the next-IFD link (4).
const minimalEXIFLen = 26

// orientation reads the Orientation tag from IFD0 of a TIFF block (an EXIF
// block without its "Exif\0\0" prefix). It returns 0 when the block has no
// readable IFD0 or no valid Orientation, so a damaged block never stops the
// photo: it only loses its orientation.
func orientation(tiff []byte) int {
	if len(tiff) < 8 {
		return 0
	}
	var order binary.ByteOrder
	switch {
	case bytes.HasPrefix(tiff, []byte("II*\x00")):
		order = binary.LittleEndian
	case bytes.HasPrefix(tiff, []byte("MM\x00*")):
		order = binary.BigEndian
	default:
		return 0
	}
	ifd := int64(order.Uint32(tiff[4:8]))
	if ifd < 8 || ifd+2 > int64(len(tiff)) {
		return 0
	}
	count := int64(order.Uint16(tiff[ifd:]))
	for i := range count {
		e := ifd + 2 + 12*i
		if e+12 > int64(len(tiff)) {
			return 0
		}
		if order.Uint16(tiff[e:]) != tagOrientation {
			continue
		}
		// SHORT (3), one value, held in the entry itself.
		if order.Uint16(tiff[e+2:]) != 3 || order.Uint32(tiff[e+4:]) != 1 {
			return 0
		}
		if v := int(order.Uint16(tiff[e+8:])); v >= 1 && v <= 8 {
			return v
		}
		return 0
	}
	return 0
}

// minimalEXIF is the EXIF block (TIFF, big-endian) that replaces a photo's
// own: IFD0 holding one entry, Orientation, nothing else. Orientation is kept
// because it changes how the picture is shown: without it a phone photo
// taken upright is shown on its side by every viewer that honours it. Its
// eight values say how the phone was held, which identifies no one, no place
// and no time. A block without a valid Orientation gets 1 (upright, the
// default a missing tag means), so the picture is shown as before.
func minimalEXIF(o int) []byte {
	if o < 1 || o > 8 {
		o = 1
	}
	b := make([]byte, 0, minimalEXIFLen)
	b = append(b, "MM\x00*"...)
	b = binary.BigEndian.AppendUint32(b, 8)
	b = binary.BigEndian.AppendUint16(b, 1)
	b = binary.BigEndian.AppendUint16(b, tagOrientation)
	b = binary.BigEndian.AppendUint16(b, 3) // SHORT
	b = binary.BigEndian.AppendUint32(b, 1)
	b = binary.BigEndian.AppendUint16(b, uint16(o))
	b = append(b, 0, 0)                        // the value field's unused half
	return binary.BigEndian.AppendUint32(b, 0) // no IFD1: no thumbnail
}

// replaceEXIF returns n bytes to put in place of an EXIF block: prefix (the
// container's own header of the block, if any), the minimal block with the
// orientation read from tiff (the block's peeked TIFF bytes), then zeros;
// n zero bytes when n is too short for that. It also returns the orientation
// kept (0 when none was written).
func replaceEXIF(tiff, prefix []byte, n int) ([]byte, int) {
	out := make([]byte, n)
	if n < len(prefix)+minimalEXIFLen {
		return out, 0
	}
	o := max(orientation(tiff), 1)
	copy(out, prefix)
	copy(out[len(prefix):], minimalEXIF(o))
	return out, o
}
