package metastrip

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// The kept HEIF boxes whose length is not fixed: the decoder configurations
// (hvcC, av1C), the auxiliary image type (auxC) and meta's data references
// (dinf). Each is walked to its last byte by its own syntax: what the
// syntax does not account for is refused (it would be sent unread), and
// the parts that can hold any bytes (SEI NAL units, metadata OBUs, a URN
// other than alpha's or depth's, a data entry's URL) become zeros of a kind
// every decoder skips. Nothing moves, so every offset stays valid.

// Auxiliary image types whose URN auxC keeps (ISO/IEC 23008-12 6.5.8,
// 23008-2 F.7.3.6 for HEVC, MPEG-B CICP for AV1-AVIF): alpha and depth.
// Any other URN (vendors' gain maps and mattes among them) is zeroed: the
// image stays, shown by no reader as anything but an unknown auxiliary.
var heifAuxTypes = map[string]bool{
	"urn:mpeg:hevc:2015:auxid:1":                  true,
	"urn:mpeg:hevc:2015:auxid:2":                  true,
	"urn:mpeg:mpegB:cicp:systems:auxiliary:alpha": true,
	"urn:mpeg:mpegB:cicp:systems:auxiliary:depth": true,
}

// zeroed clears b and reports whether it held anything but zeros.
func zeroed(b []byte) bool {
	held := bytes.ContainsFunc(b, func(r rune) bool { return r != 0 })
	clear(b)
	return held
}

// cleanAuxC keeps, of an auxC payload (version and flags, aux_type, a NUL,
// aux_subtype), the version and flags and a known aux_type: an unknown
// URN, and whatever follows the NUL (aux_subtype, whose meaning is the
// type's and which no decoder of the picture needs), become zeros.
func cleanAuxC(p []byte) (bool, error) {
	if len(p) < 4 {
		return false, errors.New("auxC property shorter than its version and flags")
	}
	urn := p[4:]
	keep := 0
	if i := bytes.IndexByte(urn, 0); i >= 0 && heifAuxTypes[string(urn[:i])] {
		keep = i + 1
	}
	return zeroed(urn[keep:]), nil
}

// HEVC NAL unit types (ITU-T H.265 table 7-1) a configuration record keeps;
// any other, SEI (39, 40: user data, x265's settings) included, becomes an
// unspecified one (48), which decoders ignore (H.265 7.4.2.2), of zeros.
const (
	hevcVPS, hevcSPS, hevcPPS = 32, 33, 34
	hevcUnspecified           = 48
	hvcCFields                = 22 // HEVCDecoderConfigurationRecord before numOfArrays
)

// cleanHvcC walks an HEVCDecoderConfigurationRecord (ISO/IEC 14496-15
// 8.3.3.1.2): its fields, then numOfArrays arrays of NAL units, each with
// a 16-bit length. A record longer or shorter than its arrays is refused.
func cleanHvcC(p []byte) (bool, error) {
	r := &bin{b: p}
	r.skip(hvcCFields)
	changed := false
	for arrays := int(r.u8()); arrays > 0 && !r.bad; arrays-- {
		at := r.pos
		if typ := r.u8() & 0x3F; !r.bad && typ != hevcVPS && typ != hevcSPS && typ != hevcPPS {
			p[at] = p[at]&0xC0 | hevcUnspecified
			changed = true
		}
		for n := r.u16(); n > 0 && !r.bad; n-- {
			nal := r.take(int(r.u16()))
			if r.bad || len(nal) == 0 {
				continue
			}
			if typ := nal[0] >> 1 & 0x3F; typ == hevcVPS || typ == hevcSPS || typ == hevcPPS {
				continue
			}
			changed = true
			clear(nal)
			if len(nal) >= 2 {
				// forbidden_zero_bit 0, nuh_layer_id 0, nuh_temporal_id_plus1 1.
				nal[0], nal[1] = hevcUnspecified<<1, 1
			}
		}
	}
	switch {
	case r.bad:
		return false, errors.New("hvcC property shorter than its NAL unit arrays")
	case r.pos != len(p):
		return false, fmt.Errorf("hvcC property of %d bytes, longer than its %d of NAL unit arrays", len(p), r.pos)
	}
	return changed, nil
}

// AV1 OBU types (AV1 bitstream 6.2.2) an av1C keeps: the sequence header.
// Any other, metadata (5: ITU-T T.35 user data among them) included,
// becomes padding (15), which decoders skip, of zeros.
const (
	av1SequenceHeader, av1Padding = 1, 15
	av1CFields                    = 4 // AV1CodecConfigurationRecord before configOBUs
)

// cleanAv1C walks an AV1CodecConfigurationRecord (AV1-ISOBMFF 2.3.3): its
// four bytes of fields, then configOBUs, each an OBU header (AV1 5.3.2)
// with its leb128 size, or running to the end without one. An OBU whose
// size runs past the record is refused.
func cleanAv1C(p []byte) (bool, error) {
	if len(p) < av1CFields {
		return false, fmt.Errorf("av1C property of %d bytes, shorter than its %d of fields", len(p), av1CFields)
	}
	changed, seqHeaders := false, 0
	for pos := av1CFields; pos < len(p); {
		h := p[pos]
		hdr := 1
		if h&0x04 != 0 { // obu_extension_flag
			hdr = 2
		}
		if pos+hdr > len(p) {
			return false, errors.New("av1C configOBU header cut")
		}
		size := len(p) - pos - hdr
		if h&0x02 != 0 { // obu_has_size_field
			v, n := binary.Uvarint(p[pos+hdr:])
			if n <= 0 || v > uint64(len(p)-pos-hdr-n) {
				return false, errors.New("av1C configOBU runs past the property")
			}
			hdr, size = hdr+n, int(v)
		}
		if h>>3&0x0F == av1SequenceHeader {
			// AV1-ISOBMFF 2.3.4: at most one; a second would be kept
			// whole, so its bytes would go unread.
			if seqHeaders++; seqHeaders > 1 {
				return false, errors.New("av1C holds more than one sequence header OBU")
			}
		} else {
			if h>>3&0x0F != av1Padding {
				changed = true
				p[pos] = h&^0x78 | av1Padding<<3
			}
			changed = zeroed(p[pos+hdr:pos+hdr+size]) || changed
		}
		pos += hdr + size
	}
	return changed, nil
}

// cleanPixi checks a pixi property (ISO/IEC 23008-12 6.5.6, version 0):
// version and flags, num_channels, then one bits_per_channel byte each.
// Any other length, or another version, is refused: its bytes would be
// sent unread.
func cleanPixi(p []byte) (bool, error) {
	if len(p) < 5 || p[0] != 0 || len(p) != 5+int(p[4]) {
		return false, fmt.Errorf("pixi property of %d bytes, not the version 0 record of its channels", len(p))
	}
	return false, nil
}

// cleanDinf zeroes, in meta's dinf box (ISO/IEC 14496-12 8.7.1, 8.7.2),
// every data entry of dref after its version and flags (a url or urn
// entry's location and name), and blanks any other box in it. No entry is
// read: an item whose data is elsewhere than in this file is refused
// (readIloc), so zeros change what no reader uses.
func cleanDinf(r *Reader, buf []byte, dinf box) error {
	children, err := boxesIn(buf, dinf.payload, dinf.end)
	if err != nil {
		return err
	}
	for _, c := range children {
		if c.typ != "dref" {
			blankBox(r, buf, c, KindOther)
			continue
		}
		if c.end-c.payload < 8 {
			return errors.New("HEIF dref box too short")
		}
		entries, err := boxesIn(buf, c.payload+8, c.end)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.end-e.payload < 4 {
				return fmt.Errorf("HEIF dref entry %q too short", e.typ)
			}
			if zeroed(buf[e.payload+4 : e.end]) {
				r.removed(KindOther, 0)
			}
		}
	}
	return nil
}
