package downscale

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
)

// webpGuard sits between x/image/webp and the stream of an extended WebP
// (VP8X), whose memory was priced from the VP8X canvas. x/image/webp sizes
// the image from the VP8 or VP8L frame header that comes later, and does
// not compare the two: a 16 x 16 canvas over a 16383 x 16383 frame would
// be priced at a few KB and allocate 400 MB. libwebp refuses a still image
// whose frame differs from its canvas (VP8_STATUS_BITSTREAM_ERROR in
// ParseHeadersInternal), so the guard does too, from the frame header,
// before the decoder reads it: it follows the RIFF chunks as they pass and
// holds back a VP8 or VP8L chunk's first bytes until they are checked.
type webpGuard struct {
	ctx context.Context
	r   io.Reader

	skip   int64  // bytes before the first chunk header: "RIFF", size, "WEBP"
	hdr    []byte // the chunk header being read
	fourcc string // the current chunk's
	left   int64  // payload bytes left in it, its padding byte included
	keep   []byte // the payload's first bytes, up to need
	need   int

	canvasW, canvasH int // from VP8X; 0 without one
	err              error
}

func newWebPGuard(ctx context.Context, r io.Reader) *webpGuard {
	return &webpGuard{ctx: ctx, r: r, skip: 12}
}

// payloadHead is how many payload bytes of a chunk say its dimensions:
// VP8X's flags and canvas, VP8's frame tag, start code and sizes, VP8L's
// signature and sizes.
var payloadHead = map[string]int{"VP8X": 10, "VP8 ": 10, "VP8L": 5}

// Read checks the context, then each byte before returning it: bytes
// that hold a frame larger or smaller than the canvas are never returned.
func (g *webpGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if err := g.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := g.r.Read(p)
	for _, b := range p[:n] {
		g.step(b)
		if g.err != nil {
			return 0, g.err
		}
	}
	return n, err
}

// step follows one byte through the RIFF chunks.
func (g *webpGuard) step(b byte) {
	switch {
	case g.skip > 0:
		g.skip--
	case g.left == 0:
		g.hdr = append(g.hdr, b)
		if len(g.hdr) < 8 {
			return
		}
		size := int64(binary.LittleEndian.Uint32(g.hdr[4:]))
		g.fourcc, g.left, g.keep, g.need = string(g.hdr[:4]), size+size&1, g.keep[:0], payloadHead[string(g.hdr[:4])]
		g.hdr = g.hdr[:0]
	default:
		g.left--
		if len(g.keep) < g.need {
			g.keep = append(g.keep, b)
			if len(g.keep) == g.need {
				g.use()
			}
		}
	}
}

// use reads a chunk's head: VP8X's canvas, or a frame's dimensions,
// checked against the canvas.
func (g *webpGuard) use() {
	k := g.keep
	var w, h int
	switch g.fourcc {
	case "VP8X":
		g.canvasW = 1 + int(uint32(k[4])|uint32(k[5])<<8|uint32(k[6])<<16)
		g.canvasH = 1 + int(uint32(k[7])|uint32(k[8])<<8|uint32(k[9])<<16)
		return
	case "VP8 ":
		// Frame tag (3 bytes), start code (3), 14-bit width and height.
		w = int(binary.LittleEndian.Uint16(k[6:8]) & 0x3fff)
		h = int(binary.LittleEndian.Uint16(k[8:10]) & 0x3fff)
	case "VP8L":
		// Signature 0x2f, then 14 bits width-1 and 14 bits height-1.
		v := binary.LittleEndian.Uint32(k[1:5])
		w, h = int(v&0x3fff)+1, int(v>>14&0x3fff)+1
	}
	if g.canvasW != 0 && (w != g.canvasW || h != g.canvasH) {
		g.err = &DecodeError{Format: "webp", Err: fmt.Errorf(
			"its %s frame is %d x %d but its VP8X canvas %d x %d, by which its memory was priced (libwebp refuses such a file)",
			g.fourcc, w, h, g.canvasW, g.canvasH)}
	}
}
