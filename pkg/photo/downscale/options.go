package downscale

import "github.com/geolocate-aws/geolocate/pkg/photo/imageformat"

// Defaults for the zero fields of Options.
const (
	// DefaultMaxSide is the longest side of the re-encoded image. 4096 px
	// keeps 16 MP at 4:3 (4096 x 3072), far more detail than an image
	// geolocation model looks at, and fits under 10 MB at high quality for
	// any real photo.
	DefaultMaxSide = 4096

	// DefaultMaxBytes is the service's upload limit: 10,000,000 bytes.
	DefaultMaxBytes = imageformat.DefaultMaxImageBytes

	// DefaultMaxPixels is the largest image, in pixels, that Downscale
	// decodes: 100 MP. Phones and cameras top out around 50 MP (8160 x 6120
	// for a 50 MP sensor, 8660 x 5773 for a 3:2 one) and 61 MP full-frame
	// cameras (9504 x 6336 = 60.2 MP) pass too; medium-format 100 MP backs
	// (11648 x 8736 = 101.8 MP) do not. Decoding 100 MP costs about 150 MB
	// for a baseline 4:2:0 JPEG, 400 MB for 8-bit RGBA PNG and 1.5 GB for a
	// progressive 4:4:4 JPEG: the memory budget (MemoryBudget), not this
	// limit, decides what fits.
	DefaultMaxPixels int64 = 100_000_000

	// DefaultQuality is the JPEG quality tried first. At 90 the artefacts are
	// invisible and a 4096 px photo is typically 2-5 MB.
	DefaultQuality = 90

	// DefaultMemoryBudget is the budget of the predictor's default
	// function, 1,024 MB: MemoryBudget(1024 MiB), about 691 MiB.
	DefaultMemoryBudget = 1024<<20*budgetShare/100 - ProcessReserve

	// DefaultMinQuality is the lowest JPEG quality tried before the image is
	// shrunk further. Below 60 blocking starts to wipe out the fine detail
	// (signs, text, vegetation) a geolocation model uses; a smaller image at
	// 60 keeps more of it than a larger one at 40.
	DefaultMinQuality = 60

	// qualityStep is how much the quality drops between attempts.
	qualityStep = 10

	// minSide is the longest side below which Downscale gives up shrinking:
	// such an image is useless to the service, and any real MaxBytes is
	// reached long before.
	minSide = 64
)

// Options configures Downscale. The zero value selects every default.
type Options struct {
	// MaxSide is the longest side, in pixels, of the output image. An image
	// already within it keeps its dimensions and is only re-encoded.
	// Zero means DefaultMaxSide.
	MaxSide int

	// MaxBytes is the largest output, in bytes. Zero means DefaultMaxBytes.
	MaxBytes int64

	// MaxPixels is the largest width x height Downscale decodes; larger
	// images are refused from their header alone. Zero means
	// DefaultMaxPixels.
	MaxPixels int64

	// Quality is the first JPEG quality tried, 1 to 100. Zero means
	// DefaultQuality.
	Quality int

	// MinQuality is the lowest JPEG quality tried before the image is shrunk
	// below MaxSide, 1 to Quality. Zero means DefaultMinQuality (or Quality
	// if that is lower).
	MinQuality int

	// MemoryBudget is the most memory, in bytes, the decode and resize may
	// hold at their peak, as estimated from the header (see Cost); a larger
	// image is refused with a *MemoryError before decoding. Zero means
	// DefaultMemoryBudget; MemoryBudget(limit) gives it for a process's
	// memory limit.
	MemoryBudget int64
}

// withDefaults returns o with every zero or out-of-range field replaced by
// its default, so the rest of the package never checks.
func (o Options) withDefaults() Options {
	if o.MaxSide <= 0 {
		o.MaxSide = DefaultMaxSide
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxPixels <= 0 {
		o.MaxPixels = DefaultMaxPixels
	}
	if o.Quality <= 0 || o.Quality > 100 {
		o.Quality = DefaultQuality
	}
	if o.MinQuality <= 0 {
		o.MinQuality = DefaultMinQuality
	}
	if o.MemoryBudget <= 0 {
		o.MemoryBudget = DefaultMemoryBudget
	}
	o.MinQuality = min(o.MinQuality, o.Quality)
	return o
}
