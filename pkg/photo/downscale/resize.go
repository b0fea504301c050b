package downscale

import (
	"context"
	"image"
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/image/draw"
)

// filter is the resampling kernel. Catmull-Rom (bicubic) keeps edges and
// fine texture sharp and, unlike ApproxBiLinear, widens with the reduction
// factor, so every source pixel contributes: no aliasing on foliage, brick
// or text when a 50 MP photo is halved.
//
// Measured with BenchmarkResize50MP (the decoded 8660 x 5773 YCbCr 4:2:0
// photo to 4096 x 2731, 2 shared x86-64 cores; expect about the same per
// core on Lambda's arm64):
//
//	                               time/op  allocated/op  peak heap
//	draw.CatmullRom, one Scale     4.0 s    803 MB        1.6 GB
//	draw.CatmullRom, banded        2.8 s    178 MB        ~340 MB
//	draw.ApproxBiLinear            0.45 s    45 MB        ~90 MB
//
// (peak heap counts garbage the collector had not yet reclaimed between
// iterations.) One Kernel.Scale call allocates a float64 buffer of
// newWidth x oldHeight x 4 channels, 4096 x 5773 x 32 bytes = 757 MB, for
// its two separable passes: that, not the filter's arithmetic, makes it too
// heavy for Lambda. ApproxBiLinear is 6x faster but samples 4 source pixels
// per output pixel whatever the reduction, so a 2x (or, at 100 MP, 3x)
// reduction aliases fine texture, the detail a geolocation model reads.
// resize keeps Catmull-Rom and runs the two passes itself, in bands, so its
// buffers stay at a few MB: about 2.5 s of CPU more than ApproxBiLinear
// for a 50 MP photo, worth it for an image that costs a paid call.
var filter = draw.CatmullRom

// bandBufferBytes is the size of the kernel's temporary buffer for one band:
// 32 bytes (four float64 channels) per pixel of the band.
var bandBufferBytes = 8 << 20 // a variable so that tests can force many bands

// resize returns src scaled to dw x dh with filter, as premultiplied RGBA.
//
// The kernel is separable, so it runs as two passes, each a series of
// draw.Kernel scales over bands the other pass leaves alone:
//
//  1. horizontal: bands of source rows, width sw -> dw, height unchanged,
//     into an intermediate dw x sh image;
//  2. vertical: bands of intermediate columns, height sh -> dh, width
//     unchanged, into the result.
//
// A dimension left unchanged is an exact identity for Catmull-Rom (its
// weights at distances 1 and 2 are zero), and bands are independent, so the
// result equals one Kernel.Scale call up to rounding the intermediate to 8
// bits. Memory: the source, the intermediate (dw x sh x 4 bytes) and one
// band buffer during pass 1; the intermediate, the result (dw x dh x 4) and
// one band buffer during pass 2. The source is no longer referenced after
// pass 1, so the garbage collector can return it before the result is
// allocated.
//
// ctx is checked before each band; once it is done the bands left are not
// scaled and its error is returned with an unfinished image.
func resize(ctx context.Context, src image.Image, dw, dh int) (*image.RGBA, error) {
	sb := src.Bounds()
	sw, sh := sb.Dx(), sb.Dy()

	mid := image.NewRGBA(image.Rect(0, 0, dw, sh))
	err := inBands(ctx, sh, bandSize(dw),
		func(h int) draw.Scaler { return filter.NewScaler(dw, h, sw, h) },
		func(s draw.Scaler, y, h int) {
			s.Scale(mid, image.Rect(0, y, dw, y+h),
				src, image.Rect(sb.Min.X, sb.Min.Y+y, sb.Max.X, sb.Min.Y+y+h), draw.Src, nil)
		})
	if err != nil {
		return nil, err
	}
	// The source is dead from here on (the caller holds no other
	// reference): collect it before the result is allocated, so that the
	// peak is the larger of the two passes, not their sum (see Cost).
	src = nil
	runtime.GC()

	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	err = inBands(ctx, dw, bandSize(sh),
		func(w int) draw.Scaler { return filter.NewScaler(w, dh, w, sh) },
		func(s draw.Scaler, x, w int) {
			s.Scale(dst, image.Rect(x, 0, x+w, dh), mid, image.Rect(x, 0, x+w, sh), draw.Src, nil)
		})
	if err != nil {
		return nil, err
	}
	return dst, nil
}

// inBands splits [0, n) into bands of size (the last one shorter) and runs
// them on up to GOMAXPROCS goroutines: the bands are independent, and
// Lambda gives a function more than one vCPU above 1,769 MB. Each goroutine makes one scaler
// per band length with newScaler and reuses it (its weights and its buffer)
// for every band it scales, so memory grows by one band buffer per
// goroutine. ctx is checked before each band: once it is done no band
// starts, and its error is returned.
func inBands(ctx context.Context, n, size int, newScaler func(length int) draw.Scaler, scale func(s draw.Scaler, start, length int)) error {
	bands := (n + size - 1) / size
	workers := min(bands, runtime.GOMAXPROCS(0))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			scalers := map[int]draw.Scaler{}
			for {
				i := int(next.Add(1)) - 1
				if i >= bands || ctx.Err() != nil {
					return
				}
				start := i * size
				length := min(size, n-start)
				s, ok := scalers[length]
				if !ok {
					s = newScaler(length)
					scalers[length] = s
				}
				scale(s, start, length)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// bandSize is how many rows (or columns) of length n fit in bandBufferBytes.
func bandSize(n int) int {
	return max(1, bandBufferBytes/(32*n))
}

// fitWithin returns w x h scaled so that its longer side is maxSide, keeping
// the aspect ratio (rounded to the nearest pixel, at least 1), or w x h
// itself if it is already within.
func fitWithin(w, h, maxSide int) (int, int) {
	if w <= maxSide && h <= maxSide {
		return w, h
	}
	if w >= h {
		return maxSide, max(1, int((int64(h)*int64(maxSide)+int64(w)/2)/int64(w)))
	}
	return max(1, int((int64(w)*int64(maxSide)+int64(h)/2)/int64(h))), maxSide
}

// flatten makes img opaque, as JPEG has no alpha: a transparent pixel becomes
// white (premultiplied colour composited over white), not black.
func flatten(img *image.RGBA) *image.RGBA {
	for i := 3; i < len(img.Pix); i += 4 {
		if a := img.Pix[i]; a != 0xff {
			t := 0xff - int(a)
			for j := i - 3; j < i; j++ {
				img.Pix[j] = uint8(min(0xff, int(img.Pix[j])+t))
			}
			img.Pix[i] = 0xff
		}
	}
	return img
}

// encodable returns img in a form image/jpeg encodes directly and correctly:
// YCbCr and Gray as they are (no copy), anything else drawn over white into
// RGBA so that transparency does not turn black.
func encodable(img image.Image) image.Image {
	switch img := img.(type) {
	case *image.YCbCr, *image.Gray:
		return img
	case *image.RGBA:
		if img.Opaque() {
			return img
		}
	}
	b := img.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(dst, dst.Bounds(), image.White, image.Point{}, draw.Src)
	draw.Draw(dst, dst.Bounds(), img, b.Min, draw.Over)
	return dst
}
