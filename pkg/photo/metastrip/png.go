package metastrip

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"io"
)

// PNG (ISO/IEC 15948, third edition). Critical chunks pass, and the
// ancillary chunks that change how the picture looks or moves and hold
// numbers only: tRNS, gAMA, cHRM, sRGB, cICP, mDCV, cLLI, sBIT, bKGD, hIST,
// pHYs, and APNG's acTL, fcTL, fdAT, each no longer than its fields. iCCP is rewritten (pngStepper.icc): its
// profile name replaced, its profile inflated within maxICCBytes, its
// descriptive fields blanked and compressed again. eXIf keeps its length
// and holds the minimal EXIF block (Orientation only); every other
// ancillary chunk (tEXt, zTXt, iTXt, tIME, sPLT and its palette name, C2PA's
// caBX, private chunks) becomes a blNk chunk of zeros, never inflated, and
// whatever follows IEND is zeroed. Chunk lengths never change, and each
// rewritten chunk gets its own CRC.

// pngPadType names a blanked chunk: ancillary, private, reserved bit clear,
// safe to copy (lower, lower, upper, lower), so decoders skip it.
const pngPadType = "blNk"

// pngMaxLen lists the ancillary chunks kept, each with the longest it can
// be (ISO/IEC 15948 third edition, section 11.3): a longer one holds bytes
// no decoder reads, and is blanked like an unknown chunk. tRNS and hIST
// are bounded by the palette's 256 entries, fdAT by a chunk's length.
var pngMaxLen = map[string]int64{
	"tRNS": 256, "gAMA": 4, "cHRM": 32, "sRGB": 1, "cICP": 4, "mDCV": 24, "mDCv": 24,
	"cLLI": 8, "cLLi": 8, "sBIT": 4, "bKGD": 6, "hIST": 512, "pHYs": 9,
	"acTL": 8, "fcTL": 26, "fdAT": 1<<31 - 1,
}

func pngKept(typ string, length int64) bool {
	n, ok := pngMaxLen[typ]
	return ok && length <= n
}

var pngKinds = map[string]string{
	"eXIf": KindEXIF, "tEXt": KindText, "zTXt": KindText, "iTXt": KindText, "tIME": KindTime,
}

type pngStepper struct {
	started, ended bool
	// iccp says an iCCP chunk was met: PNG allows one, and any other is
	// blanked, so a file pays for one bounded inflate at most.
	iccp bool
	// crc, when set, is the CRC still to write after a rewritten chunk's
	// zeros: computed once they have streamed, so a chunk claiming 2 GB in
	// a short file costs nothing.
	crc func() uint32
}

func (s *pngStepper) step(r *Reader) error {
	if s.crc != nil {
		r.emit(binary.BigEndian.AppendUint32(nil, s.crc()))
		s.crc = nil
		return nil
	}
	switch {
	case !s.started:
		if _, err := r.need(8); err != nil {
			return err
		}
		r.copyN(8) // the signature New recognised
		s.started = true
		return nil
	case s.ended:
		if b, err := r.peek(1); err != nil || len(b) == 0 {
			return cmpErr(err, io.EOF)
		}
		r.removed(KindTrailer, 0)
		r.fillRest(0, KindTrailer)
		return io.EOF
	}
	h, err := r.need(8)
	if err != nil {
		return err
	}
	length := int64(binary.BigEndian.Uint32(h))
	typ := string(h[4:8])
	if length > 1<<31-1 || !pngChunkName(typ) {
		return r.problem("PNG chunk %q of length %d", typ, length)
	}
	switch {
	case typ == "IEND":
		s.ended = true
		r.copyN(12 + length)
	case typ[0]&0x20 == 0 || pngKept(typ, length): // critical, or kept
		r.copyN(12 + length)
	case typ == "eXIf":
		s.exif(r, h, length)
	case typ == "iCCP" && !s.iccp:
		s.iccp = true
		s.icc(r, h, length)
	case typ == pngPadType:
		s.blank(r, h, length, "") // blanked already, or posing as such
	default:
		kind := pngKinds[typ]
		if kind == "" {
			kind = KindOther
		}
		s.blank(r, h, length, kind)
	}
	return nil
}

// pngChunkName reports whether typ is four ASCII letters, as the format
// requires of every chunk type.
func pngChunkName(typ string) bool {
	for i := range 4 {
		if c := typ[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// maxICCBytes bounds the profile an iCCP chunk may inflate to: display
// profiles are a few KiB, the largest printer profiles some hundreds. A
// chunk that inflates to more (a zlib bomb: 64 KiB can inflate to 64 MB)
// is blanked once this much has been inflated.
const maxICCBytes = 1 << 20

// pngICCName is the profile name a rewritten iCCP chunk gets, lengthened
// with 'x' to fill the chunk when the new profile is a little shorter.
const pngICCName = "ICC"

// pngMaxKeyword is the longest keyword PNG allows (ISO/IEC 15948 11.3.3.3).
const pngMaxKeyword = 79

// icc rewrites an iCCP chunk of length bytes: its profile name (free text)
// becomes "ICC", its profile is inflated within maxICCBytes, cleaned by
// sanitizeICC and compressed again. The new chunk fills the old length
// exactly, the name lengthened or a blNk chunk after it taking up the
// rest. A chunk that does not fit in the read buffer, does not inflate
// within the bound, holds no readable profile or does not compress back
// into its length is blanked: the picture is then shown as sRGB.
func (s *pngStepper) icc(r *Reader, h []byte, length int64) {
	if out, ok := pngICC(r, length); ok {
		r.removed(KindOther, 0)
		r.emit(out)
		return
	}
	s.blank(r, h, length, KindOther)
}

// pngICC returns the rewritten chunk (header, data, CRC, and any blNk
// chunk) for the iCCP chunk the reader is at, or false.
func pngICC(r *Reader, length int64) ([]byte, bool) {
	b, _ := r.peek(int(min(12+length, maxEXIFPeek)))
	if int64(len(b)) != 12+length {
		return nil, false
	}
	data := b[8 : 8+length]
	nul := bytes.IndexByte(data, 0)
	if nul < 1 || nul+2 > len(data) || data[nul+1] != 0 {
		return nil, false
	}
	zr, err := zlib.NewReader(bytes.NewReader(data[nul+2:]))
	if err != nil {
		return nil, false
	}
	profile, err := io.ReadAll(io.LimitReader(zr, maxICCBytes+1))
	if err != nil || len(profile) > maxICCBytes {
		return nil, false
	}
	if _, err := sanitizeICC(profile); err != nil {
		return nil, false
	}
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	zw.Write(profile) // a bytes.Buffer does not fail
	zw.Close()
	name := len(pngICCName)
	avail := int(length) - 2 - z.Len() // for the name, and a blNk chunk
	switch {
	case avail < name:
		return nil, false
	case avail <= pngMaxKeyword:
		name = avail // otherwise a blNk chunk of at least 12 bytes takes the rest
	}
	chunk := func(typ string, data []byte) []byte {
		c := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
		c = append(append(c, typ...), data...)
		return binary.BigEndian.AppendUint32(c, crc32.ChecksumIEEE(c[4:]))
	}
	keyword := append([]byte(pngICCName), bytes.Repeat([]byte("x"), name-len(pngICCName))...)
	out := chunk("iCCP", append(append(keyword, 0, 0), z.Bytes()...))
	if pad := 12 + int(length) - len(out); pad > 0 {
		out = append(out, chunk(pngPadType, make([]byte, pad-12))...)
	}
	return out, true
}

// blank turns a chunk into a padBlank chunk of zeros of the same length.
func (s *pngStepper) blank(r *Reader, h []byte, length int64, kind string) {
	hdr := make([]byte, 8)
	copy(hdr, h[:4])
	copy(hdr[4:], pngPadType)
	r.removed(kind, 12)
	r.emit(hdr)
	r.fill(length, 0, kind)
	s.crc = func() uint32 { return crcZeros(crc32.Update(0, crc32.IEEETable, hdr[4:]), length) }
}

// exif keeps the eXIf chunk's length and puts the minimal EXIF block in it.
func (s *pngStepper) exif(r *Reader, h []byte, length int64) {
	b, _ := r.peek(int(min(12+length, maxEXIFPeek)))
	var tiff []byte
	if len(b) > 8 {
		tiff = b[8:min(len(b), 8+int(min(length, maxEXIFPeek)))]
	}
	k := int(min(length, maxEXIFPeek-12))
	data, o := replaceEXIF(tiff, nil, k)
	hdr := append([]byte(nil), h[:8]...)
	crc := func() uint32 {
		c := crc32.Update(0, crc32.IEEETable, hdr[4:])
		return crcZeros(crc32.Update(c, crc32.IEEETable, data), length-int64(k))
	}
	if o != 0 {
		r.note(func(rep *Report) { rep.Orientation = o })
	}
	if int64(len(b)) == 12+length && string(b[8:8+k]) == string(data) &&
		string(b[8+k:]) == string(binary.BigEndian.AppendUint32(nil, crc())) {
		r.copyN(12 + length) // already minimal: nothing to report
		return
	}
	r.removed(KindEXIF, 12+int64(k))
	r.emit(hdr)
	r.emit(data)
	r.fill(length-int64(k), 0, KindEXIF)
	s.crc = crc
}

var zeroBlock [32 << 10]byte

// crcZeros continues crc over n zero bytes.
func crcZeros(crc uint32, n int64) uint32 {
	for n > 0 {
		k := min(n, int64(len(zeroBlock)))
		crc = crc32.Update(crc, crc32.IEEETable, zeroBlock[:k])
		n -= k
	}
	return crc
}
