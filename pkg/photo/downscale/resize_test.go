package downscale

import (
	"context"
	"errors"
	"image"
	"runtime"
	"sync/atomic"
	"testing"

	"golang.org/x/image/draw"
)

// TestBandedResizeMatchesOneCall: the banded two-pass resize gives the same
// pixels as one draw.CatmullRom.Scale call, up to rounding the intermediate
// to 8 bits (where Catmull-Rom overshoots, the intermediate is also
// clamped; noise at full contrast stays within 2 levels), for every source
// type the decoders produce, with bands small
// enough that there are many, and a shorter last one.
func TestBandedResizeMatchesOneCall(t *testing.T) {
	defer func(n int) { bandBufferBytes = n }(bandBufferBytes)
	bandBufferBytes = 32 * 7 * 130 // 7 rows of 130 px: bands of 7, the last of 3 or so

	ycc := noisyYCbCr(301, 203, 40)
	rgba := image.NewRGBA(ycc.Bounds())
	draw.Draw(rgba, rgba.Bounds(), ycc, image.Point{}, draw.Src)
	nrgba := image.NewNRGBA(ycc.Bounds())
	for i := range nrgba.Pix {
		nrgba.Pix[i] = uint8(noise(uint64(i)))
		if i%4 == 3 { // alpha: a gradient, as at the edge of a cut-out
			nrgba.Pix[i] = uint8(i / 4 % 301 * 255 / 300)
		}
	}
	gray := image.NewGray(ycc.Bounds())
	draw.Draw(gray, gray.Bounds(), ycc, image.Point{}, draw.Src)
	offset := ycc.SubImage(image.Rect(10, 20, 301, 203)) // bounds not at the origin

	for name, src := range map[string]image.Image{
		"ycbcr420": ycc, "rgba": rgba, "nrgba": nrgba, "gray": gray, "offset": offset,
	} {
		for _, size := range [][2]int{{130, 88}, {97, 200}, {301, 100}} {
			got, err := resize(context.Background(), src, size[0], size[1])
			if err != nil {
				t.Fatal(err)
			}
			want := image.NewRGBA(image.Rect(0, 0, size[0], size[1]))
			draw.CatmullRom.Scale(want, want.Bounds(), src, src.Bounds(), draw.Src, nil)
			worst := 0
			for i := range got.Pix {
				worst = max(worst, int(got.Pix[i])-int(want.Pix[i]), int(want.Pix[i])-int(got.Pix[i]))
			}
			if worst > 2 {
				t.Errorf("%s to %v: banded resize differs from one Scale call by up to %d levels", name, size, worst)
			}
		}
	}
}

// TestBandsStopAtCancel: once ctx is done no band starts, so a deadline
// stops the resize within one band per worker (before, all bands ran).
func TestBandsStopAtCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int64
	err := inBands(ctx, 1000, 1,
		func(int) draw.Scaler { return filter.NewScaler(1, 1, 1, 1) },
		func(draw.Scaler, int, int) {
			calls.Add(1)
			cancel()
		})
	if !errors.Is(err, context.Canceled) || calls.Load() > int64(runtime.GOMAXPROCS(0)) {
		t.Fatalf("inBands = %v after %d of 1000 bands, want context.Canceled after at most one per worker", err, calls.Load())
	}
}

// TestEncodeStopsAtCancel: the encoder's output fails once ctx is done.
func TestEncodeStopsAtCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := &jpegOutput{ctx: ctx, limit: 1 << 20}
	if err := encodeAt(out, image.NewRGBA(image.Rect(0, 0, 256, 256)), 90); !errors.Is(err, context.Canceled) {
		t.Fatalf("encodeAt = %v, want context.Canceled", err)
	}
}
