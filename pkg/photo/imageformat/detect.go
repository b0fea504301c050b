package imageformat

import (
	"bytes"
	"encoding/binary"
)

// Detect reports the format of an image from its first bytes. It needs at
// least MinHeaderBytes and looks at no more than SniffBytes. Empty input, a
// truncated header and text are reported as not an image.
func Detect(head []byte) (Format, bool) {
	if len(head) < MinHeaderBytes {
		return Format{}, false
	}
	if len(head) > SniffBytes {
		head = head[:SniffBytes]
	}
	switch {
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return JPEG, true
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return PNG, true
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return GIF, true
	case bytes.HasPrefix(head, []byte("RIFF")) && string(head[8:12]) == "WEBP":
		return WebP, true
	case bytes.HasPrefix(head, []byte("II*\x00")), bytes.HasPrefix(head, []byte("MM\x00*")):
		return TIFF, true
	case isBMP(head):
		return BMP, true
	}
	return detectISOBMFF(head)
}

// isBMP checks more than the two-letter "BM" signature, which plain text can
// start with: the reserved header words must be zero and the DIB header size
// must be one of the sizes the format defines.
func isBMP(head []byte) bool {
	if !bytes.HasPrefix(head, []byte("BM")) {
		return false
	}
	if binary.LittleEndian.Uint32(head[6:10]) != 0 {
		return false
	}
	switch binary.LittleEndian.Uint32(head[14:18]) {
	case 12, 16, 40, 52, 56, 64, 108, 124:
		return true
	}
	return false
}

// detectISOBMFF recognises HEIC, HEIF and AVIF, which are ISO base media
// files whose first box is "ftyp"; the major and compatible brands say which.
func detectISOBMFF(head []byte) (Format, bool) {
	if string(head[4:8]) != "ftyp" {
		return Format{}, false
	}
	boxSize := int(binary.BigEndian.Uint32(head[0:4]))
	if boxSize < 16 || boxSize%4 != 0 {
		return Format{}, false
	}
	end := min(boxSize, len(head))
	// The major brand sits at 8..12, the minor version at 12..16 and the
	// compatible brands follow. A HEIF container holding HEVC or AV1 images
	// often has "mif1" as major brand, so every brand is checked and the most
	// specific answer wins.
	best, found := Format{}, false
	for i := 8; i+4 <= end; i += 4 {
		if i == 12 {
			continue
		}
		f, ok := formatForBrand(string(head[i : i+4]))
		if ok && (!found || specificity(f) > specificity(best)) {
			best, found = f, true
		}
	}
	return best, found
}

func specificity(f Format) int {
	switch f {
	case AVIF, HEIC:
		return 2
	case HEIF:
		return 1
	}
	return 0
}

func formatForBrand(brand string) (Format, bool) {
	switch brand {
	case "heic", "heix", "hevc", "hevx":
		return HEIC, true
	case "mif1", "msf1", "heim", "heis":
		return HEIF, true
	case "avif", "avis":
		return AVIF, true
	}
	return Format{}, false
}
