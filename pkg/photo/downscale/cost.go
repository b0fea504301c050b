package downscale

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"

	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
)

// Cost is what downscaling an image holds in memory at its peak, estimated
// from its header alone, before a pixel is decoded, with the per-sample
// costs of the decoders this package calls (measured, see
// docs/benchmarks.md):
//
//   - image/jpeg keeps each component as 8-bit samples, padded to whole
//     MCUs; a progressive JPEG also keeps every component's DCT
//     coefficients until the last scan, as int32: 4 bytes per sample, not
//     the 2 of libjpeg. A CMYK or YCCK JPEG, or a 3-component one without
//     JFIF that APP14 or its component ids mark as RGB, is converted at the
//     end into a 4-byte-per-pixel image while the planes are still held.
//   - image/png returns Gray (1 byte per pixel), Gray16 (2), Paletted (1),
//     RGBA or NRGBA (4) and RGBA64 or NRGBA64 (8); a tRNS chunk turns gray
//     and RGB into NRGBA(64). An interlaced PNG also allocates each of its
//     seven passes, together as large as the image.
//   - x/image/webp returns lossy WebP as YCbCr 4:2:0 padded to 16 pixels
//     (1.5 bytes per pixel) after reading its compressed partitions whole
//     (up to 128 MiB), plus 5 bytes per pixel when it carries VP8L-coded
//     alpha; lossless WebP as NRGBA after a second buffer of the same size
//     for its colour-indexing transform.
//
// The resize then holds the decoded image and a newWidth x height RGBA
// intermediate (pass 1), the intermediate and the newWidth x newHeight
// RGBA result (pass 2; the decoded image is collected in between), each
// with one band buffer per goroutine; the encoder adds at most MaxBytes.
// Peak is the largest of those phases; Downscale collects the garbage
// between them, so they do not add up.
type Cost struct {
	Format        imageformat.Format
	Width, Height int
	// Kind names what drives the cost, for the refusal's reason:
	// "progressive JPEG, 4:4:4", "16-bit RGBA PNG, interlaced".
	Kind string
	// Decode is the peak while decoding, Decoded the image the decoder
	// returns, Peak the peak of the whole downscale, in bytes.
	Decode, Decoded, Peak int64
}

// headerCost is what a format's header parser learns: the decoder's own
// peak and the image it returns, and whether the image is one encodable
// reads without a copy.
type headerCost struct {
	kind            string
	decode, decoded int64
	native          bool // YCbCr or Gray: encoded as is when not resized
}

// worstPerPixel is the most any supported decoder can hold per pixel: a
// progressive 4:4:4:4 CMYK JPEG (4 planes, 16 bytes of coefficients, and
// the 4-byte CMYK image). It prices an image whose header the decoders
// accept but estimate cannot read, so that nothing escapes the budget.
const worstPerPixel = 4 + 16 + 4

// estimate prices downscaling the image whose header is head (the bytes up
// to and including what DecodeConfig read, and what follows as far as it
// was buffered) with o's limits; w x h are the dimensions DecodeConfig
// returned. headerBytes is what Downscale buffers to replay the header.
func estimate(format imageformat.Format, head []byte, w, h int, o Options, headerBytes int) Cost {
	var hc headerCost
	var ok bool
	switch format {
	case imageformat.JPEG:
		hc, ok = jpegCost(head, w, h)
	case imageformat.PNG:
		hc, ok = pngCost(head, w, h)
	case imageformat.WebP:
		hc, ok = webpCost(head, w, h)
	}
	if !ok {
		px := int64(w) * int64(h)
		hc = headerCost{kind: format.Name + " of unread layout, priced at the worst case", decode: worstPerPixel * px, decoded: 4 * px}
	}
	c := Cost{Format: format, Width: w, Height: h, Kind: hc.kind, Decode: hc.decode + decoderState, Decoded: hc.decoded}
	c.Peak = max(c.Decode, resizePeak(hc, w, h, o)) + int64(headerBytes) + readBufferBytes
	return c
}

const (
	// readBufferBytes is the bufio.Reader decode reads the stream through.
	readBufferBytes = 64 << 10
	// decoderState covers a decoder's fixed state (Huffman tables, read
	// buffers, zlib's inflater), measured at 15 to 25 KiB.
	decoderState = 64 << 10
)

// resizePeak is the largest phase after decoding (see Cost).
func resizePeak(hc headerCost, w, h int, o Options) int64 {
	out := min(o.MaxBytes, int64(w)*int64(h)+4096)
	dw, dh := fitWithin(w, h, o.MaxSide)
	if dw == w && dh == h {
		copied := int64(0)
		if !hc.native {
			copied = 4 * int64(w) * int64(h)
		}
		return hc.decoded + copied + out
	}
	bands := int64(runtime.GOMAXPROCS(0)) * int64(bandBufferBytes)
	mid := 4 * int64(dw) * int64(h)
	dst := 4 * int64(dw) * int64(dh)
	return max(hc.decoded+mid, mid+dst, dst+min(o.MaxBytes, int64(dw)*int64(dh)+4096)) + bands
}

// jpegCost walks the marker segments to the frame header (SOF) and prices
// image/jpeg's decode from the components' sampling factors.
func jpegCost(b []byte, w, h int) (headerCost, bool) {
	jfif := false
	for pos := 2; pos+4 <= len(b); {
		if b[pos] != 0xFF {
			return headerCost{}, false
		}
		marker := b[pos+1]
		if marker == 0xFF || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8) {
			pos++
			if marker != 0xFF {
				pos++
			}
			continue
		}
		n := int(binary.BigEndian.Uint16(b[pos+2:]))
		if n < 2 || pos+2+n > len(b) {
			return headerCost{}, false
		}
		seg := b[pos+4 : pos+2+n]
		switch {
		case marker == 0xE0 && len(seg) >= 5 && string(seg[:5]) == "JFIF\x00":
			jfif = true
		case marker == 0xC0 || marker == 0xC1 || marker == 0xC2:
			return jpegFrameCost(seg, w, h, marker == 0xC2, jfif)
		case marker == 0xDA || marker == 0xD9:
			return headerCost{}, false
		}
		pos += 2 + n
	}
	return headerCost{}, false
}

// jpegFrameCost prices a frame header. A 3-component image without JFIF
// before its frame is priced with the RGBA conversion image/jpeg makes of
// RGB: an APP14 marker saying RGB may still come, and image/jpeg reads
// markers up to EOI (a JFIF marker, once seen, rules RGB out for good).
func jpegFrameCost(sof []byte, w, h int, progressive, jfif bool) (headerCost, bool) {
	if len(sof) < 6 {
		return headerCost{}, false
	}
	nComp := int(sof[5])
	if (nComp != 1 && nComp != 3 && nComp != 4) || len(sof) < 6+3*nComp {
		return headerCost{}, false
	}
	var hs, vs [4]int
	for i := range nComp {
		hs[i], vs[i] = int(sof[7+3*i]>>4), int(sof[7+3*i]&15)
		if nComp == 1 {
			hs[i], vs[i] = 1, 1
		}
		if hs[i] < 1 || vs[i] < 1 || hs[i] > 4 || vs[i] > 4 {
			return headerCost{}, false
		}
	}
	// image/jpeg sizes every plane from the first component's MCU.
	mxx := int64((w + 8*hs[0] - 1) / (8 * hs[0]))
	myy := int64((h + 8*vs[0] - 1) / (8 * vs[0]))
	var planes int64
	for i := range nComp {
		planes += 64 * mxx * myy * int64(hs[i]*vs[i])
	}
	px := int64(w) * int64(h)
	c := headerCost{decode: planes, decoded: planes, native: true}
	if progressive {
		c.decode += 4 * planes // int32 coefficients, kept to the end
	}
	if nComp == 4 || (nComp == 3 && !jfif) {
		c.decode += 4 * px
		c.decoded, c.native = max(planes, 4*px), false
	}
	c.kind = map[bool]string{false: "baseline JPEG, ", true: "progressive JPEG, "}[progressive] +
		map[int]string{1: "grey", 3: sampling(hs, vs), 4: "CMYK/YCCK"}[nComp]
	return c, true
}

// sampling names a 3-component JPEG's chroma subsampling.
func sampling(hs, vs [4]int) string {
	if hs[1] == 0 || vs[1] == 0 || hs[0]%hs[1] != 0 || vs[0]%vs[1] != 0 {
		return "odd sampling"
	}
	switch hs[0]/hs[1]<<4 | vs[0]/vs[1] {
	case 0x11:
		return "4:4:4"
	case 0x12:
		return "4:4:0"
	case 0x21:
		return "4:2:2"
	case 0x22:
		return "4:2:0"
	case 0x41:
		return "4:1:1"
	case 0x42:
		return "4:1:0"
	}
	return "odd sampling"
}

// pngCost reads IHDR and looks for tRNS among the chunks before IDAT.
func pngCost(b []byte, w, h int) (headerCost, bool) {
	const ihdrEnd = 8 + 8 + 13
	if len(b) < ihdrEnd+4 || string(b[12:16]) != "IHDR" {
		return headerCost{}, false
	}
	depth, colorType, interlaced := int(b[24]), b[25], b[28] == 1
	px := int64(w) * int64(h)
	wide := depth == 16
	// Until IDAT is seen, a tRNS chunk may still come: price it in.
	trns := true
	for pos := ihdrEnd + 4; pos+8 <= len(b); {
		n := int64(binary.BigEndian.Uint32(b[pos:]))
		typ := string(b[pos+4 : pos+8])
		if typ == "IDAT" {
			trns = false
			break
		}
		if typ == "tRNS" {
			break
		}
		pos += int(min(n, int64(len(b)))) + 12
	}
	var perPixel int64
	var kind string
	switch colorType {
	case 0: // grey
		perPixel, kind = map[bool]int64{false: 1, true: 2}[wide], "grey"
		if trns {
			perPixel, kind = map[bool]int64{false: 4, true: 8}[wide], "grey with tRNS"
		}
	case 2, 6: // RGB, RGBA
		perPixel, kind = map[bool]int64{false: 4, true: 8}[wide], map[byte]string{2: "RGB", 6: "RGBA"}[colorType]
	case 3:
		perPixel, kind = 1, "paletted"
	case 4: // grey + alpha
		perPixel, kind = map[bool]int64{false: 4, true: 8}[wide], "grey+alpha"
	default:
		return headerCost{}, false
	}
	img := perPixel * px
	c := headerCost{decode: img, decoded: img, native: colorType == 0 && !wide && !trns,
		kind: fmt.Sprintf("%d-bit %s PNG", depth, kind)}
	// Two rows of filtered samples per pass, and zlib's window.
	row := 2 * (1 + (int64(w)*int64(depth)*4+7)/8)
	c.decode += row + 32<<10
	if interlaced {
		// Each Adam7 pass is its own image, rounded up, with its rows.
		for _, p := range adam7 {
			pw, ph := (w-p[0]+p[2]-1)/p[2], (h-p[1]+p[3]-1)/p[3]
			c.decode += perPixel*int64(max(pw, 0))*int64(max(ph, 0)) + row
		}
		c.kind += ", interlaced"
	}
	return c, true
}

// adam7 is each interlacing pass's x and y offset and step.
var adam7 = [7][4]int{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}

// vp8MaxCompressed is the most x/image/vp8 reads into memory for one frame:
// eight partitions of at most 16 MiB each (24-bit lengths) and the first
// partition (19-bit length).
const vp8MaxCompressed = 8*16<<20 + 512<<10

// webpCost reads the first chunk: VP8 (lossy), VP8L (lossless) or VP8X
// (extended, whose flags say whether alpha follows).
func webpCost(b []byte, w, h int) (headerCost, bool) {
	if len(b) < 21 {
		return headerCost{}, false
	}
	riff := int64(binary.LittleEndian.Uint32(b[4:]))
	px := int64(w) * int64(h)
	padded := int64((w+15)/16*16) * int64((h+15)/16*16)
	lossy := func(alpha bool) headerCost {
		c := headerCost{decode: padded*3/2 + min(riff, vp8MaxCompressed), decoded: padded * 3 / 2,
			native: !alpha, kind: "lossy WebP"}
		if alpha {
			// VP8L-coded alpha decodes as NRGBA, then its green channel
			// is copied out.
			c.decode += 5 * px
			c.decoded += px
			c.kind += " with alpha"
		}
		return c
	}
	switch string(b[12:16]) {
	case "VP8 ":
		return lossy(false), true
	case "VP8L":
		return headerCost{decode: 8 * px, decoded: 4 * px, kind: "lossless WebP"}, true
	case "VP8X":
		alpha := b[20]&0x10 != 0
		// The image chunk (VP8 or VP8L) comes later: price the dearer.
		c := lossy(alpha)
		if ll := 8 * px; ll > c.decode {
			c.decode = ll
		}
		c.decoded = max(c.decoded, 4*px)
		c.native = false
		c.kind = "extended WebP"
		if alpha {
			c.kind += " with alpha"
		}
		return c, true
	}
	return headerCost{}, false
}

// MemoryBudget is the memory a downscale may use in a process whose memory
// limit is limitBytes (a Lambda function's memory size): at most
// budgetShare of it, less ProcessReserve for everything else the process
// holds. It is at least one byte: a process too small for any downscale
// refuses every one (a zero Options.MemoryBudget would mean the default).
func MemoryBudget(limitBytes int64) int64 {
	return max(1, limitBytes*budgetShare/100-ProcessReserve)
}

const (
	// budgetShare is the share, in percent, of the process's memory limit
	// that its peak may reach: the Go runtime holds memory a little past
	// the live heap (collection is not instant, spans are rounded to
	// pages), and Lambda kills the process at the limit, not past it.
	budgetShare = 80
	// ProcessReserve is what the predictor holds besides one downscale,
	// measured with `make bench` (the predictor's idle RSS is about
	// 40 MB): the binary and the AWS SDK, the streaming buffers of a
	// batch's other uploads, and the downscaled JPEGs (up to 10 MB each)
	// of a batch's other objects waiting for their call.
	ProcessReserve int64 = 128 << 20
)

// withinBudget refuses c when its peak is over o.MemoryBudget.
func (o Options) withinBudget(c Cost) error {
	if c.Peak > o.MemoryBudget {
		return &MemoryError{Cost: c, Budget: o.MemoryBudget}
	}
	return nil
}

// Estimate prices downscaling the JPEG, PNG or WebP whose first bytes are
// head with opts' limits, and refuses it as Downscale would, from the
// header alone: a *DimensionsError or a *MemoryError. ok is false when head
// is another format or ends before the dimensions (a JPEG whose SOF lies
// beyond it): nothing can be said then, and Downscale decides on the
// stream.
func Estimate(head []byte, opts Options) (c Cost, ok bool, err error) {
	o := opts.withDefaults()
	format, known := imageformat.Detect(head)
	codec, decodable := codecs[format]
	if !known || !decodable {
		return Cost{}, false, nil
	}
	r := &countingReader{r: bytes.NewReader(head)}
	cfg, cerr := codec.config(r)
	if cerr != nil {
		return Cost{}, false, nil
	}
	if err := checkDimensions(format, cfg.Width, cfg.Height, o.MaxPixels); err != nil {
		return Cost{Format: format, Width: cfg.Width, Height: cfg.Height}, true, err
	}
	c = estimate(format, head, cfg.Width, cfg.Height, o, int(r.n))
	return c, true, o.withinBudget(c)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
