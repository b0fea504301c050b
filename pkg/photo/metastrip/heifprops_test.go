package metastrip

import (
	"bytes"
	"strings"
	"testing"
)

// TestHEIFVariablePropertiesWalkedToTheirLastByte checks the walkers of
// hvcC, av1C and auxC on the shapes the hostile files do not build: what
// each keeps byte for byte, what it zeroes, and what it refuses.
func TestHEIFVariablePropertiesWalkedToTheirLastByte(t *testing.T) {
	vps := []byte{hevcVPS << 1, 1, 0x0C, 0x01}
	hvcC := func(arrays ...[]byte) []byte {
		return cat(make([]byte, hvcCFields), []byte{byte(len(arrays))}, cat(arrays...))
	}
	array := func(typ byte, nals ...[]byte) []byte {
		b := cat([]byte{0x80 | typ}, u16(len(nals)))
		for _, n := range nals {
			b = cat(b, u16(len(n)), n)
		}
		return b
	}
	seq := []byte{av1SequenceHeader<<3 | 2, 2, 0xAB, 0xCD}
	av1C := func(obus ...[]byte) []byte { return cat([]byte{0x81, 0, 0x0C, 0}, cat(obus...)) }
	name := []byte(ownerName)
	for _, c := range []struct {
		name    string
		clean   func([]byte) (bool, error)
		in      []byte
		want    []byte // nil: refused
		changed bool
	}{
		{"hvcC parameter sets kept", cleanHvcC, hvcC(array(hevcVPS, vps)), hvcC(array(hevcVPS, vps)), false},
		{"hvcC suffix SEI in a VPS array", cleanHvcC, hvcC(array(hevcVPS, vps, cat([]byte{40 << 1, 1}, name))),
			hvcC(array(hevcVPS, vps, cat([]byte{hevcUnspecified << 1, 1}, make([]byte, len(name))))), true},
		{"hvcC NAL unit past the record", cleanHvcC, hvcC(array(hevcVPS, vps))[:hvcCFields+8], nil, false},
		{"hvcC fields cut", cleanHvcC, make([]byte, hvcCFields), nil, false},
		{"av1C sequence header kept", cleanAv1C, av1C(seq), av1C(seq), false},
		{"av1C metadata OBU without a size runs to the end", cleanAv1C, av1C(seq, []byte{5 << 3}, name),
			av1C(seq, []byte{av1Padding << 3}, make([]byte, len(name))), true},
		{"av1C metadata OBU with an extension byte", cleanAv1C, av1C(seq, []byte{5<<3 | 6, 0x20, byte(len(name))}, name),
			av1C(seq, []byte{av1Padding<<3 | 6, 0x20, byte(len(name))}, make([]byte, len(name))), true},
		{"av1C OBU size past the record", cleanAv1C, av1C(seq, []byte{5<<3 | 2, 100}, name), nil, false},
		{"av1C fields cut", cleanAv1C, []byte{0x81, 0}, nil, false},
		{"auxC depth URN kept", cleanAuxC, []byte("\x00\x00\x00\x00urn:mpeg:mpegB:cicp:systems:auxiliary:depth\x00"),
			[]byte("\x00\x00\x00\x00urn:mpeg:mpegB:cicp:systems:auxiliary:depth\x00"), false},
		{"auxC known URN without its NUL", cleanAuxC, []byte("\x00\x00\x00\x00urn:mpeg:hevc:2015:auxid:1"),
			make([]byte, 4+len("urn:mpeg:hevc:2015:auxid:1")), true},
		{"auxC cut", cleanAuxC, []byte{0, 0}, nil, false},
		{"pixi of three channels", cleanPixi, []byte{0, 0, 0, 0, 3, 8, 8, 8}, []byte{0, 0, 0, 0, 3, 8, 8, 8}, false},
		{"pixi shorter than its channels", cleanPixi, []byte{0, 0, 0, 0, 3, 8, 8}, nil, false},
		{"pixi version 1", cleanPixi, []byte{1, 0, 0, 0, 1, 8}, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := bytes.Clone(c.in)
			changed, err := c.clean(b)
			switch {
			case c.want == nil && err == nil:
				t.Fatalf("accepted, want refused: %x", b)
			case c.want == nil:
				t.Logf("refused: %v", err)
			case err != nil:
				t.Fatalf("refused: %v", err)
			case !bytes.Equal(b, c.want) || changed != c.changed:
				t.Fatalf("got %x (changed %v), want %x (changed %v)", b, changed, c.want, c.changed)
			case strings.Contains(string(b), ownerName):
				t.Fatal("the owner's name is still there")
			}
		})
	}
}

// TestHEIFIlocLongerThanItsItemsIsRefused: bytes after iloc's last item
// would be sent unread.
func TestHEIFIlocLongerThanItsItemsIsRefused(t *testing.T) {
	b := splitHEIC(t, sample(t, "exif-gps-phone.heic"))
	iloc := b.iloc(0, 0)
	x := &heifItems{byID: map[uint32]*heifItem{}}
	if err := x.readIloc(iloc[8:]); err != nil {
		t.Fatalf("the sample's own iloc: %v", err)
	}
	if err := x.readIloc(cat(iloc[8:], []byte(ownerName))); err == nil {
		t.Fatal("an iloc with the owner's name after its items was read")
	}
}
