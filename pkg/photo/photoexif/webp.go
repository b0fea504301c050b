package photoexif

import (
	"bytes"
	"encoding/binary"
)

// locateWebP walks the RIFF chunks for the EXIF chunk. The specification
// puts it after the image data, so in a large WebP it is usually beyond a
// streaming head; the VP8X flags say up front whether there is one at all.
func locateWebP(data []byte) ([]byte, error) {
	pos := 12 // "RIFF" size "WEBP"
	extended := false
	for {
		if pos+8 > len(data) {
			if pos >= len(data) && !extended {
				return nil, problemf(ReasonNoEXIF, "WebP has no EXIF chunk")
			}
			return nil, need(pos, "WebP chunk header")
		}
		fourcc := string(data[pos : pos+4])
		n := int(binary.LittleEndian.Uint32(data[pos+4:]))
		start := pos + 8
		end := start + n
		if n < 0 || end < start {
			return nil, problemf(ReasonMalformed, "WebP: chunk %q of %d bytes at byte %d", fourcc, n, pos)
		}
		switch fourcc {
		case "VP8X":
			if start+1 > len(data) {
				return nil, need(start, "the VP8X chunk")
			}
			if data[start]&0x08 == 0 {
				return nil, problemf(ReasonNoEXIF, "WebP VP8X flags declare no EXIF")
			}
			extended = true
		case "VP8 ", "VP8L":
			if !extended {
				return nil, problemf(ReasonNoEXIF, "simple-format WebP cannot carry EXIF")
			}
		case "EXIF":
			if end > len(data) {
				return nil, need(len(data), "the EXIF chunk")
			}
			// Some writers keep the JPEG "Exif\0\0" prefix.
			return bytes.TrimPrefix(data[start:end], exifHeader), nil
		}
		pos = end + n%2
	}
}
