package downscale

import (
	"errors"
	"fmt"
	"strings"
)

// DimensionsError reports an image refused from its header alone: it
// declares no pixels, or more than the downscaler decodes. Nothing was
// decoded. A caller records Error() as the rejection reason.
type DimensionsError struct {
	// Format is the image format, such as "png".
	Format string
	// Width and Height are the dimensions the header declares.
	Width, Height int
	// MaxPixels is the limit in force (Options.MaxPixels).
	MaxPixels int64
}

func (e *DimensionsError) Error() string {
	if e.Width <= 0 || e.Height <= 0 {
		return fmt.Sprintf("%s declares %d x %d pixels: an image with an empty side cannot be downscaled",
			e.Format, e.Width, e.Height)
	}
	return fmt.Sprintf("%s declares %d x %d pixels (%s MP), more than the %s MP the downscaler decodes",
		e.Format, e.Width, e.Height,
		megapixels(int64(e.Width)*int64(e.Height)), megapixels(e.MaxPixels))
}

// megapixels formats a pixel count as whole megapixels with thousands
// separators ("10,000"), or with one decimal below 10 MP ("2.5").
func megapixels(pixels int64) string {
	if pixels < 10_000_000 {
		return fmt.Sprintf("%.1f", float64(pixels)/1e6)
	}
	s := fmt.Sprint((pixels + 500_000) / 1_000_000)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// MemoryError reports an image refused from its header alone: decoding and
// downscaling it would hold more memory than the budget allows (see Cost
// for what is counted). Nothing was decoded. A caller records Error() as
// the rejection reason.
type MemoryError struct {
	Cost Cost
	// Budget is the limit in force (Options.MemoryBudget).
	Budget int64
}

func (e *MemoryError) Error() string {
	c := e.Cost
	return fmt.Sprintf("%s declares %d x %d pixels (%s): decoding and downscaling it would hold about %d MiB at its peak, more than the %d MiB this function can spare",
		c.Format, c.Width, c.Height, c.Kind, mib(c.Peak), mib(e.Budget))
}

// mib rounds a byte count up to whole MiB.
func mib(b int64) int64 { return (b + 1<<20 - 1) >> 20 }

// UnsupportedFormatError reports input Downscale cannot decode: HEIC, HEIF
// and AVIF (no pure-Go decoder), other image formats the service limit path
// does not cover, and data that is not an image at all.
type UnsupportedFormatError struct {
	// Format is the detected format, such as "heic", or "" if the data is
	// not a recognised image.
	Format string
	// Reason says why it cannot be downscaled.
	Reason string
}

func (e *UnsupportedFormatError) Error() string {
	if e.Format == "" {
		return "unrecognised data cannot be downscaled: " + e.Reason
	}
	return strings.ToUpper(e.Format) + " over the limit cannot be downscaled: " + e.Reason
}

// DecodeError reports an image whose header was acceptable but whose data
// could not be decoded: truncated, corrupt, or using a feature the Go
// decoder lacks (such as a 12-bit JPEG).
type DecodeError struct {
	// Format is the image format, such as "jpeg".
	Format string
	// Err is the decoder's error.
	Err error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("decode %s: %v", e.Format, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// FitError reports an image that does not fit under Options.MaxBytes even
// at the lowest quality and after shrinking to the smallest size tried. With
// the default 10 MB limit it cannot happen for a real image.
type FitError struct {
	// MaxBytes is the limit in force.
	MaxBytes int64
	// Width, Height, Quality and Bytes describe the last attempt.
	Width, Height, Quality int
	Bytes                  int64
}

func (e *FitError) Error() string {
	return fmt.Sprintf("cannot fit the image under %d bytes: still %d bytes at %d x %d, JPEG quality %d",
		e.MaxBytes, e.Bytes, e.Width, e.Height, e.Quality)
}

// errHeaderTooLong is returned when the image's header (everything before
// its dimensions) is longer than maxHeaderBytes.
var errHeaderTooLong = errors.New("header longer than 16 MiB before the image dimensions")
