package metastrip

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
)

// JPEG (ITU T.81, JFIF, EXIF 2.32 section 4.5.4). Segments are kept by an
// allow list: what decoders need (SOFn, DHT, DQT, DRI, SOS and the scans) and
// what changes how the picture looks: APP0 JFIF/JFXX, APP2 ICC_PROFILE and
// APP14 Adobe (its colour transform). APP1 Exif becomes a minimal Exif
// segment holding only Orientation; every other APPn (XMP and extended XMP,
// APP13 IPTC/Photoshop, APP2 MPF and FlashPix, APP11 JUMBF/C2PA, vendors'),
// COM, and everything after the primary image's EOI (MPF secondary images
// such as HDR gain maps, motion-photo video, vendor trailers) is blanked.
//
// A segment is blanked with fill bytes (0xFF): T.81 B.1.1.2 lets any number
// of them precede a marker, so the file stays exactly as long, needs no
// segment of its own, and every decoder skips them.

// jpegFill is the byte a blanked segment becomes.
const jpegFill = 0xFF

// Identifiers of the APPn segments told apart (with their NUL).
var (
	idJFIF      = []byte("JFIF\x00")
	idJFXX      = []byte("JFXX\x00")
	idExif      = []byte("Exif\x00") // the second NUL is sometimes 0xFF
	idXMP       = []byte("http://ns.adobe.com/xap/1.0/\x00")
	idXMPExt    = []byte("http://ns.adobe.com/xmp/extension/\x00")
	idICC       = []byte("ICC_PROFILE\x00")
	idAdobe     = []byte("Adobe")
	jpegIDPeek  = 4 + len(idXMPExt) // marker, length and the longest identifier
	jpegExifHdr = 4 + 6             // marker, length, "Exif\0\0"
)

type jpegPhase int

const (
	jpegStart   jpegPhase = iota // SOI expected
	jpegHeader                   // a marker expected
	jpegEntropy                  // entropy-coded data of a scan
	jpegTrailer                  // after EOI
)

type jpegStepper struct{ phase jpegPhase }

func (j *jpegStepper) step(r *Reader) error {
	switch j.phase {
	case jpegStart:
		if _, err := r.need(2); err != nil {
			return err
		}
		r.copyN(2) // SOI: New recognised FF D8 FF
		j.phase = jpegHeader
		return nil
	case jpegEntropy:
		return j.entropy(r)
	case jpegTrailer:
		if b, err := r.peek(1); err != nil || len(b) == 0 {
			return cmpErr(err, io.EOF)
		}
		r.removed(KindTrailer, 0)
		r.fillRest(0, KindTrailer)
		return io.EOF
	}
	return j.marker(r)
}

// marker handles what follows a segment: a marker, possibly after fill
// bytes, or junk that belongs to no segment (zeroed, as libjpeg skips it).
func (j *jpegStepper) marker(r *Reader) error {
	b, err := r.peek(2)
	switch {
	case err != nil:
		return err
	case len(b) == 0:
		return io.EOF // the file ends without EOI: nothing more to send
	case b[0] != 0xFF:
		buf, _ := r.peek(r.src.Buffered())
		n := bytes.IndexByte(buf, 0xFF)
		if n < 0 {
			n = len(buf)
		}
		r.fill(int64(n), 0, KindJunk)
		return nil
	case len(b) < 2:
		r.copyN(1) // a last fill byte: harmless, and what a blanked last segment leaves
		return nil
	}
	m := b[1]
	switch {
	case m == 0xFF: // fill bytes: copy the run but its last 0xFF, which starts the marker
		buf, _ := r.peek(r.src.Buffered())
		n := 0
		for n < len(buf) && buf[n] == 0xFF {
			n++
		}
		r.copyN(int64(max(n-1, 1)))
		return nil
	case m == 0x00: // a stuffed zero outside a scan: junk
		r.fill(2, 0, KindJunk)
		return nil
	case m == 0xD9: // EOI
		r.copyN(2)
		j.phase = jpegTrailer
		return nil
	case m >= 0xD0 && m <= 0xD7: // RSTn: no length
		r.copyN(2)
		return nil
	case m >= 0xE0 && m <= 0xEF, m == 0xFE, jpegTables[m]:
		return j.segment(r, m)
	}
	// Any other marker (a second SOI, TEM, the reserved FF02-FFBF, JPEG
	// 2000's FF4F or FF92, JPEG-LS's, hierarchical DHP and EXP, JPGn) may
	// or may not have a length, depending on the reader: exiftool and a
	// decoder could see a segment where the stripper sees another.
	return r.problem("JPEG marker FF%02X is not one a baseline, progressive or lossless JPEG holds", m)
}

// jpegTables are the markers, other than APPn and COM, followed by a
// segment the picture needs (ITU T.81 B.1.1.3, table B.1): SOFn, DHT, DAC,
// DQT, DRI, DNL, SOS.
var jpegTables = func() map[byte]bool {
	m := map[byte]bool{0xC4: true, 0xCC: true, 0xDA: true, 0xDB: true, 0xDC: true, 0xDD: true}
	for sof := byte(0xC0); sof <= 0xCF; sof++ {
		if sof != 0xC4 && sof != 0xC8 && sof != 0xCC {
			m[sof] = true
		}
	}
	return m
}()

// jpegTableLen is how many bytes of p, the payload of a table segment m,
// its fields take (T.81 B.2.2 to B.2.4, B.5): libjpeg refuses a segment
// whose length says otherwise, and bytes past the fields would be sent
// unread, so such a segment is a problem. It returns -1 when the fields do
// not fit in p.
func jpegTableLen(m byte, p []byte) int {
	switch {
	case m == 0xDD || m == 0xDC: // DRI, DNL
		return 2
	case m == 0xDA: // SOS: Ns, Ns component specs, Ss, Se, Ah/Al
		if len(p) < 1 {
			return -1
		}
		return 1 + 2*int(p[0]) + 3
	case m == 0xCC: // DAC: conditioning entries of two bytes
		return len(p) - len(p)%2
	case m == 0xDB: // DQT: tables of 64 entries, of one or two bytes
		n := 0
		for n < len(p) {
			n += 1 + 64*(1+int(p[n]>>4))
		}
		return n
	case m == 0xC4: // DHT: class/id, 16 counts, the values
		n := 0
		for n < len(p) {
			if n+17 > len(p) {
				return -1
			}
			k := 17
			for _, c := range p[n+1 : n+17] {
				k += int(c)
			}
			n += k
		}
		return n
	}
	// SOFn: precision, height, width, Nf, Nf component specs.
	if len(p) < 6 {
		return -1
	}
	return 6 + 3*int(p[5])
}

// JFIF (JPEG File Interchange Format 1.02) and Adobe APP14 segments have a
// fixed payload: what follows it (a JFIF thumbnail's pixels, anything at
// all) is no colour information and is blanked.
const (
	jfifLen  = 2 + 14 // length field and "JFIF\0", version, units, densities, thumbnail size
	adobeLen = 2 + 12 // length field and "Adobe", version, flags0, flags1, transform
)

// segment handles a marker segment: FF m, a two-byte length, the payload.
func (j *jpegStepper) segment(r *Reader, m byte) error {
	b, err := r.peek(jpegIDPeek)
	if err != nil {
		return err
	}
	if len(b) < 4 {
		return errTruncated
	}
	length := int(binary.BigEndian.Uint16(b[2:4]))
	if length < 2 {
		return r.problem("JPEG segment FF%02X of length %d", m, length)
	}
	total := int64(2 + length)
	id := b[4:min(len(b), 2+length)] // the identifier cannot run past the segment
	kind := ""
	switch {
	case m == 0xE0 && bytes.HasPrefix(id, idJFIF) && length >= jfifLen:
		return j.fixed(r, length, jfifLen, func(seg []byte) { seg[16], seg[17] = 0, 0 }) // no thumbnail
	case m == 0xE0 && bytes.HasPrefix(id, idJFXX):
		kind = KindPreview // a thumbnail, a JPEG one with its own APP1 included
	case m == 0xE1 && bytes.HasPrefix(id, idExif):
		return j.exif(r, length)
	case m == 0xE1 && (bytes.HasPrefix(id, idXMP) || bytes.HasPrefix(id, idXMPExt)):
		kind = KindXMP
	case m == 0xE2 && bytes.HasPrefix(id, idICC):
		return j.icc(r, length)
	case m == 0xED:
		kind = KindIPTC
	case m == 0xEE && bytes.HasPrefix(id, idAdobe) && length >= adobeLen:
		return j.fixed(r, length, adobeLen, nil)
	case m >= 0xE0 && m <= 0xEF:
		kind = KindOther
	case m == 0xFE:
		kind = KindComment
	}
	if kind != "" {
		r.removed(kind, 0)
		r.fill(total, jpegFill, kind)
		return nil
	}
	if jpegTables[m] {
		seg, err := r.peek(int(total)) // at most 65,537 bytes: within the buffer
		if err != nil {
			return err
		}
		if int64(len(seg)) < total {
			return errTruncated
		}
		if n := jpegTableLen(m, seg[4:]); n != length-2 {
			return r.problem("JPEG segment FF%02X of %d bytes, whose fields take %d", m, length-2, n)
		}
	}
	r.copyN(total)
	if m == 0xDA { // SOS: its scan's entropy-coded data follows
		j.phase = jpegEntropy
	}
	return nil
}

// fixed keeps the first keep bytes of the payload of a segment whose
// length is length (keep included), its length field set to keep and
// edited by patch (given the segment from its marker), and blanks the rest
// with fill bytes.
func (j *jpegStepper) fixed(r *Reader, length, keep int, patch func(seg []byte)) error {
	seg, err := r.peek(2 + keep)
	if err != nil {
		return err
	}
	if len(seg) < 2+keep {
		return errTruncated
	}
	out := append([]byte(nil), seg...)
	binary.BigEndian.PutUint16(out[2:], uint16(keep))
	if patch != nil {
		patch(out)
	}
	if length == keep && bytes.Equal(seg, out) {
		r.copyN(int64(2 + keep))
		return nil
	}
	r.removed(KindOther, 0)
	r.note(func(rep *Report) { rep.add(KindOther, 0, int64(length-keep)) })
	r.emit(out)
	r.fill(int64(length-keep), jpegFill, "")
	return nil
}

// icc keeps an APP2 ICC_PROFILE segment that holds a whole profile (a
// chunk of 1 of 1), its descriptive fields blanked (sanitizeICC). A profile
// split over several segments is blanked whole: its tags may lie in
// segments not yet read, and so is a profile that cannot be read: without
// it the picture is shown as sRGB, and nothing of it is sent.
func (j *jpegStepper) icc(r *Reader, length int) error {
	total := 2 + length
	seg, err := r.peek(total) // at most 65,537 bytes: within the buffer
	if err != nil {
		return err
	}
	if len(seg) < total {
		return errTruncated
	}
	hdr := 4 + len(idICC) + 2 // marker, length, identifier, chunk number and count
	out := append([]byte(nil), seg...)
	changed, err := false, errors.New("ICC profile split over several segments")
	if total >= hdr && seg[hdr-2] == 1 && seg[hdr-1] == 1 {
		changed, err = sanitizeICC(out[hdr:])
	}
	if err != nil {
		r.removed(KindOther, 0)
		r.fill(int64(total), jpegFill, KindOther)
		return nil
	}
	if !changed {
		r.copyN(int64(total))
		return nil
	}
	r.removed(KindOther, 0)
	r.emit(out)
	return nil
}

// exif replaces an APP1 Exif segment with a minimal one holding only
// Orientation, followed by fill bytes up to the segment's length.
func (j *jpegStepper) exif(r *Reader, length int) error {
	total := 2 + length
	seg, err := r.peek(total) // at most 65,537 bytes: within the buffer
	if err != nil {
		return err
	}
	min := jpegExifHdr + minimalEXIFLen
	var tiff []byte
	if len(seg) > jpegExifHdr {
		tiff = seg[jpegExifHdr:]
	}
	if total < min {
		r.removed(KindEXIF, 0)
		r.fill(int64(total), jpegFill, KindEXIF)
		return nil
	}
	o := max(orientation(tiff), 1)
	out := make([]byte, 0, min)
	out = append(out, 0xFF, 0xE1)
	out = binary.BigEndian.AppendUint16(out, uint16(min-2))
	out = append(out, "Exif\x00\x00"...)
	out = append(out, minimalEXIF(o)...)
	r.note(func(rep *Report) { rep.Orientation = o })
	if total == min && bytes.Equal(seg, out) {
		r.copyN(int64(total)) // already minimal: nothing to report
		return nil
	}
	r.removed(KindEXIF, int64(min))
	r.emit(out)
	r.fill(int64(total-min), jpegFill, KindEXIF)
	return nil
}

// entropy copies a scan's entropy-coded data up to the next marker: 0xFF is
// always followed by a stuffed 0x00, a restart marker, a fill byte or the
// marker that ends the scan. It copies everything buffered up to that marker
// in one op: a 10 MB scan has some 40,000 stuffed bytes.
func (j *jpegStepper) entropy(r *Reader) error {
	buf, err := r.peek(max(r.src.Buffered(), 2))
	if err != nil {
		return err
	}
	switch len(buf) {
	case 0:
		return io.EOF
	case 1:
		r.copyN(1) // the file ends inside the scan
		return nil
	}
	for i := 0; i < len(buf); {
		k := bytes.IndexByte(buf[i:], 0xFF)
		if k < 0 {
			r.copyN(int64(len(buf)))
			return nil
		}
		i += k
		if i+1 == len(buf) {
			// The byte after this 0xFF is not buffered yet: copy up to
			// it, and decide on the next step.
			r.copyN(int64(max(i, 1)))
			return nil
		}
		switch m := buf[i+1]; {
		case m == 0x00, m >= 0xD0 && m <= 0xD7:
			i += 2
		case m == 0xFF:
			i++
		default:
			r.copyN(int64(i))
			j.phase = jpegHeader
			return nil
		}
	}
	r.copyN(int64(len(buf)))
	return nil
}
