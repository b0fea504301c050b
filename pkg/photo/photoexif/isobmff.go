package photoexif

import (
	"encoding/binary"
	"fmt"
)

// locateISOBMFF finds the Exif item of a HEIF/HEIC/AVIF file the way the
// format defines it (ISO/IEC 23008-12 annex A): the meta box's iinf names an
// item of type "Exif", iloc says where its bytes are (in the file or in
// idat), and the item starts with a 4-byte offset to the TIFF header. No
// byte pattern is searched for, so image data that happens to look like a
// TIFF header cannot be mistaken for EXIF.
func locateISOBMFF(data []byte) ([]byte, error) {
	meta, err := findBox(data, 0, len(data), "meta", true)
	if err != nil {
		return nil, err
	}
	// meta is a full box: version and flags precede its children.
	children := meta.start + 4
	if children > meta.end {
		return nil, problemf(ReasonMalformed, "HEIF: meta box too short")
	}
	iinf, err := findBox(data, children, meta.end, "iinf", false)
	if err != nil {
		return nil, err
	}
	id, ok, err := exifItemID(data[iinf.start:iinf.end])
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, problemf(ReasonNoEXIF, "HEIF has no Exif item")
	}
	iloc, err := findBox(data, children, meta.end, "iloc", false)
	if err != nil {
		return nil, err
	}
	loc, err := itemLocation(data[iloc.start:iloc.end], id)
	if err != nil {
		return nil, err
	}
	var item []byte
	switch loc.method {
	case 0: // file offset
		n := uint64(len(data))
		if loc.length == 0 || loc.offset > n || loc.length > n-loc.offset {
			// Length 0 means "to the end of the file"; either way the
			// bytes up to the file's end must be at hand.
			at := min(loc.offset, uint64(len(data)))
			return nil, need(int(at), fmt.Sprintf("the Exif item at byte %d", loc.offset))
		}
		item = data[loc.offset : loc.offset+loc.length]
	case 1: // idat
		idat, err := findBox(data, children, meta.end, "idat", false)
		if err != nil {
			return nil, err
		}
		n := uint64(idat.end - idat.start)
		if loc.length == 0 || loc.offset > n || loc.length > n-loc.offset {
			return nil, problemf(ReasonOffsetOutside, "HEIF: Exif item outside idat")
		}
		item = data[idat.start+int(loc.offset) : idat.start+int(loc.offset+loc.length)]
	default:
		return nil, problemf(ReasonMalformed, "HEIF: Exif item construction method %d not supported", loc.method)
	}
	if len(item) < 4 {
		return nil, problemf(ReasonTruncated, "HEIF: Exif item of %d bytes", len(item))
	}
	skip := uint64(binary.BigEndian.Uint32(item)) + 4
	if skip > uint64(len(item)) {
		return nil, problemf(ReasonOffsetOutside, "HEIF: TIFF header offset %d outside the %d-byte Exif item", skip-4, len(item))
	}
	return item[skip:], nil
}

type boxSpan struct{ start, end int } // payload, after the header

// findBox walks sibling boxes in data[from:to] for typ. With top set, a box
// reaching past the data is a reason to ask for more bytes (the head may be
// short); inside meta it is malformed, since meta itself was in range.
func findBox(data []byte, from, to int, typ string, top bool) (boxSpan, error) {
	pos := from
	for pos < to {
		if pos+8 > to {
			if top {
				return boxSpan{}, need(pos, "HEIF box header")
			}
			return boxSpan{}, problemf(ReasonMalformed, "HEIF: box header cut at byte %d", pos)
		}
		size := uint64(binary.BigEndian.Uint32(data[pos:]))
		name := string(data[pos+4 : pos+8])
		hdr := 8
		switch size {
		case 0: // to the end of the file (or parent)
			size = uint64(to - pos)
		case 1: // 64-bit size follows
			if pos+16 > to {
				if top {
					return boxSpan{}, need(pos, "HEIF box header")
				}
				return boxSpan{}, problemf(ReasonMalformed, "HEIF: box header cut at byte %d", pos)
			}
			size = binary.BigEndian.Uint64(data[pos+8:])
			hdr = 16
		}
		if size < uint64(hdr) {
			return boxSpan{}, problemf(ReasonMalformed, "HEIF: box %q of %d bytes at byte %d", name, size, pos)
		}
		if name == typ {
			if size > uint64(to-pos) {
				if top {
					return boxSpan{}, need(to, fmt.Sprintf("the %s box", typ))
				}
				return boxSpan{}, problemf(ReasonMalformed, "HEIF: %s box runs past its parent", typ)
			}
			return boxSpan{pos + hdr, pos + int(size)}, nil
		}
		if size > uint64(to-pos) {
			if top {
				// The box we want, if any, starts after this one.
				return boxSpan{}, need(int(min(uint64(pos)+size, 1<<62)), fmt.Sprintf("the %q box before %s", name, typ))
			}
			break
		}
		pos += int(size)
	}
	if top {
		return boxSpan{}, problemf(ReasonNoEXIF, "HEIF file has no %s box", typ)
	}
	return boxSpan{}, problemf(ReasonNoEXIF, "HEIF meta box has no %s box", typ)
}

// exifItemID reads iinf for the first item of type "Exif".
func exifItemID(b []byte) (id uint32, ok bool, err error) {
	if len(b) < 6 {
		return 0, false, problemf(ReasonMalformed, "HEIF: iinf box too short")
	}
	pos := 6 // version, flags, 16-bit count
	if b[0] != 0 {
		pos = 8 // 32-bit count
	}
	for pos+8 <= len(b) {
		size := int(binary.BigEndian.Uint32(b[pos:]))
		if size < 8 || size > len(b)-pos {
			return 0, false, problemf(ReasonMalformed, "HEIF: infe box of %d bytes", size)
		}
		if string(b[pos+4:pos+8]) == "infe" {
			e := b[pos+8 : pos+size]
			// Versions 2 and 3 carry item_type; 0 and 1 cannot be Exif.
			switch {
			case len(e) >= 12 && e[0] == 2:
				if string(e[8:12]) == "Exif" {
					return uint32(binary.BigEndian.Uint16(e[4:])), true, nil
				}
			case len(e) >= 14 && e[0] == 3:
				if string(e[10:14]) == "Exif" {
					return binary.BigEndian.Uint32(e[4:]), true, nil
				}
			}
		}
		pos += size
	}
	return 0, false, nil
}

type location struct {
	method         int
	offset, length uint64
}

// itemLocation reads iloc (versions 0, 1 and 2) for item id. Only items in a
// single extent are supported: that is how every phone stores Exif.
func itemLocation(b []byte, id uint32) (location, error) {
	r := reader{b: b}
	version := r.u8()
	r.skip(3)
	sizes := r.u8()
	offsetSize, lengthSize := int(sizes>>4), int(sizes&15)
	sizes = r.u8()
	baseSize, indexSize := int(sizes>>4), int(sizes&15)
	if version == 0 {
		indexSize = 0
	}
	var count uint32
	if version < 2 {
		count = uint32(r.u16())
	} else {
		count = r.u32()
	}
	for _, s := range []int{offsetSize, lengthSize, baseSize, indexSize} {
		if s != 0 && s != 4 && s != 8 {
			return location{}, problemf(ReasonMalformed, "HEIF: iloc field size %d", s)
		}
	}
	for i := uint32(0); i < count && r.ok(); i++ {
		var itemID uint32
		if version < 2 {
			itemID = uint32(r.u16())
		} else {
			itemID = r.u32()
		}
		method := 0
		if version == 1 || version == 2 {
			method = int(r.u16() & 15)
		}
		r.skip(2) // data_reference_index
		base := r.uint(baseSize)
		extents := int(r.u16())
		var first location
		// Bound the loop by the bytes left: with all field sizes 0 an
		// extent takes no bytes, and 65535 of them per item would spin.
		if per := indexSize + offsetSize + lengthSize; per == 0 || extents*per > len(r.b)-r.pos {
			if per != 0 {
				r.bad = true
			}
			extents = min(extents, 1)
		}
		for e := 0; e < extents && r.ok(); e++ {
			r.uint(indexSize)
			off, n := r.uint(offsetSize), r.uint(lengthSize)
			if e == 0 {
				first = location{method: method, offset: base + off, length: n}
			}
		}
		if !r.ok() {
			break
		}
		if itemID == id {
			if extents != 1 {
				return location{}, problemf(ReasonMalformed, "HEIF: Exif item in %d extents not supported", extents)
			}
			if first.offset < base { // overflow
				return location{}, problemf(ReasonMalformed, "HEIF: Exif item offset overflows")
			}
			return first, nil
		}
	}
	if !r.ok() {
		return location{}, problemf(ReasonMalformed, "HEIF: iloc box cut short")
	}
	return location{}, problemf(ReasonMalformed, "HEIF: Exif item %d has no location", id)
}

// reader reads big-endian fields and remembers running out instead of
// failing at each step.
type reader struct {
	b   []byte
	pos int
	bad bool
}

func (r *reader) ok() bool { return !r.bad }

func (r *reader) take(n int) []byte {
	if r.bad || n > len(r.b)-r.pos {
		r.bad = true
		return nil
	}
	p := r.b[r.pos : r.pos+n]
	r.pos += n
	return p
}

func (r *reader) skip(n int) { r.take(n) }

func (r *reader) u8() byte {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if p := r.take(2); p != nil {
		return binary.BigEndian.Uint16(p)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if p := r.take(4); p != nil {
		return binary.BigEndian.Uint32(p)
	}
	return 0
}

func (r *reader) uint(size int) uint64 {
	switch size {
	case 4:
		return uint64(r.u32())
	case 8:
		if p := r.take(8); p != nil {
			return binary.BigEndian.Uint64(p)
		}
	}
	return 0
}
