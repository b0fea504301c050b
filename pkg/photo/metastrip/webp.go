package metastrip

import (
	"encoding/binary"
	"io"
)

// WebP (RIFF container, RFC 9649). The image chunks pass (VP8, VP8L, ALPH,
// ANIM, and ANMF frames, walked for the image chunks they hold), as do VP8X
// and ICCP (its profile's descriptive fields blanked). The EXIF chunk keeps its size and holds
// the minimal EXIF block (Orientation only), so VP8X's EXIF flag stays true;
// XMP and every unknown chunk become JUNK chunks of zeros (RIFF's padding,
// which readers skip) and VP8X's XMP flag is cleared. Since no chunk changes
// size, the RIFF size in the header, written before any chunk is seen, stays
// right without buffering the chunk list. Bytes past the RIFF size are
// zeroed.

const webpPadType = "JUNK"

// VP8X flag bits (RFC 9649 section 2.7).
const webpXMPFlag = 0x04

type webpStepper struct {
	started bool
	end     int64 // where the RIFF size says the file ends
	trailer bool
	// frameEnd is where the ANMF frame being walked ends, 0 outside one:
	// a frame holds its image chunks and, the format allows, unknown
	// chunks, which are blanked like those outside it.
	frameEnd int64
}

// webpChunkLen are the chunks of a fixed size (RFC 9649 sections 2.7 and
// 2.7.1.1): bytes past their fields would be sent unread.
var webpChunkLen = map[string]int64{"VP8X": 10, "ANIM": 6}

// webpFrameHeader is the part of an ANMF chunk's payload before its
// sub-chunks: position, size, duration and flags (RFC 9649 section 2.7.1.1).
const webpFrameHeader = 16

func (s *webpStepper) step(r *Reader) error {
	if !s.started {
		h, err := r.need(12)
		if err != nil {
			return err
		}
		s.end = 8 + int64(binary.LittleEndian.Uint32(h[4:8]))
		s.started = true
		r.copyN(12)
		return nil
	}
	at := r.pos + r.queued()
	if s.trailer || at >= s.end {
		if b, err := r.peek(1); err != nil || len(b) == 0 {
			return cmpErr(err, io.EOF)
		}
		r.removed(KindTrailer, 0)
		r.fillRest(0, KindTrailer)
		return io.EOF
	}
	if s.frameEnd != 0 && at >= s.frameEnd {
		s.frameEnd = 0
	}
	h, err := r.need(8)
	if err != nil {
		return err
	}
	fourcc := string(h[:4])
	size := int64(binary.LittleEndian.Uint32(h[4:8]))
	padded := size + size&1
	if s.frameEnd != 0 && at+8+padded > s.frameEnd {
		return r.problem("WebP chunk %q runs past its ANMF frame", fourcc)
	}
	switch inFrame := s.frameEnd != 0; {
	case inFrame && fourcc != "VP8 " && fourcc != "VP8L" && fourcc != "ALPH":
		fourcc = "" // anything else in a frame is blanked below
	case fourcc == "ANMF" && !inFrame && padded >= webpFrameHeader:
		r.copyN(8 + webpFrameHeader)
		s.frameEnd = at + 8 + padded
		return nil
	}
	if n, fixed := webpChunkLen[fourcc]; fixed && size != n {
		return r.problem("WebP %q chunk of %d bytes, not %d", fourcc, size, n)
	}
	switch fourcc {
	case "VP8 ", "VP8L", "ALPH", "ANIM":
		r.copyN(8 + padded)
	case "ICCP":
		s.icc(r, h, size, padded)
	case "VP8X":
		b, err := r.peek(int(min(8+size, 9)))
		if err != nil {
			return err
		}
		if len(b) < 9 || b[8]&webpXMPFlag == 0 {
			r.copyN(8 + padded)
			break
		}
		out := append([]byte(nil), b[:9]...)
		out[8] &^= webpXMPFlag
		r.emit(out)
		r.copyN(padded - 1)
	case "EXIF":
		s.exif(r, h, size, padded)
	case webpPadType:
		r.emit(append([]byte(nil), h[:8]...))
		r.fill(padded, 0, "") // blanked already, or posing as such
	default:
		kind := KindOther
		if fourcc == "XMP " {
			kind = KindXMP
		}
		hdr := append([]byte(webpPadType), h[4:8]...)
		r.removed(kind, 8)
		r.emit(hdr)
		r.fill(padded, 0, kind)
	}
	return nil
}

// icc keeps the ICCP chunk, its profile's descriptive fields blanked
// (sanitizeICC). A profile longer than the read buffer, or one that cannot
// be read, becomes zeros (VP8X's ICC flag stays, and readers hand the
// application an empty profile: nothing of it is sent).
func (s *webpStepper) icc(r *Reader, h []byte, size, padded int64) {
	b, _ := r.peek(int(min(8+padded, maxEXIFPeek)))
	if int64(len(b)) == 8+padded {
		out := append([]byte(nil), b...)
		changed, err := sanitizeICC(out[8 : 8+size])
		switch {
		case err == nil && !changed:
			r.copyN(8 + padded)
			return
		case err == nil:
			r.removed(KindOther, 0)
			r.emit(out)
			return
		}
	}
	r.removed(KindOther, 0)
	r.emit(append([]byte(nil), h[:8]...))
	r.fill(padded, 0, KindOther)
}

// exif keeps the EXIF chunk's size and puts the minimal EXIF block in it,
// after the "Exif\0\0" prefix some writers put there.
func (s *webpStepper) exif(r *Reader, h []byte, size, padded int64) {
	b, _ := r.peek(int(min(8+size, maxEXIFPeek)))
	var data []byte
	if len(b) > 8 {
		data = b[8:]
	}
	var prefix []byte
	if len(data) >= 6 && string(data[:6]) == "Exif\x00\x00" {
		prefix = []byte("Exif\x00\x00")
	}
	k := int(min(size, maxEXIFPeek-8))
	out, o := replaceEXIF(data[min(len(prefix), len(data)):], prefix, k)
	if o != 0 {
		r.note(func(rep *Report) { rep.Orientation = o })
	}
	if int64(k) == size && len(data) >= k && string(data[:k]) == string(out) {
		r.copyN(8 + padded) // already minimal: nothing to report
		return
	}
	r.removed(KindEXIF, 8+int64(k))
	r.emit(append([]byte(nil), h[:8]...))
	r.emit(out)
	r.fill(padded-int64(k), 0, KindEXIF)
}
