package metastrip

import (
	"encoding/binary"
	"slices"
	"testing"
)

// A HEIC editor for building hostile files from the committed samples: it
// changes meta's children and moves every file offset of iloc by what meta
// grew, so the file still decodes to the same pixels (libheif reads it as
// before), which is what makes such a file hostile rather than broken.

func isoBox(typ string, payload ...[]byte) []byte {
	b := []byte{0, 0, 0, 0}
	b = append(b, typ...)
	for _, p := range payload {
		b = append(b, p...)
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)))
	return b
}

func fullBox(typ string, version byte, payload ...[]byte) []byte {
	return isoBox(typ, append([][]byte{{version, 0, 0, 0}}, payload...)...)
}

func u16(v int) []byte { return binary.BigEndian.AppendUint16(nil, uint16(v)) }
func u32(v int) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }

type heicBuild struct {
	t        testing.TB
	in       []byte
	meta     box
	children [][]byte // meta's child boxes, whole
	items    *heifItems
	extra    []byte // appended to the file in an mdat box: an extent from extraAt on points into it
	tail     []byte // appended after it
}

// extraAt is the offset an extent is given to point into heicBuild.extra.
const extraAt = 1 << 40

func splitHEIC(t testing.TB, in []byte) *heicBuild {
	t.Helper()
	top, err := boxesIn(in, 0, len(in))
	if err != nil {
		t.Fatal(err)
	}
	b := &heicBuild{t: t, in: in, items: &heifItems{byID: map[uint32]*heifItem{}}}
	for _, x := range top {
		if x.typ == "meta" {
			b.meta = x
		}
	}
	children, err := boxesIn(in, b.meta.payload+4, b.meta.end)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range children {
		b.children = append(b.children, in[c.start:c.end])
		if c.typ == "iloc" {
			if err := b.items.readIloc(in[c.payload:c.end]); err != nil {
				t.Fatal(err)
			}
		}
	}
	return b
}

func (b *heicBuild) index(typ string) int {
	i := slices.IndexFunc(b.children, func(c []byte) bool { return string(c[4:8]) == typ })
	if i < 0 {
		b.t.Fatalf("sample has no %s box", typ)
	}
	return i
}

// itemsOfType returns the IDs of the sample's items of type typ.
func (b *heicBuild) itemsOfType(typ string) []uint32 {
	iinf := slices.Clone(b.children[b.index("iinf")])
	x := &heifItems{byID: map[uint32]*heifItem{}}
	if err := x.readIinf(iinf[8:]); err != nil {
		b.t.Fatal(err)
	}
	var ids []uint32
	for _, id := range x.ids() {
		if x.byID[id].typ == typ {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		b.t.Fatalf("sample has no %s item", typ)
	}
	return ids
}

// insertAfter puts box after meta's first child of type typ.
func (b *heicBuild) insertAfter(typ string, box []byte) {
	i := b.index(typ)
	b.children = slices.Insert(b.children, i+1, box)
}

// addItem lists infe in iinf and locates the item's data at the file's end.
func (b *heicBuild) addItem(id int, infe, data []byte) {
	i := b.index("iinf")
	old := b.children[i]
	if old[8] != 0 {
		b.t.Fatal("sample's iinf is not version 0")
	}
	count := int(binary.BigEndian.Uint16(old[12:]))
	b.children[i] = fullBox("iinf", 0, u16(count+1), old[14:], infe)
	b.items.byID[uint32(id)] = &heifItem{extents: []extent{{offset: extraAt + int64(len(b.extra)), length: int64(len(data))}}}
	b.extra = append(b.extra, data...)
}

// editChild replaces meta's first child of type typ with edit's result.
func (b *heicBuild) editChild(typ string, edit func(old []byte) []byte) {
	i := b.index(typ)
	b.children[i] = edit(b.children[i])
}

// iloc writes the items' locations (version 1, 32-bit offsets and lengths,
// no base), file offsets past the old meta moved by delta and those of the
// extra data set from its start.
func (b *heicBuild) iloc(delta, extraStart int64) []byte {
	ids := b.items.ids()
	p := cat([]byte{0x44, 0x00}, u16(len(ids)))
	for _, id := range ids {
		it := b.items.byID[id]
		p = cat(p, u16(int(id)), u16(it.method), u16(0), u16(len(it.extents)))
		for _, e := range it.extents {
			off := e.offset
			switch {
			case off >= extraAt:
				off = extraStart + off - extraAt
			case it.method == 0 && off >= int64(b.meta.end):
				off += delta
			}
			p = cat(p, u32(int(off)), u32(int(e.length)))
		}
	}
	return fullBox("iloc", 1, p)
}

// bytes assembles the file; only the first iloc box is rewritten, others
// (a hostile second one) stay as given.
func (b *heicBuild) bytes() []byte {
	assemble := func(iloc []byte) []byte {
		children := slices.Clone(b.children)
		children[b.index("iloc")] = iloc
		meta := fullBox("meta", 0, children...)
		out := cat(b.in[:b.meta.start], meta, b.in[b.meta.end:])
		if len(b.extra) > 0 {
			out = append(out, isoBox("mdat", b.extra)...)
		}
		return append(out, b.tail...)
	}
	sized := assemble(b.iloc(0, 0)) // the iloc's size does not depend on its offsets
	delta := int64(len(sized) - len(b.in) - len(b.tail))
	if len(b.extra) > 0 {
		delta -= 8 + int64(len(b.extra))
	}
	return assemble(b.iloc(delta, int64(len(b.in))+delta+8))
}

// editProperties rebuilds iprp with ipco's properties (whole boxes) as edit
// returns them: ipma refers to them by index, so edit may change them in
// place or append, not move them.
func (b *heicBuild) editProperties(edit func(props [][]byte) [][]byte) {
	b.editChild("iprp", func(old []byte) []byte {
		kids, err := boxesIn(old, 8, len(old))
		if err != nil {
			b.t.Fatal(err)
		}
		var props [][]byte
		var rest []byte
		for _, k := range kids {
			if k.typ != "ipco" {
				rest = append(rest, old[k.start:k.end]...)
				continue
			}
			ps, err := boxesIn(old, k.payload, k.end)
			if err != nil {
				b.t.Fatal(err)
			}
			for _, p := range ps {
				props = append(props, old[p.start:p.end])
			}
		}
		return isoBox("iprp", isoBox("ipco", edit(props)...), rest)
	})
}

// editProperty replaces the payload of ipco's first property of type typ.
func (b *heicBuild) editProperty(typ string, edit func(payload []byte) []byte) {
	b.editProperties(func(props [][]byte) [][]byte {
		i := slices.IndexFunc(props, func(p []byte) bool { return string(p[4:8]) == typ })
		if i < 0 {
			b.t.Fatalf("sample has no %s property", typ)
		}
		props[i] = isoBox(typ, edit(slices.Clone(props[i][8:])))
		return props
	})
}
