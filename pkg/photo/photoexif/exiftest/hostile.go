package exiftest

import "encoding/binary"

// GPS IFD tags a reader decodes (EXIF 2.32 table 15): latitude and
// longitude with their references, altitude and its reference, status, and
// the image direction with its reference.
var gpsTagsRead = []uint16{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x09, 0x10, 0x11}

// AmplifyingGPS is an EXIF block of size bytes (at least 64) built to make
// a reader work far beyond its size: IFD0 points to a GPS IFD of entries
// entries (0 or less: as many as the block holds), and every entry is a
// RATIONAL array whose values span the whole block (offset 8, count
// (size-8)/8), so a reader that decodes each entry does O(size) work per
// 12-byte entry, O(size²) in all. The
// entries cycle through the nine GPS tags a reader uses and tags it does
// not, so that decoding only the used tags is not enough on its own.
//
// With size 250 KiB in a PNG eXIf chunk, or 64 KiB in a JPEG APP1 segment,
// these are the amplification cases of issue 23.
func AmplifyingGPS(size, entries int) []byte {
	size = max(size, 64)
	b := make([]byte, 0, size)
	b = append(b, "II*\x00\x08\x00\x00\x00"...)
	// IFD0: one entry, the GPS IFD pointer, then no next IFD.
	const gpsAt = 8 + 2 + 12 + 4
	b = binary.LittleEndian.AppendUint16(b, 1)
	b = appendEntry(b, TagGPSIFD, TypeLong, 1, gpsAt)
	b = binary.LittleEndian.AppendUint32(b, 0)
	n := (size - gpsAt - 2 - 4) / 12
	if entries > 0 {
		n = min(n, entries)
	}
	count := uint32(size-8) / 8
	b = binary.LittleEndian.AppendUint16(b, uint16(min(n, 0xFFFF)))
	for i := range min(n, 0xFFFF) {
		tag := uint16(0x1000 + i)
		if i%2 == 0 {
			tag = gpsTagsRead[(i/2)%len(gpsTagsRead)]
		}
		b = appendEntry(b, tag, TypeRational, count, 8)
	}
	b = binary.LittleEndian.AppendUint32(b, 0)
	// Whatever is left is value bytes: 1/1 rationals.
	for len(b)+8 <= size {
		b = binary.LittleEndian.AppendUint32(b, 1)
		b = binary.LittleEndian.AppendUint32(b, 1)
	}
	for len(b) < size {
		b = append(b, 0)
	}
	return b
}

func appendEntry(b []byte, tag, typ uint16, count, value uint32) []byte {
	b = binary.LittleEndian.AppendUint16(b, tag)
	b = binary.LittleEndian.AppendUint16(b, typ)
	b = binary.LittleEndian.AppendUint32(b, count)
	return binary.LittleEndian.AppendUint32(b, value)
}
