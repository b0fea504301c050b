package downscale

import (
	"context"

	"io"
	"math"

	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
)

// Result is a photo re-encoded under the limit, with what the pipeline
// records about the change.
type Result struct {
	// JPEG is the re-encoded image: a baseline JPEG with no metadata, at most
	// Options.MaxBytes long.
	JPEG []byte

	// SourceFormat is the format of the input (JPEG, PNG or WebP).
	SourceFormat imageformat.Format
	// SourceWidth and SourceHeight are the dimensions of the input.
	SourceWidth, SourceHeight int

	// Width and Height are the dimensions of JPEG. They equal the source's
	// when it was already within Options.MaxSide and the quality alone was
	// lowered.
	Width, Height int
	// Quality is the JPEG quality JPEG was encoded at.
	Quality int
	// Bytes is len(JPEG).
	Bytes int64
}

// Resized reports whether the output has fewer pixels than the input.
func (r Result) Resized() bool {
	return r.Width != r.SourceWidth || r.Height != r.SourceHeight
}

// Downscale reads a JPEG, PNG or WebP image from r and returns it as a JPEG
// whose longest side is at most opts.MaxSide and whose size is at most
// opts.MaxBytes.
//
// r is read once, as a stream, to its end or to the image's end: pass the
// S3 object body itself rather than a copy of it in memory. Only the header
// is checked before decoding: an image with an empty side or more than
// opts.MaxPixels pixels is refused with a *DimensionsError, and one whose
// decode and resize would hold more than opts.MemoryBudget bytes (see Cost)
// with a *MemoryError, before its pixels are allocated.
//
// The image is shrunk (keeping its aspect ratio) only if a side exceeds
// opts.MaxSide, then encoded at opts.Quality; while it is too large the
// quality drops by 10 down to opts.MinQuality, and if it is still too large
// at that floor the image is shrunk by the factor its size calls for and
// encoded again at the floor, until it fits.
//
// Errors: *UnsupportedFormatError (HEIC, HEIF, AVIF, other formats, not an
// image), *DimensionsError, *MemoryError, *DecodeError (corrupt or truncated data),
// *FitError (never with the default limits), or an error wrapping ctx.Err()
// or a read error of r. Cancelling ctx stops the decode at the next read.
func Downscale(ctx context.Context, r io.Reader, opts Options) (Result, error) {
	o := opts.withDefaults()
	d, err := decode(ctx, r, o)
	if err != nil {
		return Result{}, err
	}
	res := Result{SourceFormat: d.format, SourceWidth: d.width, SourceHeight: d.height}

	// From here img is the only reference to the decoded image, so that
	// resize can let it go after its first pass.
	img := d.img
	d.img = nil
	b := img.Bounds()
	if w, h := fitWithin(b.Dx(), b.Dy(), o.MaxSide); w != b.Dx() || h != b.Dy() {
		small, err := resize(ctx, img, w, h)
		if err != nil {
			return Result{}, err
		}
		img = flatten(small)
	} else {
		img = encodable(img)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}

	b = img.Bounds()
	out := &jpegOutput{
		ctx:   ctx,
		limit: o.MaxBytes,
		buf:   make([]byte, 0, min(o.MaxBytes, int64(b.Dx())*int64(b.Dy())+4096)),
	}
	high := o.Quality
	for {
		q, ok, err := encodeUnder(out, img, high, o.MinQuality)
		if err != nil {
			return Result{}, err
		}
		b = img.Bounds()
		if ok {
			res.JPEG, res.Bytes = out.buf, out.n
			res.Width, res.Height, res.Quality = b.Dx(), b.Dy(), q
			return res, nil
		}
		side := max(b.Dx(), b.Dy())
		if side <= minSide {
			return Result{}, &FitError{MaxBytes: o.MaxBytes, Width: b.Dx(), Height: b.Dy(), Quality: q, Bytes: out.n}
		}
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		// JPEG size grows about linearly with the pixel count, so scale the
		// sides by the square root of the overshoot, with 10% margin, and
		// by at least 10% so the loop always progresses.
		f := 0.9 * math.Sqrt(float64(o.MaxBytes)/float64(out.n))
		f = math.Max(0.25, math.Min(0.9, f))
		w, h := fitWithin(b.Dx(), b.Dy(), max(minSide, int(float64(side)*f)))
		small, err := resize(ctx, img, w, h)
		if err != nil {
			return Result{}, err
		}
		img = flatten(small)
		high = o.MinQuality
	}
}
