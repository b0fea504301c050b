package photoexif

import (
	"bytes"
	"encoding/binary"
)

// locatePNG walks the chunks for eXIf, up to IEND. The extension puts eXIf
// before IDAT, but writers differ, so the walk goes on past the image data.
func locatePNG(data []byte) ([]byte, error) {
	pos := 8 // signature
	for {
		if pos+8 > len(data) {
			return nil, need(pos, "PNG chunk header")
		}
		n := int(binary.BigEndian.Uint32(data[pos:]))
		typ := string(data[pos+4 : pos+8])
		start := pos + 8
		end := start + n
		if n < 0 || n > 1<<31-1 {
			return nil, problemf(ReasonMalformed, "PNG: chunk %q of %d bytes at byte %d", typ, n, pos)
		}
		switch typ {
		case "eXIf":
			if end > len(data) {
				return nil, need(len(data), "the eXIf chunk")
			}
			return bytes.TrimPrefix(data[start:end], exifHeader), nil
		case "IEND":
			return nil, problemf(ReasonNoEXIF, "PNG has no eXIf chunk")
		}
		pos = end + 4 // CRC
	}
}
