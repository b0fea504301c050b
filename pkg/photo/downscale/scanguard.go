package downscale

import (
	"context"
	"fmt"
	"io"
)

// MaxProgressivePasses bounds the work a progressive JPEG's segment list may
// ask of the decoder: how many times, in total, its scans may visit the
// image's blocks (the sum over scans of the blocks each visits, over the
// blocks of all components). A JPEG decoder's work is not bounded by its
// pixels: every scan walks the blocks of the components it names, so a
// file of thousands of tiny refinement scans (22 bytes each) costs
// image/jpeg a walk of every block per scan. libjpeg's default scripts
// visit the blocks 4.7 (colour 4:4:4) to 6 times (greyscale and, through
// jpegtran, CMYK; TestRealProgressiveWithinPasses); 12 leaves twice that,
// and caps the scans at 12 for greyscale, 72 for 4:2:0 colour (a
// chroma-only scan visits a sixth of the blocks). A sequential JPEG visits
// each block once, so it is held to one pass.
const MaxProgressivePasses = 12

// CostError reports a JPEG refused for the work its scans ask: scans of a
// progressive image visiting its blocks more than MaxProgressivePasses
// times, or a sequential image scanning a component twice. The decode
// stopped at that scan, before its blocks were decoded. The same bytes are
// refused again: the refusal is final.
type CostError struct {
	// Scans is the scans met, the refused one included.
	Scans int
	// Passes is the block visits of those scans over the image's blocks.
	Passes float64
	// Progressive tells which pass limit applied.
	Progressive bool
}

func (e *CostError) Error() string {
	kind, limit := "sequential", 1
	if e.Progressive {
		kind, limit = "progressive", MaxProgressivePasses
	}
	return fmt.Sprintf("decoding is too costly: the first %d scans of this %s JPEG visit its blocks %.1f times, more than the %d allowed",
		e.Scans, kind, e.Passes, limit)
}

// JPEG markers the guard tells apart.
const (
	markerSOI  = 0xD8
	markerEOI  = 0xD9
	markerSOS  = 0xDA
	markerTEM  = 0x01
	markerRST0 = 0xD0
	markerRST7 = 0xD7
)

// guard states.
const (
	stSegments  = iota // between segments: expecting 0xFF and a marker
	stMarker           // after 0xFF: the marker byte (or fill 0xFF)
	stLength           // the length's first byte
	stLength2          // its second byte
	stPayload          // inside a length-prefixed segment
	stEntropy          // entropy-coded data after a scan header
	stEntropyFF        // after 0xFF in entropy-coded data
	stDone             // after EOI: the decoder reads no further
)

// maxKeptHeader bounds what is kept of a segment's payload: a frame header
// of 255 components is 771 bytes, a scan header of 4 components 12.
const maxKeptHeader = 1 << 10

// scanGuard sits between image/jpeg and the stream. It follows the JPEG's
// segment structure byte by byte as the decoder reads it (lengths, the
// frame header, each scan header, the markers in entropy-coded data), and
// ends each Read right after a scan's SOS marker, so that the decoder
// comes back to Read before it decodes that scan: there the context is
// checked and the scan counted. Between two checks the decoder does at most
// one scan's work or one 4 KiB read's.
type scanGuard struct {
	ctx     context.Context
	r       io.Reader
	buf     [4 << 10]byte
	pending []byte // read from r, not yet returned

	state  int
	marker byte
	length int    // bytes left in the current segment, after its length field
	header []byte // the SOF or SOS segment's payload, up to maxKeptHeader

	// From the frame header: the MCU grid and each component's sampling.
	progressive bool
	mcus        int64 // MCUs in the frame
	sampling    map[byte]int64
	blocks      int64 // blocks of all components (a pass)

	scans  int
	visits int64
	err    error
}

func newScanGuard(ctx context.Context, r io.Reader) *scanGuard {
	return &scanGuard{ctx: ctx, r: r, sampling: map[byte]int64{}}
}

func (g *scanGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if err := g.ctx.Err(); err != nil {
		return 0, err
	}
	if len(g.pending) == 0 {
		n, err := g.r.Read(g.buf[:])
		g.pending = g.buf[:n]
		if n == 0 {
			return 0, err
		}
	}
	n := 0
	for n < len(p) && n < len(g.pending) {
		b := g.pending[n]
		n++
		if g.step(b) {
			break // a scan starts: let the decoder come back first
		}
		if g.err != nil {
			return 0, g.err
		}
	}
	copy(p, g.pending[:n])
	g.pending = g.pending[n:]
	return n, nil
}

// step advances the state by one byte and reports whether it was an SOS
// marker.
func (g *scanGuard) step(b byte) bool {
	switch g.state {
	case stDone:
	case stSegments:
		if b == 0xFF {
			g.state = stMarker
		}
	case stMarker, stEntropyFF:
		entropy := g.state == stEntropyFF
		switch {
		case b == 0xFF:
			// Fill byte: still before a marker.
		case entropy && (b == 0x00 || (b >= markerRST0 && b <= markerRST7)):
			g.state = stEntropy // stuffed zero or restart marker
		case b == 0x00 || b == markerSOI || b == markerTEM || (b >= markerRST0 && b <= markerRST7):
			// No length follows: image/jpeg skips FF 00 and a restart
			// marker between segments, and refuses SOI and TEM there.
			// Reading a length after FF 00 would let a segment hide
			// scans from the count.
			g.state = stSegments
		case b == markerEOI:
			g.state = stDone
		default:
			g.marker, g.state = b, stLength
			return b == markerSOS
		}
	case stLength:
		g.length, g.state = int(b)<<8, stLength2
	case stLength2:
		g.length = (g.length | int(b)) - 2
		g.header, g.state = g.header[:0], stPayload
		if g.length <= 0 {
			g.endSegment()
		}
	case stPayload:
		if len(g.header) < maxKeptHeader {
			g.header = append(g.header, b)
		}
		g.length--
		if g.length == 0 {
			g.endSegment()
		}
	case stEntropy:
		if b == 0xFF {
			g.state = stEntropyFF
		}
	}
	return false
}

// endSegment acts on a whole segment: a frame header sets the block grid,
// a scan header is counted (and may be refused) and opens entropy data.
func (g *scanGuard) endSegment() {
	g.state = stSegments
	switch m := g.marker; {
	case m == markerSOS:
		g.state = stEntropy
		g.countScan(g.header)
	case m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC:
		g.frame(m, g.header)
	}
}

// frame reads SOFn: P, Y, X, Nf, then Nf x (C, HxV, Tq). Like image/jpeg,
// a single component is taken as 1x1 whatever it declares.
func (g *scanGuard) frame(m byte, h []byte) {
	if len(h) < 6 {
		return
	}
	g.progressive = m == 0xC2 || m == 0xC6 || m == 0xCA || m == 0xCE
	height, width, nf := int64(h[1])<<8|int64(h[2]), int64(h[3])<<8|int64(h[4]), int(h[5])
	if len(h) < 6+3*nf {
		return
	}
	var hmax, vmax int64 = 1, 1
	for i := range nf {
		hv := h[7+3*i]
		hmax, vmax = max(hmax, int64(hv>>4)), max(vmax, int64(hv&15))
	}
	if nf == 1 {
		hmax, vmax = 1, 1
	}
	g.mcus = ((width + 8*hmax - 1) / (8 * hmax)) * ((height + 8*vmax - 1) / (8 * vmax))
	g.blocks = 0
	for i := range nf {
		hv := int64(h[7+3*i])
		n := (hv >> 4) * (hv & 15)
		if nf == 1 {
			n = 1
		}
		g.sampling[h[6+3*i]] = n
		g.blocks += g.mcus * n
	}
}

// countScan counts one scan and the blocks it visits (the MCUs times the
// blocks its components have in each, as image/jpeg walks them), and
// refuses it over the limit. A scan before any frame header visits nothing
// here, and image/jpeg refuses it.
func (g *scanGuard) countScan(h []byte) {
	g.scans++
	if len(h) > 0 {
		for i := range min(int(h[0]), (len(h)-1)/2) {
			g.visits += g.mcus * g.sampling[h[1+2*i]]
		}
	}
	limit := int64(1)
	if g.progressive {
		limit = MaxProgressivePasses
	}
	if g.visits > limit*g.blocks {
		g.err = &CostError{Scans: g.scans, Passes: g.passes(), Progressive: g.progressive}
	}
}

func (g *scanGuard) passes() float64 {
	if g.blocks == 0 {
		return 0
	}
	return float64(g.visits) / float64(g.blocks)
}
