package downscale

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"
)

// lyingWebP wraps the 150 x 100 lossy test WebP in a VP8X of canvas cw x ch
// and rewrites its VP8 frame header to fw x fh.
func lyingWebP(t *testing.T, cw, ch, fw, fh int) []byte {
	t.Helper()
	src, err := os.ReadFile("testdata/blue-purple-pink.lossy.webp")
	if err != nil {
		t.Fatal(err)
	}
	vp8 := bytes.Clone(src[12:]) // "VP8 ", size, payload
	binary.LittleEndian.PutUint16(vp8[8+6:], uint16(fw))
	binary.LittleEndian.PutUint16(vp8[8+8:], uint16(fh))
	vp8x := []byte("VP8X\x0a\x00\x00\x00\x00\x00\x00\x00")
	vp8x = append(vp8x, byte(cw-1), byte((cw-1)>>8), byte((cw-1)>>16), byte(ch-1), byte((ch-1)>>8), byte((ch-1)>>16))
	body := append(append([]byte("WEBP"), vp8x...), vp8...)
	out := append([]byte("RIFF\x00\x00\x00\x00"), body...)
	binary.LittleEndian.PutUint32(out[4:], uint32(len(body)))
	return out
}

// TestWebPFrameMustMatchCanvas: a VP8X canvas that says 16 x 16 over a
// frame header of 16383 x 16383 is priced at a few KB; x/image/webp would
// allocate the frame's 400 MB before finding the data short. It is refused
// from the frame header, as libwebp refuses it, with a few MB allocated;
// so is the reverse lie, and a frame that matches its canvas decodes.
func TestWebPFrameMustMatchCanvas(t *testing.T) {
	for name, tc := range map[string]struct {
		cw, ch, fw, fh int
		refused        bool
	}{
		"canvas 16 x 16, frame 16383 x 16383": {16, 16, 16383, 16383, true},
		"canvas 4000 x 3000, frame 150 x 100": {4000, 3000, 150, 100, true},
		"canvas and frame 150 x 100":          {150, 100, 150, 100, false},
	} {
		t.Run(name, func(t *testing.T) {
			file := lyingWebP(t, tc.cw, tc.ch, tc.fw, tc.fh)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Downscale(context.Background(), bytes.NewReader(file), Options{})
			runtime.ReadMemStats(&after)
			if !tc.refused {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var de *DecodeError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), "VP8X canvas") {
				t.Fatalf("Downscale = %v, want the frame refused against the canvas", err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 32<<20 {
				t.Errorf("%d MB allocated before the refusal", n>>20)
			}
		})
	}
}
