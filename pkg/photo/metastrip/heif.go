package metastrip

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
)

// HEIF, HEIC and AVIF (ISO/IEC 23008-12 on the ISO base media file format,
// ISO/IEC 14496-12). The meta box says, through iinf and iloc, where each
// item's bytes are; every item but the primary image and what its pixels
// are made of (heifitems.go) is blanked in place: the Exif item keeps its
// length and holds a zero TIFF-header offset and the minimal EXIF block,
// the XMP item an empty packet, the others (mime and URI items such as C2PA
// manifests, thumbnails, hidden jpeg previews) become zeros, and so does
// every byte of mdat and idat no kept item's extent covers. No byte moves,
// so every iloc offset of the image items stays valid. XML boxes in meta,
// unknown boxes (uuid ones included) and item properties a decoder does
// not need become "free" boxes of zeros, which every reader skips.
//
// Readers disagree on a file with two of a box the format allows once:
// libheif takes the first iinf, iloc, idat, iref, iprp, pitm
// (HeifFile::parse_heif_images), exiftool merges every iinf and iloc entry
// it meets (QuickTime.pm ParseItemInfoEntry, ParseItemLocation). Such a
// file, like a second meta box, is a Problem: the stripper would have to
// guess which items a reader blanks from.
//
// Streaming: the boxes up to the end of meta are held (ftyp and meta come
// first in every phone's files, a few KiB), then the rest streams with the
// item ranges blanked as they pass. A file whose meta comes after its media
// data, or ends beyond Options.MaxHeaderBytes, is not followed (a Problem):
// holding mdat would mean holding the photo. Image sequences (a moov box)
// are refused the same way: their tracks carry metadata of their own.

// Box types kept as they are; any other becomes "free".
var (
	heifTopKeep  = map[string]bool{"ftyp": true, "meta": true, "mdat": true, "free": true, "skip": true, "wide": true}
	heifMetaKeep = map[string]bool{"hdlr": true, "pitm": true, "iloc": true, "iinf": true, "iref": true, "iprp": true,
		"idat": true, "dinf": true, "grpl": true}
)

// heifPadding reports the box types that are padding, which every reader
// skips: their payload is zeroed, so a blanked box stays blank. A wide box
// (QuickTime's placeholder for a 64-bit mdat size) has no contents.
func heifPadding(typ string) bool { return typ == "free" || typ == "skip" || typ == "wide" }

// span is a range of the file to blank: an item's extent.
type span struct {
	start, end int64 // end math.MaxInt64: to the end of the file
	kind       string
	exif       bool // the first extent of the Exif item: gets the minimal block
	xmp        bool // the first extent of the XMP item: gets the empty packet
}

type heifStepper struct {
	partial bool // Check's input is the head of a longer file
	body    bool // the header has been held, edited and queued
	spans   []span
	// kept are the extents of the kept items beyond the held header,
	// sorted and merged: in an mdat box only they are copied, every other
	// byte is zeroed (an Exif item's old bytes, left behind when its iloc
	// offset was moved, are no item's and would be sent unread).
	kept   []span
	boxEnd int64 // end of the top-level box being passed; 0 between boxes
	inMdat bool  // the top-level box being passed is an mdat
}

func (h *heifStepper) step(r *Reader) error {
	if !h.body {
		h.body = true
		return h.header(r)
	}
	at := r.pos + r.queued()
	if h.boxEnd == 0 || at >= h.boxEnd {
		h.boxEnd = 0
		return h.nextBox(r, at)
	}
	for len(h.spans) > 0 && h.spans[0].end <= at {
		h.spans = h.spans[1:]
	}
	if len(h.spans) == 0 || h.spans[0].start >= h.boxEnd {
		return h.pass(r, at, h.boxEnd)
	}
	sp := h.spans[0]
	if sp.start > at {
		return h.pass(r, at, sp.start)
	}
	end := min(sp.end, h.boxEnd)
	if end == math.MaxInt64 {
		r.fillRest(0, sp.kind)
		return io.EOF
	}
	n := end - at
	if sp.exif && at == sp.start {
		b, err := r.peek(int(min(n, maxEXIFPeek)))
		if err != nil {
			return err
		}
		out, o := replaceHEIFExif(b, len(b))
		if o != 0 {
			r.note(func(rep *Report) { rep.Orientation = o })
		}
		r.removed(KindEXIF, 0)
		r.note(func(rep *Report) { rep.add(KindEXIF, 0, int64(len(out))) })
		r.emit(out)
		n -= int64(len(out))
	}
	if sp.xmp && at == sp.start && n >= int64(len(emptyXMP)) {
		r.emit(append([]byte(nil), emptyXMP...))
		r.note(func(rep *Report) { rep.add(KindXMP, 0, int64(len(emptyXMP))) })
		n -= int64(len(emptyXMP))
	}
	r.fill(n, spanFill(sp.kind), sp.kind)
	return nil
}

// pass queues the bytes from at to end (math.MaxInt64: the file's end),
// which no item to blank covers: as they are, or in an mdat box, the next
// run of them as a kept item's extent covers it or not (zeroed).
func (h *heifStepper) pass(r *Reader, at, end int64) error {
	if h.inMdat {
		for len(h.kept) > 0 && h.kept[0].end <= at {
			h.kept = h.kept[1:]
		}
		switch {
		case len(h.kept) == 0 || h.kept[0].start >= end:
		case h.kept[0].start > at:
			end = h.kept[0].start
		default:
			end = min(end, h.kept[0].end)
			return passCopy(r, at, end)
		}
		r.removed(KindOther, 0)
		if end == math.MaxInt64 {
			r.fillRest(0, KindOther)
			return io.EOF
		}
		r.fill(end-at, 0, KindOther)
		return nil
	}
	return passCopy(r, at, end)
}

// passCopy queues the bytes from at to end (math.MaxInt64: the file's
// end) as they are.
func passCopy(r *Reader, at, end int64) error {
	if end == math.MaxInt64 {
		r.copyRest()
		return io.EOF
	}
	r.copyN(end - at)
	return nil
}

// emptyXMP is the XMP packet an XMP item's bytes start with once blanked,
// the rest being spaces (XML white space), so readers find a valid packet
// holding nothing rather than garbage.
var emptyXMP = []byte(`<x:xmpmeta xmlns:x="adobe:ns:meta/"/>`)

// spanFill is the byte a blanked item becomes: a space in XMP, else zero.
func spanFill(kind string) byte {
	if kind == KindXMP {
		return ' '
	}
	return 0
}

// nextBox starts the top-level box at offset at, after the header.
func (h *heifStepper) nextBox(r *Reader, at int64) error {
	b, err := r.need(8)
	if err != nil {
		return err
	}
	size, hdr := int64(binary.BigEndian.Uint32(b)), int64(8)
	typ := string(b[4:8])
	switch size {
	case 0:
		size = math.MaxInt64 - at
	case 1:
		if b, err = r.need(16); err != nil {
			return err
		}
		size, hdr = int64(binary.BigEndian.Uint64(b[8:])), 16
		if size < 0 {
			return r.problem("HEIF box %q of %d bytes", typ, uint64(size))
		}
	}
	if size < hdr {
		return r.problem("HEIF box %q of %d bytes", typ, size)
	}
	for _, sp := range h.spans {
		// Item data lies in box payloads: a box header inside the data of
		// an item to blank would be sent as it is, and readers that follow
		// iloc, not boxes, would read it as the item's.
		if sp.start < at+hdr && sp.end > at {
			return r.problem("HEIF %s item data overlaps the header of box %q", sp.kind, typ)
		}
	}
	switch typ {
	case "moov":
		return r.problem("HEIF image sequence (moov box): its tracks are not stripped")
	case "meta":
		// libheif reads the first meta box, exiftool every one: a second
		// one's items would be read by some and blanked by none.
		return r.problem("HEIF file with a second meta box")
	case "ftyp":
		// The file type comes first, once (ISO/IEC 14496-12 4.3): a second
		// one's brands would be sent unread.
		return r.problem("HEIF file with a second ftyp box")
	}
	h.boxEnd, h.inMdat = at+size, typ == "mdat"
	if size > math.MaxInt64-at {
		h.boxEnd = math.MaxInt64
	}
	switch {
	case heifPadding(typ):
		// Padding holds nothing anyone reads, so nothing may hide in it.
		r.copyN(hdr)
		if h.boxEnd == math.MaxInt64 {
			r.fillRest(0, "")
			return io.EOF
		}
		r.fill(size-hdr, 0, "")
		h.boxEnd = 0
		return nil
	case heifTopKeep[typ]:
		r.copyN(hdr)
		return nil
	}
	out := append([]byte(nil), b[:hdr]...)
	copy(out[4:8], "free")
	r.removed(KindOther, hdr)
	r.emit(out)
	if h.boxEnd == math.MaxInt64 {
		r.fillRest(0, KindOther)
		return io.EOF
	}
	r.fill(size-hdr, 0, KindOther)
	h.boxEnd = 0
	return nil
}

// header reads every box up to the end of meta, blanks what it says in
// them, queues them, and keeps the item ranges that lie beyond.
func (h *heifStepper) header(r *Reader) error {
	var buf []byte
	limit := r.opts.MaxHeaderBytes
	for {
		var hb [16]byte
		n, err := io.ReadFull(r.src, hb[:8])
		r.pos += int64(n)
		buf = append(buf, hb[:n]...)
		if err != nil {
			return h.headerEnd(r, buf, err)
		}
		size, hdr := uint64(binary.BigEndian.Uint32(hb[:])), 8
		typ := string(hb[4:8])
		if size == 1 {
			n, err := io.ReadFull(r.src, hb[8:16])
			r.pos += int64(n)
			buf = append(buf, hb[8:8+n]...)
			if err != nil {
				return h.headerEnd(r, buf, err)
			}
			size, hdr = binary.BigEndian.Uint64(hb[8:]), 16
		}
		start := len(buf) - hdr
		switch {
		case typ == "moov":
			return h.fail(r, buf, "HEIF image sequence (moov box): its tracks are not stripped")
		case size == 0:
			return h.fail(r, buf, fmt.Sprintf("HEIF box %q runs to the end of the file before the meta box", typ))
		case size < uint64(hdr):
			return h.fail(r, buf, fmt.Sprintf("HEIF box %q of %d bytes", typ, size))
		case size > uint64(limit-start):
			return h.fail(r, buf, fmt.Sprintf("HEIF meta box does not end within the first %d bytes", limit))
		}
		payload := make([]byte, int(size)-hdr)
		n, err = io.ReadFull(r.src, payload)
		r.pos += int64(n)
		buf = append(buf, payload[:n]...)
		if err != nil {
			return h.headerEnd(r, buf, err)
		}
		if typ == "meta" {
			if err := h.edit(r, buf, start); err != nil {
				return h.fail(r, buf, err.Error())
			}
			r.emitRead(buf)
			return nil
		}
	}
}

// headerEnd handles the input ending, or failing, inside the header.
func (h *heifStepper) headerEnd(r *Reader, buf []byte, err error) error {
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return err
	}
	if h.partial {
		return h.fail(r, buf, fmt.Sprintf("HEIF meta box does not end within the first %d bytes", len(buf)))
	}
	return h.fail(r, buf, "HEIF file ends before its meta box does")
}

// fail zeroes the header held so far (the rest follows as Reader.next
// zeroes it) and reports why.
func (h *heifStepper) fail(r *Reader, buf []byte, reason string) error {
	r.emitRead(make([]byte, len(buf)))
	p := &Problem{Offset: 0, Reason: reason}
	r.note(func(rep *Report) { rep.add(KindUnread, 0, int64(len(buf))) })
	return p
}

// edit blanks, in the held header buf (whose meta box starts at metaAt),
// the unknown top-level boxes, the XML and unknown boxes of meta, the
// descriptive item properties and every item that is not the primary
// image's pixel data, and keeps the item ranges that lie beyond buf. What it
// cannot prove clean is an error, and the file is refused.
func (h *heifStepper) edit(r *Reader, buf []byte, metaAt int) error {
	top, err := boxesIn(buf, 0, len(buf))
	if err != nil {
		return err
	}
	for _, b := range top {
		switch {
		case heifPadding(b.typ):
			clear(buf[b.payload:b.end])
		case !heifTopKeep[b.typ]:
			blankBox(r, buf, b, KindOther)
		}
	}
	meta := top[len(top)-1]
	if meta.start != metaAt || meta.payload+4 > meta.end {
		return errors.New("HEIF meta box too short")
	}
	children, err := boxesIn(buf, meta.payload+4, meta.end)
	if err != nil {
		return err
	}
	// One of each: libheif takes the first (get_child_box), exiftool
	// merges them all, and a stripper that read another one than theirs
	// would blank the wrong items.
	single := map[string]*box{}
	for i := range children {
		c := &children[i]
		switch c.typ {
		case "ipro":
			return errors.New("HEIF protected items (ipro box): their data cannot be checked")
		case "xml ", "bxml":
			blankBox(r, buf, *c, KindXMP)
		case "free", "skip":
			clear(buf[c.payload:c.end])
		default:
			if !heifMetaKeep[c.typ] {
				blankBox(r, buf, *c, KindOther)
				continue
			}
			if single[c.typ] != nil {
				return fmt.Errorf("HEIF meta box holds more than one %q box", c.typ)
			}
			single[c.typ] = c
		}
	}
	if hdlr := single["hdlr"]; hdlr != nil && hdlr.end-hdlr.payload > heifHdlrName {
		// The handler's name is free text; nobody needs it.
		clear(buf[hdlr.payload+heifHdlrName : hdlr.end])
	}
	if dinf := single["dinf"]; dinf != nil {
		if err := cleanDinf(r, buf, *dinf); err != nil {
			return err
		}
	}
	if iprp := single["iprp"]; iprp != nil {
		if err := h.editProperties(r, buf, *iprp); err != nil {
			return err
		}
	}
	items, err := h.items(buf, single)
	if err != nil || len(items.byID) == 0 {
		return err
	}
	idat := single["idat"]
	var spans, kept []span
	for _, id := range items.ids() {
		it := items.byID[id]
		ranges, err := it.ranges(idat)
		if err != nil {
			return err
		}
		if items.keep[id] {
			kept = append(kept, ranges...)
			continue
		}
		r.removed(it.kind(), 0)
		spans = append(spans, ranges...)
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	kept = mergeSpans(kept)
	for _, s := range spans {
		// Bytes of an item to blank inside an image item's extent would
		// be sent as the image's, or blanked with the picture: a mutation
		// run made every iloc length 0 (to the end of the file), and the
		// first tile's extent carried the Exif item's serial.
		i := sort.Search(len(kept), func(i int) bool { return kept[i].end > s.start })
		if i < len(kept) && kept[i].start < s.end {
			return fmt.Errorf("HEIF %s item data at byte %d overlaps an image item's", s.kind, s.start)
		}
	}
	// Overlapping ranges are merged into zeros: a file that points two
	// items at the same bytes gets no minimal block in them.
	var merged []span
	for _, s := range spans {
		if n := len(merged); n > 0 && s.start < merged[n-1].end {
			last := &merged[n-1]
			last.end = max(last.end, s.end)
			last.exif, last.xmp = false, false
			continue
		}
		merged = append(merged, s)
	}
	held := int64(len(buf))
	// Item data within the held header must lie in idat or in an mdat held
	// with it: bytes of ftyp or of meta's own boxes are no item's, and
	// blanking them would rewrite the very boxes that located them.
	var data []box
	if idat != nil {
		data = append(data, *idat)
	}
	for _, b := range top {
		if b.typ == "mdat" {
			data = append(data, b)
		}
	}
	inData := func(start, end int64) bool {
		for _, d := range data {
			if start >= int64(d.payload) && end <= int64(d.end) {
				return true
			}
		}
		return false
	}
	// What neither a kept item nor one to blank covers in the held idat
	// and mdat boxes is zeroed; mdat boxes beyond get the same as they pass.
	covered := mergeSpans(append(slices.Clone(kept), merged...))
	for _, d := range data {
		for _, g := range gaps(covered, int64(d.payload), int64(d.end)) {
			clear(buf[g.start:g.end])
			r.removed(KindOther, g.end-g.start)
		}
	}
	for _, s := range kept {
		if s.end > held {
			h.kept = append(h.kept, span{start: max(s.start, held), end: s.end})
		}
	}
	for _, s := range merged {
		if s.start < held && !inData(s.start, min(s.end, held)) {
			return fmt.Errorf("HEIF %s item at byte %d lies outside idat and mdat", s.kind, s.start)
		}
		if s.start < held {
			end := min(s.end, held)
			seg := buf[s.start:end]
			switch {
			case s.exif && s.end <= held:
				out, o := replaceHEIFExif(seg, len(seg))
				if o != 0 {
					r.note(func(rep *Report) { rep.Orientation = o })
				}
				copy(seg, out)
			default:
				for i := range seg {
					seg[i] = spanFill(s.kind)
				}
				if s.xmp && len(seg) >= len(emptyXMP) {
					copy(seg, emptyXMP)
				}
			}
			r.note(func(rep *Report) { rep.add(s.kind, 0, int64(len(seg))) })
			if s.end <= held {
				continue
			}
			s.start, s.exif, s.xmp = held, false, false
		}
		h.spans = append(h.spans, s)
	}
	return nil
}

// ranges returns where the item's bytes are in the file, idat being the
// held idat box (construction method 1), each range of the item's kind and
// its first one marked for the Exif block or the XMP packet.
func (it *heifItem) ranges(idat *box) ([]span, error) {
	kind := it.kind()
	out := make([]span, 0, len(it.extents))
	for i, e := range it.extents {
		var start, end int64
		switch it.method {
		case 0:
			start, end = e.offset, e.offset+e.length
			if e.length == 0 || end < start {
				end = math.MaxInt64
			}
		case 1:
			if idat == nil {
				return nil, errors.New("HEIF item in idat without an idat box")
			}
			start, end = int64(idat.payload)+e.offset, int64(idat.payload)+e.offset+e.length
			if e.length == 0 || end > int64(idat.end) || end < start {
				end = int64(idat.end)
			}
			if start < int64(idat.payload) || start > int64(idat.end) {
				return nil, errors.New("HEIF item outside idat")
			}
		default:
			return nil, fmt.Errorf("HEIF item construction method %d not supported", it.method)
		}
		out = append(out, span{start: start, end: end, kind: kind,
			exif: kind == KindEXIF && i == 0, xmp: kind == KindXMP && i == 0})
	}
	return out, nil
}

// mergeSpans sorts ranges and joins those that overlap or touch, keeping
// only where they are.
func mergeSpans(ranges []span) []span {
	slices.SortFunc(ranges, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	var out []span
	for _, s := range ranges {
		if n := len(out); n > 0 && s.start <= out[n-1].end {
			out[n-1].end = max(out[n-1].end, s.end)
			continue
		}
		out = append(out, span{start: s.start, end: s.end})
	}
	return out
}

// gaps returns the parts of [from, to) that no range of covered (sorted,
// merged) covers.
func gaps(covered []span, from, to int64) []span {
	var out []span
	for _, c := range covered {
		if c.end <= from || c.start >= to {
			continue
		}
		if c.start > from {
			out = append(out, span{start: from, end: c.start})
		}
		from = max(from, c.end)
	}
	if from < to {
		out = append(out, span{start: from, end: to})
	}
	return out
}

// heifHdlrName is where hdlr's name starts in its payload: version and
// flags, pre_defined, handler_type and three reserved words.
const heifHdlrName = 4 + 4 + 4 + 12

// heifProperties are the item properties kept: what a decoder needs to
// decode and show the picture (ISO/IEC 23008-12 section 6.5, 14496-15,
// AV1-ISOBMFF). Any other (udes user description, crtt creation time, mdft
// modification time, vendors') becomes a free box: ipma refers to
// properties by their index in ipco, which a free box keeps.
var heifProperties = map[string]bool{
	"hvcC": true, "av1C": true, "ispe": true, "colr": true, "pixi": true, "rloc": true,
	"irot": true, "imir": true, "clap": true, "pasp": true, "auxC": true, "lsel": true,
	"a1op": true, "a1lx": true, "clli": true, "mdcv": true, "cclv": true, "amve": true,
	"free": true, "skip": true,
}

// heifPropertyLen bounds the payload of the kept properties that have
// fixed fields (version and flags included for full boxes): ISO/IEC
// 23008-12 6.5, 14496-12 12.1.4-12.1.6, AV1-ISOBMFF 2.3. Bytes past them
// would be sent unread, so such a file is refused.
var heifPropertyLen = map[string]int{
	"ispe": 12, "irot": 1, "imir": 1, "clap": 32, "pasp": 8, "rloc": 12, "lsel": 2,
	"a1op": 1, "a1lx": 13, "clli": 4, "mdcv": 24, "amve": 8,
}

// heifPropertyClean walks the kept properties whose length is not fixed
// (heifprops.go): each zeroes the parts that can carry any bytes and
// refuses a property its syntax does not account for to the last byte.
var heifPropertyClean = map[string]func([]byte) (bool, error){
	"hvcC": cleanHvcC, "av1C": cleanAv1C, "auxC": cleanAuxC, "pixi": cleanPixi,
}

// heifNclxLen is the payload of an nclx colr property: colour_type, the
// primaries, transfer and matrix code points and the full-range flag.
const heifNclxLen = 4 + 2 + 2 + 2 + 1

// editProperties blanks the properties not in heifProperties, and the
// descriptive fields of the ICC profiles in colr (a profile that cannot be
// read is blanked whole).
func (h *heifStepper) editProperties(r *Reader, buf []byte, iprp box) error {
	children, err := boxesIn(buf, iprp.payload, iprp.end)
	if err != nil {
		return err
	}
	var ipco *box
	for i := range children {
		c := &children[i]
		switch c.typ {
		case "ipco":
			if ipco != nil {
				return errors.New("HEIF iprp box holds more than one ipco box")
			}
			ipco = c
		case "ipma":
		default:
			blankBox(r, buf, *c, KindOther)
		}
	}
	if ipco == nil {
		return nil
	}
	props, err := boxesIn(buf, ipco.payload, ipco.end)
	if err != nil {
		return err
	}
	for _, p := range props {
		if n, fixed := heifPropertyLen[p.typ]; fixed && p.end-p.payload > n {
			return fmt.Errorf("HEIF %q property of %d bytes, longer than its %d", p.typ, p.end-p.payload, n)
		}
		if clean := heifPropertyClean[p.typ]; clean != nil {
			changed, err := clean(buf[p.payload:p.end])
			if err != nil {
				return fmt.Errorf("HEIF %w", err)
			}
			if changed {
				r.removed(KindOther, 0)
			}
		}
		switch {
		case !heifProperties[p.typ]:
			blankBox(r, buf, p, KindOther)
		case p.typ == "colr":
			switch string(buf[p.payload:min(p.payload+4, p.end)]) {
			case "nclx": // four code points and a flag (ISO/IEC 14496-12 12.1.5)
				if p.end-p.payload > heifNclxLen {
					return fmt.Errorf("HEIF nclx colr property of %d bytes, longer than its %d", p.end-p.payload, heifNclxLen)
				}
			default:
				// A colour type no decoder reads (ISO/IEC 14496-12 knows
				// nclx, rICC and prof): its bytes would be sent unread.
				blankBox(r, buf, p, KindOther)
			case "prof", "rICC": // an ICC profile (ISO/IEC 14496-12 12.1.5)
				changed, err := sanitizeICC(buf[p.payload+4 : p.end])
				if err != nil {
					// Unreadable: the picture is shown without it, and
					// nothing of it is sent.
					blankBox(r, buf, p, KindOther)
				} else if changed {
					r.removed(KindOther, 0)
				}
			}
		}
	}
	return nil
}

// replaceHEIFExif returns n bytes for an Exif item whose first bytes are
// item: a 4-byte TIFF-header offset of 0 and the minimal EXIF block, then
// zeros (ISO/IEC 23008-12 A.2.1).
func replaceHEIFExif(item []byte, n int) ([]byte, int) {
	var tiff []byte
	if len(item) >= 4 {
		if skip := 4 + int64(binary.BigEndian.Uint32(item)); skip <= int64(len(item)) {
			tiff = item[skip:]
		}
	}
	return replaceEXIF(tiff, make([]byte, 4), n)
}

// blankBox turns a box held in buf into a "free" box of zeros.
func blankBox(r *Reader, buf []byte, b box, kind string) {
	copy(buf[b.start+4:b.start+8], "free")
	clear(buf[b.payload:b.end])
	r.removed(kind, int64(b.end-b.start))
}

// box is a box found in a held buffer: where it starts, where its payload
// starts and where it ends.
type box struct {
	typ                 string
	start, payload, end int
}

// boxesIn lists the sibling boxes of b[from:to].
func boxesIn(b []byte, from, to int) ([]box, error) {
	var out []box
	for pos := from; pos < to; {
		if to-pos < 8 {
			return nil, fmt.Errorf("HEIF box header cut at byte %d", pos)
		}
		size, hdr := uint64(binary.BigEndian.Uint32(b[pos:])), 8
		switch size {
		case 0:
			size = uint64(to - pos)
		case 1:
			if to-pos < 16 {
				return nil, fmt.Errorf("HEIF box header cut at byte %d", pos)
			}
			size, hdr = binary.BigEndian.Uint64(b[pos+8:]), 16
		}
		if size < uint64(hdr) || size > uint64(to-pos) {
			return nil, fmt.Errorf("HEIF box %q of %d bytes at byte %d", b[pos+4:pos+8], size, pos)
		}
		out = append(out, box{typ: string(b[pos+4 : pos+8]), start: pos, payload: pos + hdr, end: pos + int(size)})
		pos += int(size)
	}
	return out, nil
}

// bin reads big-endian fields and remembers running short instead of
// failing at each step.
type bin struct {
	b   []byte
	pos int
	bad bool
}

func (r *bin) take(n int) []byte {
	if r.bad || n > len(r.b)-r.pos {
		r.bad = true
		return make([]byte, n)
	}
	p := r.b[r.pos : r.pos+n]
	r.pos += n
	return p
}

func (r *bin) skip(n int)  { r.take(n) }
func (r *bin) u8() byte    { return r.take(1)[0] }
func (r *bin) u16() uint16 { return binary.BigEndian.Uint16(r.take(2)) }
func (r *bin) u32() uint32 { return binary.BigEndian.Uint32(r.take(4)) }

func (r *bin) uint(size int) uint64 {
	switch size {
	case 4:
		return uint64(r.u32())
	case 8:
		return binary.BigEndian.Uint64(r.take(8))
	}
	return 0
}

// str reads a NUL-terminated string; a missing NUL ends it at the box's end.
func (r *bin) str() string {
	if r.bad {
		return ""
	}
	rest := r.b[r.pos:]
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		r.pos = len(r.b)
		return string(rest)
	}
	r.pos += i + 1
	return string(rest[:i])
}
