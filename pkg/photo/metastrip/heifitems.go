package metastrip

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// The items of a HEIF file, as iinf, iloc, pitm and iref describe them. The
// stripper keeps the bytes of the primary image and of what its pixels are
// made of (the tiles of a grid, the input of an identity or overlay
// derivation, its alpha or depth auxiliary images) and blanks every other
// item's: Exif (the minimal block), XMP (an empty packet), every mime and
// URI item, thumbnails, and coded images with metadata of their own, such
// as the hidden jpeg previews cameras write (ISO/IEC 23008-12 Annex H: a
// jpeg item is a whole JPEG stream, APP1 Exif included). An image the
// picture is made of must be coded as heifPixelTypes: a jpeg primary item
// would send its own APPn segments, so such a file is refused.

// heifPixelTypes are the item types kept as the picture's pixels: HEVC and
// AV1 coded images and the derivations libheif decodes from them.
var heifPixelTypes = map[string]bool{"hvc1": true, "av01": true, "grid": true, "iden": true, "iovl": true}

// heifCodedTypes are item types holding a coded image (ISO/IEC 23008-12
// Annexes B to H, 23001-17): blanked, they count as previews.
var heifCodedTypes = map[string]bool{
	"hvc1": true, "hvt1": true, "lhv1": true, "av01": true, "avc1": true, "jpeg": true, "j2k1": true,
	"vvc1": true, "evc1": true, "unci": true, "grid": true, "iden": true, "iovl": true, "tmap": true, "mski": true,
}

// heifContentTypes are the content types of mime items kept in their infe
// entries: those readers act on (exiftool and libheif read an
// application/rdf+xml item as XMP). Any other is free text and becomes
// spaces.
var heifContentTypes = map[string]bool{"application/rdf+xml": true}

type heifItem struct {
	typ         string // item_type of infe versions 2 and 3; "" for 0 and 1, or an item iinf does not list
	contentType string // of a mime item, or an infe version 0 or 1
	protected   bool
	method      int // construction method: 0 file offset, 1 idat, 2 item offset
	extents     []extent
}

// kind is what the item's blanked bytes count as.
func (it *heifItem) kind() string {
	switch {
	case it.typ == "Exif":
		return KindEXIF
	case it.typ == "mime" || it.typ == "" && it.contentType != "":
		if it.contentType == "application/rdf+xml" {
			return KindXMP
		}
	case heifCodedTypes[it.typ]:
		return KindPreview
	}
	return KindOther
}

type heifItems struct {
	byID map[uint32]*heifItem
	keep map[uint32]bool // the primary image and what it is made of
}

// ids lists the items in a fixed order.
func (x *heifItems) ids() []uint32 {
	ids := make([]uint32, 0, len(x.byID))
	for id := range x.byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// items reads iinf, iloc, pitm and iref from the held header: every item,
// where its bytes are, and which ones make the primary image.
func (h *heifStepper) items(buf []byte, single map[string]*box) (*heifItems, error) {
	x := &heifItems{byID: map[uint32]*heifItem{}, keep: map[uint32]bool{}}
	if iinf := single["iinf"]; iinf != nil {
		if err := x.readIinf(buf[iinf.payload:iinf.end]); err != nil {
			return nil, err
		}
	}
	if iloc := single["iloc"]; iloc != nil {
		if err := x.readIloc(buf[iloc.payload:iloc.end]); err != nil {
			return nil, err
		}
	} else if len(x.byID) > 0 {
		return nil, errors.New("HEIF meta box has items and no iloc box")
	}
	if len(x.byID) == 0 {
		return x, nil
	}
	pitm := single["pitm"]
	if pitm == nil {
		return nil, errors.New("HEIF meta box has items and no pitm box")
	}
	p := &bin{b: buf[pitm.payload:pitm.end]}
	var primary uint32
	v := p.u8()
	p.skip(3)
	if v == 0 {
		primary = uint32(p.u16())
	} else {
		primary = p.u32()
	}
	if p.bad {
		return nil, errors.New("HEIF pitm box too short")
	}
	var refs []heifRef
	if iref := single["iref"]; iref != nil {
		var err error
		if refs, err = readIref(buf, *iref); err != nil {
			return nil, err
		}
	}
	// The primary image, the images it derives from (dimg) and the
	// auxiliary images of any of them (auxl, from the auxiliary image).
	x.keep[primary] = true
	for grown := true; grown; {
		grown = false
		for _, ref := range refs {
			switch {
			case ref.typ == "dimg" && x.keep[ref.from]:
				for _, to := range ref.to {
					grown = grown || !x.keep[to]
					x.keep[to] = true
				}
			case ref.typ == "auxl" && !x.keep[ref.from] && slices.ContainsFunc(ref.to, func(id uint32) bool { return x.keep[id] }):
				x.keep[ref.from], grown = true, true
			}
		}
	}
	for id := range x.keep {
		it := x.byID[id]
		switch {
		case it == nil:
			return nil, fmt.Errorf("HEIF image item %d is referenced and not listed", id)
		case !heifPixelTypes[it.typ]:
			return nil, fmt.Errorf("HEIF image item %d of type %q: only %s are sent, as their coding holds pixels alone", id, it.typ, "hvc1, av01, grid, iden and iovl items")
		case it.protected:
			return nil, fmt.Errorf("HEIF image item %d is protected", id)
		}
	}
	return x, nil
}

// readIinf reads every infe box of iinf, b, and blanks the item names in
// it: a second entry for an item is refused, since readers differ in which
// one they believe.
func (x *heifItems) readIinf(b []byte) error {
	r := &bin{b: b}
	version := r.u8()
	r.skip(3)
	if version == 0 {
		r.u16()
	} else {
		r.u32()
	}
	if r.bad {
		return errors.New("HEIF iinf box too short")
	}
	children, err := boxesIn(b, r.pos, len(b))
	if err != nil {
		return err
	}
	for _, c := range children {
		if c.typ != "infe" {
			// Nothing but infe belongs there (ISO/IEC 14496-12 8.11.6),
			// and another box's bytes would be sent unread.
			return fmt.Errorf("HEIF iinf box holds a %q box", c.typ)
		}
		e := &bin{b: b[c.payload:c.end]}
		v := e.u8()
		e.skip(3)
		var id uint32
		if v == 3 {
			id = e.u32()
		} else {
			id = uint32(e.u16())
		}
		it := &heifItem{protected: e.u16() != 0}
		if v >= 2 {
			it.typ = string(e.take(4))
		}
		if e.bad {
			return errors.New("HEIF infe box too short")
		}
		// The strings are free text: the item's name, which no reader
		// needs, a content type other than those readers act on, the
		// content encoding and the URI type become spaces, which keep
		// each string's NUL where the parsers look for it. Whatever follows
		// them (an infe version 1 extension, such as fdel's file location
		// and digest, or bytes no syntax accounts for) becomes zeros.
		blank := func(from int) {
			for i := c.payload + from; i < c.end && b[i] != 0; i++ {
				b[i] = ' '
			}
		}
		blank(e.pos)
		e.str()
		switch {
		case v < 2 || it.typ == "mime":
			at := e.pos
			if it.contentType = e.str(); !heifContentTypes[it.contentType] {
				blank(at)
			}
			if e.pos < len(e.b) { // content_encoding is optional
				blank(e.pos)
				e.str()
			}
		case it.typ == "uri ":
			blank(e.pos)
			e.str()
		}
		clear(b[c.payload+e.pos : c.end])
		if x.byID[id] != nil {
			return fmt.Errorf("HEIF item %d listed twice in iinf", id)
		}
		x.byID[id] = it
	}
	return nil
}

type extent struct{ offset, length int64 }

// readIloc reads iloc (versions 0 to 2): every extent of every item. An
// item iinf does not list is still blanked (readers differ on it); an item
// whose data is in another file, or located twice, is refused.
func (x *heifItems) readIloc(b []byte) error {
	r := &bin{b: b}
	version := r.u8()
	r.skip(3)
	sizes := r.u8()
	offsetSize, lengthSize := int(sizes>>4), int(sizes&15)
	sizes = r.u8()
	baseSize, indexSize := int(sizes>>4), int(sizes&15)
	if version == 0 {
		indexSize = 0
	}
	for _, s := range []int{offsetSize, lengthSize, baseSize, indexSize} {
		if s != 0 && s != 4 && s != 8 {
			return fmt.Errorf("HEIF iloc field size %d", s)
		}
	}
	var count uint32
	if version < 2 {
		count = uint32(r.u16())
	} else {
		count = r.u32()
	}
	located := map[uint32]bool{}
	for i := uint32(0); i < count && !r.bad; i++ {
		var id uint32
		if version < 2 {
			id = uint32(r.u16())
		} else {
			id = r.u32()
		}
		method := 0
		if version >= 1 {
			method = int(r.u16() & 15)
		}
		ref := r.u16()
		base := r.uint(baseSize)
		n := int(r.u16())
		if per := indexSize + offsetSize + lengthSize; n*per > len(r.b)-r.pos {
			return errors.New("HEIF iloc box too short")
		}
		var extents []extent
		for range n {
			r.uint(indexSize)
			off, length := r.uint(offsetSize), r.uint(lengthSize)
			if base > math.MaxInt64/2 || off > math.MaxInt64/2 || length > math.MaxInt64/2 {
				return errors.New("HEIF iloc offset out of range")
			}
			extents = append(extents, extent{offset: int64(base + off), length: int64(length)})
		}
		if n == 0 {
			// No extent: the whole data reference, which for a file item
			// means from base to its end.
			extents = []extent{{offset: int64(min(base, math.MaxInt64/2)), length: 0}}
		}
		switch {
		case located[id]:
			return fmt.Errorf("HEIF item %d located twice in iloc", id)
		case ref != 0:
			return fmt.Errorf("HEIF item %d has its data in another file (data reference %d)", id, ref)
		}
		located[id] = true
		it := x.byID[id]
		if it == nil {
			it = &heifItem{}
			x.byID[id] = it
		}
		it.method, it.extents = method, extents
	}
	switch {
	case r.bad:
		return errors.New("HEIF iloc box too short")
	case r.pos != len(r.b):
		// Bytes past the last item would be sent unread.
		return fmt.Errorf("HEIF iloc box of %d bytes, longer than its %d of items", len(r.b), r.pos)
	}
	return nil
}

// heifRef is one reference of iref: from one item to others.
type heifRef struct {
	typ  string
	from uint32
	to   []uint32
}

func readIref(buf []byte, iref box) ([]heifRef, error) {
	if iref.end-iref.payload < 4 {
		return nil, errors.New("HEIF iref box too short")
	}
	wide := buf[iref.payload] != 0 // version 1: 32-bit item IDs
	children, err := boxesIn(buf, iref.payload+4, iref.end)
	if err != nil {
		return nil, err
	}
	id := func(r *bin) uint32 {
		if wide {
			return r.u32()
		}
		return uint32(r.u16())
	}
	var refs []heifRef
	for _, c := range children {
		r := &bin{b: buf[c.payload:c.end]}
		ref := heifRef{typ: c.typ, from: id(r)}
		for n := r.u16(); n > 0 && !r.bad; n-- {
			ref.to = append(ref.to, id(r))
		}
		switch {
		case r.bad:
			return nil, fmt.Errorf("HEIF iref %q box too short", c.typ)
		case r.pos != len(r.b):
			// Bytes past the references would be sent unread.
			return nil, fmt.Errorf("HEIF iref %q box of %d bytes, longer than its %d of references", c.typ, len(r.b), r.pos)
		}
		refs = append(refs, ref)
	}
	return refs, nil
}
