package photoexif

import (
	"bytes"
	"encoding/binary"
)

var exifHeader = []byte("Exif\x00\x00")

// locateJPEG walks the marker segments from SOI to the first SOS and returns
// the TIFF block of the first APP1 Exif segment. EXIF must precede the scan
// data, so reaching SOS means there is none.
func locateJPEG(data []byte) ([]byte, error) {
	pos := 2 // after SOI
	for {
		if pos+2 > len(data) {
			return nil, need(pos, "JPEG segment header")
		}
		if data[pos] != 0xFF {
			return nil, problemf(ReasonMalformed, "JPEG: no marker at byte %d", pos)
		}
		marker := data[pos+1]
		switch {
		case marker == 0xFF: // fill byte
			pos++
			continue
		case marker == 0xD8 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7):
			pos += 2 // markers without a length
			continue
		case marker == 0xD9 || marker == 0xDA: // EOI, SOS
			return nil, problemf(ReasonNoEXIF, "JPEG has no APP1 Exif segment before its image data")
		}
		if pos+4 > len(data) {
			return nil, need(pos, "JPEG segment header")
		}
		n := int(binary.BigEndian.Uint16(data[pos+2:]))
		if n < 2 {
			return nil, problemf(ReasonMalformed, "JPEG: segment length %d at byte %d", n, pos)
		}
		end := pos + 2 + n
		if marker == 0xE1 && pos+4+len(exifHeader) <= len(data) && bytes.Equal(data[pos+4:pos+4+len(exifHeader)], exifHeader) {
			// The segment's own length bounds the block, not the bytes
			// that follow: a length shorter than the Exif header would
			// slice backwards.
			if n < 2+len(exifHeader) {
				return nil, problemf(ReasonMalformed, "JPEG: APP1 segment of %d bytes at byte %d is shorter than its Exif header", n, pos)
			}
			if end > len(data) {
				return nil, need(len(data), "the APP1 Exif segment")
			}
			return data[pos+4+len(exifHeader) : end], nil
		}
		if marker == 0xE1 && pos+4+len(exifHeader) > len(data) && end > len(data) {
			return nil, need(len(data), "an APP1 segment")
		}
		pos = end
	}
}
