// Package phototest makes the large and unusual images that tests and
// benchmarks need, at run time, so that no big binary is committed: JPEGs
// with any chroma sampling, progressive or not (through libjpeg-turbo's
// cjpeg and jpegtran, from Debian's libjpeg-turbo-progs, since image/jpeg
// writes baseline 4:2:0 only), CMYK JPEGs (assembled from one grey JPEG per
// channel), and PNGs of any bit depth and colour type, interlaced or not
// (written here, since image/png writes no Adam7).
//
// Pixels come from a deterministic noise function and are streamed to the
// encoders, so a 100-megapixel image costs the generator no more memory
// than its encoded bytes. It is imported by tests and cmd/benchreport only,
// never by a function.
package phototest

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"testing"
)

// Sample is the value, 0 to 255, of channel c of pixel (x, y): a diagonal
// gradient with noise of +-amp, deterministic for seed. amp sets the
// entropy and so the encoded size.
func Sample(x, y, c, amp int, seed uint64) uint8 {
	n := noise(seed ^ uint64(y)<<32 ^ uint64(x)<<2 ^ uint64(c))
	v := 64 + (x+y+40*c)%128 + int(n%uint64(2*amp+1)) - amp
	return uint8(max(0, min(255, v)))
}

func noise(i uint64) uint64 {
	i += 0x9e3779b97f4a7c15
	i = (i ^ i>>30) * 0xbf58476d1ce4e5b9
	i = (i ^ i>>27) * 0x94d049bb133111eb
	return i ^ i>>31
}

// JPEG is a w x h JPEG of noise amp written by cjpeg with the given extra
// arguments, such as "-sample", "1x1" for 4:4:4, "-progressive", or
// "-grayscale". The pixels are streamed to cjpeg as PPM (PGM with
// -grayscale).
func JPEG(w, h, amp int, seed uint64, args ...string) ([]byte, error) {
	grey := false
	for _, a := range args {
		grey = grey || a == "-grayscale"
	}
	channels := 3
	magic := "P6"
	if grey {
		channels, magic = 1, "P5"
	}
	return run("cjpeg", args, func(in io.Writer) error {
		bw := bufio.NewWriterSize(in, 1<<20)
		fmt.Fprintf(bw, "%s\n%d %d\n255\n", magic, w, h)
		row := make([]byte, w*channels)
		for y := range h {
			for x := range w {
				for c := range channels {
					row[x*channels+c] = Sample(x, y, c, amp, seed)
				}
			}
			if _, err := bw.Write(row); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
}

// Progressive rewrites a JPEG as progressive with jpegtran, losslessly
// (the DCT coefficients are kept), whatever its colour space.
func Progressive(jpg []byte) ([]byte, error) {
	return run("jpegtran", []string{"-progressive", "-copy", "none"}, func(in io.Writer) error {
		_, err := in.Write(jpg)
		return err
	})
}

// run starts name with args, feeds its standard input with feed, and
// returns its standard output.
func run(name string, args []string, feed func(io.Writer) error) ([]byte, error) {
	cmd := exec.Command(name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s (install libjpeg-turbo-progs): %w", name, err)
	}
	ferr := feed(in)
	in.Close()
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("%s %v: %w: %s", name, args, err, errb.String())
	}
	if ferr != nil {
		return nil, fmt.Errorf("%s: write input: %w", name, ferr)
	}
	return out.Bytes(), nil
}

// CMYK is a w x h 4-component baseline JPEG marked CMYK by an Adobe APP14
// segment (transform 0), as print workflows write: each channel is a grey
// JPEG from cjpeg, whose single scan becomes one non-interleaved scan of
// the CMYK frame. cjpeg writes the same quantisation and Huffman tables for
// every grey image of one quality, so the first one's serve all four.
func CMYK(w, h, amp int, seed uint64) ([]byte, error) {
	var scans [4][]byte
	var tables []byte
	for c := range scans {
		grey, err := JPEG(w, h, amp, seed+uint64(c)*7919, "-grayscale", "-quality", "90")
		if err != nil {
			return nil, err
		}
		segs, err := segments(grey)
		if err != nil {
			return nil, err
		}
		for _, s := range segs {
			switch s.marker {
			case 0xDB, 0xC4: // DQT, DHT
				if c == 0 {
					tables = append(tables, s.bytes...)
				}
			case 0xDA: // SOS and its entropy-coded data, to EOI
				scans[c] = s.data
			}
		}
		if scans[c] == nil {
			return nil, fmt.Errorf("cjpeg wrote no scan")
		}
	}
	out := []byte{0xFF, 0xD8}
	out = append(out, 0xFF, 0xEE, 0, 14)
	out = append(out, "Adobe\x00\x64\x00\x00\x00\x00\x00"...) // version 100, flags 0, transform 0: CMYK
	out = append(out, tables...)
	sof := []byte{0xFF, 0xC0, 0, 8 + 3*4, 8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), 4}
	for c := range 4 {
		sof = append(sof, byte(c+1), 0x11, 0)
	}
	out = append(out, sof...)
	for c, data := range scans {
		out = append(out, 0xFF, 0xDA, 0, 8, 1, byte(c+1), 0x00, 0, 63, 0)
		out = append(out, data...)
	}
	return append(out, 0xFF, 0xD9), nil
}

type segment struct {
	marker byte
	bytes  []byte // the whole segment, marker included
	data   []byte // for SOS: the entropy-coded data after it, up to EOI
}

// segments splits a single-scan JPEG (as cjpeg writes a baseline one).
func segments(b []byte) ([]segment, error) {
	var out []segment
	for pos := 2; pos+4 <= len(b); {
		if b[pos] != 0xFF {
			return nil, fmt.Errorf("no marker at byte %d", pos)
		}
		m := b[pos+1]
		n := int(binary.BigEndian.Uint16(b[pos+2:]))
		end := pos + 2 + n
		if end > len(b) {
			return nil, fmt.Errorf("segment %X runs past the end", m)
		}
		s := segment{marker: m, bytes: b[pos:end]}
		if m == 0xDA {
			eoi := bytes.LastIndex(b, []byte{0xFF, 0xD9})
			if eoi < end {
				return nil, fmt.Errorf("no EOI")
			}
			s.data = b[end:eoi]
			return append(out, s), nil
		}
		out = append(out, s)
		pos = end
	}
	return nil, fmt.Errorf("no SOS")
}

// PNG colour types.
const (
	Grey      = 0
	RGB       = 2
	GreyAlpha = 4
	RGBA      = 6
)

// PNG writes a w x h PNG of noise amp with the given bit depth (8 or 16)
// and colour type, Adam7-interlaced or not, at zlib's fastest level.
func PNG(w io.Writer, width, height, depth, colorType int, interlaced bool, amp int, seed uint64) error {
	channels := map[int]int{Grey: 1, RGB: 3, GreyAlpha: 2, RGBA: 4}[colorType]
	if channels == 0 || (depth != 8 && depth != 16) {
		return fmt.Errorf("phototest: PNG of colour type %d, depth %d not supported", colorType, depth)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.Write(PNGHeader(width, height, depth, colorType, interlaced))

	idat := &chunkWriter{w: bw, typ: "IDAT"}
	z, err := zlib.NewWriterLevel(idat, zlib.BestSpeed)
	if err != nil {
		return err
	}
	bytesPer := channels * depth / 8
	passes := [][4]int{{0, 0, 1, 1}}
	if interlaced { // x0, y0, dx, dy of each Adam7 pass
		passes = [][4]int{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}
	}
	row := make([]byte, 1+width*bytesPer)
	for _, p := range passes {
		for y := p[1]; y < height; y += p[3] {
			r := row[:1]
			for x := p[0]; x < width; x += p[2] {
				for c := range channels {
					v := Sample(x, y, c, amp, seed)
					if depth == 16 {
						r = append(r, v, v) // compressible: the file stays near its 8-bit size
					} else {
						r = append(r, v)
					}
				}
			}
			if len(r) == 1 {
				break // an empty pass has no rows at all
			}
			if _, err := z.Write(r); err != nil {
				return err
			}
		}
	}
	if err := z.Close(); err != nil {
		return err
	}
	if err := idat.flush(); err != nil {
		return err
	}
	writeChunk(bw, "IEND", nil)
	return bw.Flush()
}

func writeChunk(w *bufio.Writer, typ string, data []byte) {
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(data)))
	copy(hdr[4:], typ)
	w.Write(hdr[:])
	w.Write(data)
	crc := crc32.NewIEEE()
	crc.Write(hdr[4:])
	crc.Write(data)
	w.Write(binary.BigEndian.AppendUint32(nil, crc.Sum32()))
}

// chunkWriter cuts a stream into chunks of at most 1 MiB.
type chunkWriter struct {
	w   *bufio.Writer
	typ string
	buf []byte
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	c.buf = append(c.buf, p...)
	for len(c.buf) >= 1<<20 {
		writeChunk(c.w, c.typ, c.buf[:1<<20])
		c.buf = append(c.buf[:0], c.buf[1<<20:]...)
	}
	return len(p), nil
}

func (c *chunkWriter) flush() error {
	if len(c.buf) > 0 {
		writeChunk(c.w, c.typ, c.buf)
		c.buf = c.buf[:0]
	}
	return nil
}

// JPEGHeader is the start of a JPEG declaring w x h pixels: SOI, a JFIF
// APP0 segment as cjpeg writes (so that three components read as YCbCr), a frame
// header (SOF2 when progressive, else SOF0) with one component per
// sampling byte (0x11 for each of three: 4:4:4), and the header of a first
// scan of every component, where a decoder's header reading ends. Padded
// to a size over a limit, it stands for a photo whose header alone decides
// (a refusal before decoding) without the seconds a real one takes to make.
func JPEGHeader(progressive bool, w, h int, sampling ...byte) []byte {
	marker := byte(0xC0)
	if progressive {
		marker = 0xC2
	}
	n := 8 + 3*len(sampling)
	b := []byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 16}
	b = append(b, "JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"...)
	b = append(b, 0xFF, marker, byte(n>>8), byte(n), 8, byte(h>>8), byte(h), byte(w>>8), byte(w), byte(len(sampling)))
	for i, s := range sampling {
		b = append(b, byte(i+1), s, 0)
	}
	n = 6 + 2*len(sampling)
	b = append(b, 0xFF, 0xDA, byte(n>>8), byte(n), byte(len(sampling)))
	for i := range sampling {
		b = append(b, byte(i+1), 0)
	}
	return append(b, 0, 63, 0)
}

// PNGHeader is the signature and IHDR of a PNG declaring w x h pixels of
// the given depth and colour type, and nothing after (see JPEGHeader).
func PNGHeader(w, h, depth, colorType int, interlaced bool) []byte {
	var b bytes.Buffer
	bw := bufio.NewWriter(&b)
	bw.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	il := byte(0)
	if interlaced {
		il = 1
	}
	writeChunk(bw, "IHDR", append(ihdr, byte(depth), byte(colorType), 0, 0, il))
	bw.Flush()
	return b.Bytes()
}

// NeedTools fails tb in CI and skips it elsewhere when cjpeg or jpegtran
// is missing: .ci/run installs them (libjpeg-turbo-progs), a developer's
// machine may not have them.
func NeedTools(tb testing.TB) {
	tb.Helper()
	for _, tool := range []string{"cjpeg", "jpegtran"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				tb.Fatalf("%s is missing: .ci/run installs libjpeg-turbo-progs", tool)
			}
			tb.Skipf("%s not installed (apt-get install libjpeg-turbo-progs)", tool)
		}
	}
}
