// Package downscaletest builds the hostile images the downscaler's limits
// are proven against, for its tests and its callers'.
package downscaletest

// bitWriter writes a JPEG entropy-coded segment: bits MSB first, a 0x00
// stuffed after every 0xFF, the last byte padded with ones.
type bitWriter struct {
	out   []byte
	acc   uint32
	nbits uint
}

func (w *bitWriter) put(v uint32, n uint) {
	for i := int(n) - 1; i >= 0; i-- {
		w.acc = w.acc<<1 | (v>>uint(i))&1
		w.nbits++
		if w.nbits == 8 {
			w.flushByte()
		}
	}
}

func (w *bitWriter) flushByte() {
	b := byte(w.acc)
	w.out = append(w.out, b)
	if b == 0xFF {
		w.out = append(w.out, 0)
	}
	w.acc, w.nbits = 0, 0
}

func (w *bitWriter) finish() []byte {
	for w.nbits != 0 {
		w.put(1, 1)
	}
	out := w.out
	w.out = nil
	return out
}

func segment(marker byte, payload ...byte) []byte {
	n := len(payload) + 2
	return append([]byte{0xFF, marker, byte(n >> 8), byte(n)}, payload...)
}

// ScanBomb builds the file of issue 33: a progressive greyscale w x h JPEG
// whose one DC scan is followed by refinements AC refinement scans
// (Ss=1, Se=63, Ah=1, Al=0) of about 22 bytes each, each an end-of-band
// run over every block: image/jpeg walks all blocks for each of them.
// Both Huffman tables hold one 1-bit code: DC category 0 and EOB14.
func ScanBomb(w, h, refinements int) []byte {
	f := []byte{0xFF, 0xD8}
	dqt := make([]byte, 65)
	for i := 1; i < 65; i++ {
		dqt[i] = 1
	}
	f = append(f, segment(0xDB, dqt...)...)
	f = append(f, segment(0xC2, 8, byte(h>>8), byte(h), byte(w>>8), byte(w), 1, 1, 0x11, 0)...)
	one := func(class byte, sym byte) []byte {
		counts := make([]byte, 16)
		counts[0] = 1
		return append(append([]byte{class << 4}, counts...), sym)
	}
	f = append(f, segment(0xC4, one(0, 0x00)...)...)
	f = append(f, segment(0xC4, one(1, 0xE0)...)...)
	blocks := ((w + 7) / 8) * ((h + 7) / 8)

	// DC first scan: category 0 (bit 0) for every block.
	f = append(f, segment(0xDA, 1, 1, 0x00, 0, 0, 0x00)...)
	var bw bitWriter
	for range blocks {
		bw.put(0, 1)
	}
	f = append(f, bw.finish()...)

	// One AC refinement scan's data: EOB runs of at most 32767 blocks.
	for left := blocks; left > 0; {
		run := min(left, 32767)
		bw.put(0, 1)
		bw.put(uint32(run-1<<14), 14)
		left -= run
	}
	refine := append(segment(0xDA, 1, 1, 0x00, 1, 63, 0x10), bw.finish()...)
	for range refinements {
		f = append(f, refine...)
	}
	return append(f, 0xFF, 0xD9)
}
