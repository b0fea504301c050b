package metastrip

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// ICC profiles (ICC.1:2022, also ISO 15076-1), as JPEG APP2, WebP ICCP and
// HEIF colr boxes carry them. A profile says how the pixels' numbers become
// colours, and what a colour engine needs of it is the header's colour
// fields and the colour tags. Its other fields can carry who made the
// picture: the header's creation time, device manufacturer and model,
// device attributes, creator and profile ID; tags such as desc, dmnd, dmdd,
// cprt, vued, meta (a free dictionary), pseq, targ or calt hold any text or
// time a writer likes, and bytes no tag points at hold anything.
// sanitizeICC keeps the header's colour fields and the colour tags of
// iccColourTags, zeroes those header fields, and zeroes every other byte but
// the type signature of a text-type tag (iccTextTypes): a text, mluc,
// textDescription or dict tag of zeros reads as empty, and a tag of another
// type becomes zeros altogether. Nothing moves, so the profile's length and
// its tag table stay valid.

// ICC header fields that are not colour: offset and length in the profile.
var iccHeaderBlank = [][2]int{
	{24, 12}, // creation date and time
	{48, 4},  // device manufacturer
	{52, 4},  // device model
	{56, 8},  // device attributes
	{80, 4},  // profile creator
	{84, 16}, // profile ID (an MD5 of the profile: 0 means not computed)
}

// iccColourTags are the tags a colour engine reads to convert colours
// (ICC.1:2022 section 8, the required and optional tags of each profile
// class that hold colour data, not text).
var iccColourTags = map[string]bool{
	"A2B0": true, "A2B1": true, "A2B2": true, "A2B3": true, "A2M0": true,
	"B2A0": true, "B2A1": true, "B2A2": true, "B2A3": true,
	"D2B0": true, "D2B1": true, "D2B2": true, "D2B3": true,
	"B2D0": true, "B2D1": true, "B2D2": true, "B2D3": true,
	"rXYZ": true, "gXYZ": true, "bXYZ": true, "rTRC": true, "gTRC": true, "bTRC": true,
	"kTRC": true, "wtpt": true, "bkpt": true, "chad": true, "chrm": true, "cicp": true,
	"lumi": true, "gamt": true, "clro": true,
}

// iccTextTypes are the tag types whose signature a blanked tag keeps, as
// a zero body reads as an empty one of them (ICC.1:2022 10.24, 10.15,
// ICC.1:2001-04 6.5.17, ICC.1:2022 10.9).
var iccTextTypes = map[string]bool{"text": true, "mluc": true, "desc": true, "dict": true}

const (
	iccHeaderLen = 128
	iccTagLen    = 12
	iccSigLen    = 4 // a tag's type signature
)

// sanitizeICC edits the profile p in place as above and reports whether it
// changed anything. It keeps by allow list: the header, the tag table, the
// colour tags' data and the text-type signatures; every other byte (the
// other tags' data, bytes between tags, bytes past the last one) becomes
// zero. A profile whose header or tag table does not fit in p, or whose tag
// lies outside it, is an error: it cannot be shown to hold nothing else.
func sanitizeICC(p []byte) (bool, error) {
	if len(p) < iccHeaderLen+4 {
		return false, fmt.Errorf("ICC profile of %d bytes, shorter than its header", len(p))
	}
	if string(p[36:40]) != "acsp" {
		return false, fmt.Errorf("ICC profile without its acsp signature")
	}
	changed := false
	zero := func(b []byte) {
		for i := range b {
			if b[i] != 0 {
				changed = true
				b[i] = 0
			}
		}
	}
	count := int(binary.BigEndian.Uint32(p[iccHeaderLen:]))
	table := iccHeaderLen + 4
	if count > (len(p)-table)/iccTagLen {
		return false, fmt.Errorf("ICC tag table of %d tags does not fit in a %d-byte profile", count, len(p))
	}
	// keep lists the ranges of p that stay, as start and end.
	keep := [][2]int{{0, table + count*iccTagLen}}
	for i := range count {
		e := p[table+i*iccTagLen:]
		sig := string(e[:4])
		off, size := int64(binary.BigEndian.Uint32(e[4:])), int64(binary.BigEndian.Uint32(e[8:]))
		if off+size > int64(len(p)) || off < int64(table+count*iccTagLen) {
			return false, fmt.Errorf("ICC tag %q at %d+%d lies outside the %d-byte profile's data", sig, off, size, len(p))
		}
		switch {
		case iccColourTags[sig]:
			keep = append(keep, [2]int{int(off), int(off + size)})
		case size >= iccSigLen && iccTextTypes[string(p[off:off+iccSigLen])]:
			keep = append(keep, [2]int{int(off), int(off) + iccSigLen})
		}
	}
	slices.SortFunc(keep, func(a, b [2]int) int { return a[0] - b[0] })
	at := 0
	for _, k := range keep {
		if k[0] > at {
			zero(p[at:k[0]])
		}
		at = max(at, k[1])
	}
	zero(p[at:])
	for _, f := range iccHeaderBlank {
		zero(p[f[0] : f[0]+f[1]])
	}
	return changed, nil
}
