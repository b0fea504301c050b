package downscale

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"runtime"

	"golang.org/x/image/webp"

	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
)

// maxHeaderBytes bounds what is buffered while the header is read: the JPEG
// segments before SOF (EXIF, XMP, ICC, thumbnails) rarely pass 1 MB, so a
// longer header is refused rather than held in memory.
const maxHeaderBytes = 16 << 20

// codec is how one supported format is read. The per-format functions are
// called directly, not through image.Decode's registry, so that a format
// registered by some other import (GIF, BMP, TIFF) is never decoded here by
// accident.
type codec struct {
	config func(io.Reader) (image.Config, error)
	decode func(io.Reader) (image.Image, error)
}

var codecs = map[imageformat.Format]codec{
	imageformat.JPEG: {jpeg.DecodeConfig, jpeg.Decode},
	imageformat.PNG:  {png.DecodeConfig, png.Decode},
	imageformat.WebP: {webp.DecodeConfig, webp.Decode},
}

// unsupportedReasons says why a recognised image format is refused.
var unsupportedReasons = map[imageformat.Format]string{
	imageformat.HEIC: "no pure-Go HEIC decoder",
	imageformat.HEIF: "no pure-Go HEIF decoder",
	imageformat.AVIF: "no pure-Go AVIF decoder",
}

// decoded is a decoded image with what its header declared.
type decoded struct {
	img    image.Image
	format imageformat.Format
	width  int
	height int
}

// decode recognises the format from the first bytes, reads the header alone
// to check the declared dimensions against o.MaxPixels and the estimated
// memory (see Cost) against o.MemoryBudget, and only then decodes. The
// header bytes consumed by the check are replayed to the decoder, so r is
// read once, as a stream, and never buffered whole.
func decode(ctx context.Context, r io.Reader, o Options) (decoded, error) {
	br := bufio.NewReaderSize(ctxReader{ctx, r}, 64<<10)
	head, err := br.Peek(imageformat.SniffBytes)
	if err != nil && !errors.Is(err, io.EOF) {
		return decoded{}, fmt.Errorf("read image header: %w", err)
	}
	format, ok := imageformat.Detect(head)
	if !ok {
		return decoded{}, &UnsupportedFormatError{Reason: "not a JPEG, PNG or WebP image"}
	}
	c, ok := codecs[format]
	if !ok {
		reason, ok := unsupportedReasons[format]
		if !ok {
			reason = "only JPEG, PNG and WebP are downscaled"
		}
		return decoded{}, &UnsupportedFormatError{Format: format.Name, Reason: reason}
	}

	// The header: DecodeConfig reads only up to the dimensions (a JPEG's SOF
	// marker, a PNG's IHDR, a WebP's VP8/VP8L/VP8X header).
	var header bytes.Buffer
	cfg, err := c.config(io.TeeReader(br, &cappedWriter{w: &header, room: maxHeaderBytes}))
	if err != nil {
		if ctx.Err() != nil {
			return decoded{}, fmt.Errorf("read %s header: %w", format, ctx.Err())
		}
		return decoded{}, &DecodeError{Format: format.Name, Err: fmt.Errorf("header: %w", err)}
	}
	if err := checkDimensions(format, cfg.Width, cfg.Height, o.MaxPixels); err != nil {
		return decoded{}, err
	}
	// What follows the header, as far as it is buffered: a PNG's chunks
	// before IDAT say whether tRNS widens its pixels.
	next, _ := br.Peek(br.Buffered())
	head = append(bytes.Clone(header.Bytes()), next...)
	if err := o.withinBudget(estimate(format, head, cfg.Width, cfg.Height, o, header.Len())); err != nil {
		return decoded{}, err
	}

	// The decoder reads through a reader that checks ctx on each of its
	// reads (at most 4 KiB: image/jpeg's buffer, flate's), not only when
	// the 64 KiB buffer refills; a JPEG's also counts its scans and ends
	// each read before a scan (see scanGuard); a WebP's refuses a frame
	// other than its priced canvas (see webpGuard).
	var src io.Reader = ctxReader{ctx, io.MultiReader(&header, br)}
	var guard *scanGuard
	var webpG *webpGuard
	switch format {
	case imageformat.JPEG:
		guard = newScanGuard(ctx, io.MultiReader(&header, br))
		src = guard
	case imageformat.WebP:
		webpG = newWebPGuard(ctx, io.MultiReader(&header, br))
		src = webpG
	}
	img, err := c.decode(src)
	if err != nil {
		if guard != nil && guard.err != nil {
			return decoded{}, guard.err
		}
		if webpG != nil && webpG.err != nil {
			return decoded{}, webpG.err
		}
		if ctx.Err() != nil {
			return decoded{}, fmt.Errorf("decode %s: %w", format, ctx.Err())
		}
		return decoded{}, &DecodeError{Format: format.Name, Err: err}
	}
	// The decoder may size the image from another field than the header did
	// (a WebP's VP8X canvas and its VP8 frame); check what it produced too.
	b := img.Bounds()
	if err := checkDimensions(format, b.Dx(), b.Dy(), o.MaxPixels); err != nil {
		return decoded{}, err
	}
	// The decoder's working memory (a progressive JPEG's coefficients, an
	// interlaced PNG's passes) is garbage now: collect it before the
	// resize allocates, so that the two phases' peaks do not add up.
	runtime.GC()
	return decoded{img: img, format: format, width: cfg.Width, height: cfg.Height}, nil
}

// checkDimensions refuses an empty image or one over maxPixels.
func checkDimensions(format imageformat.Format, w, h int, maxPixels int64) error {
	if w <= 0 || h <= 0 || int64(w)*int64(h) > maxPixels {
		return &DimensionsError{Format: format.Name, Width: w, Height: h, MaxPixels: maxPixels}
	}
	return nil
}

// cappedWriter passes at most room bytes to w, then fails, which makes the
// TeeReader and so DecodeConfig fail: a header longer than that is refused.
type cappedWriter struct {
	w    io.Writer
	room int
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	if len(p) > c.room {
		return 0, errHeaderTooLong
	}
	c.room -= len(p)
	return c.w.Write(p)
}

// ctxReader stops reading once ctx is done, which ends a long decode (a
// 50 MP JPEG takes seconds) when the Lambda invocation runs out of time.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
