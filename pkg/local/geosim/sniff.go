package geosim

import "bytes"

// sniffHeadBytes is how much of an upload the format check looks at.
const sniffHeadBytes = 512

// isoBrands are the ISO BMFF (ftyp) brands of HEIC, HEIF and AVIF images.
var isoBrands = map[string]bool{
	"heic": true, "heix": true, "hevc": true, "hevx": true, "mif1": true,
	"msf1": true, "heim": true, "heis": true, "avif": true, "avis": true,
}

// sniffFormat names the image format of head by its magic bytes, or returns
// "" when it is not an accepted format. The simulator sniffs on its own
// rather than importing the client's pkg/photo/imageformat, so the two are checked
// against each other instead of sharing a bug.
func sniffFormat(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return "jpeg"
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "gif"
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return "webp"
	case bytes.HasPrefix(head, []byte("II*\x00")), bytes.HasPrefix(head, []byte("MM\x00*")):
		return "tiff"
	case len(head) >= 14 && string(head[:2]) == "BM":
		return "bmp"
	}
	return sniffISOBMFF(head)
}

// sniffISOBMFF checks the major and compatible brands of a leading ftyp box.
func sniffISOBMFF(head []byte) string {
	if len(head) < 16 || string(head[4:8]) != "ftyp" {
		return ""
	}
	size := int(head[0])<<24 | int(head[1])<<16 | int(head[2])<<8 | int(head[3])
	if size < 16 || size > len(head) {
		size = len(head)
	}
	for off := 8; off+4 <= size; off += 4 {
		if off == 12 { // minor version, not a brand
			continue
		}
		if brand := string(head[off : off+4]); isoBrands[brand] {
			if brand == "avif" || brand == "avis" {
				return "avif"
			}
			return "heic"
		}
	}
	return ""
}
