package downscale

import (
	"bytes"

	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
)

// Declared is what an image's header says about it, read without decoding.
type Declared struct {
	Format        imageformat.Format
	Width, Height int
}

// CheckHeader reads the dimensions a JPEG, PNG or WebP declares from head,
// the first bytes of the file, and refuses an image with an empty side or
// more than maxPixels pixels (zero: DefaultMaxPixels) with a
// *DimensionsError: the decompression bomb check of Downscale, for callers
// that send the file as it is and must not pay for a file nobody could
// decode. ok is false when head is another format or ends before the
// dimensions (a JPEG whose SOF lies beyond it): nothing can be said then,
// and the caller decides without.
func CheckHeader(head []byte, maxPixels int64) (d Declared, ok bool, err error) {
	if maxPixels <= 0 {
		maxPixels = DefaultMaxPixels
	}
	format, known := imageformat.Detect(head)
	if !known {
		return Declared{}, false, nil
	}
	c, decodable := codecs[format]
	if !decodable {
		return Declared{Format: format}, false, nil
	}
	cfg, cerr := c.config(bytes.NewReader(head))
	if cerr != nil {
		return Declared{Format: format}, false, nil
	}
	d = Declared{Format: format, Width: cfg.Width, Height: cfg.Height}
	if err := checkDimensions(format, cfg.Width, cfg.Height, maxPixels); err != nil {
		return d, true, err
	}
	return d, true, nil
}
