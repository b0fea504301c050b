// Package photoexif reads the EXIF block of a photo from the head of its byte
// stream, as the bytes pass on their way to the geolocation service: no
// second read, and never more than a fixed head in memory (Capture). It
// returns what the pipeline records (GPS position with altitude and
// direction, capture time with its offset, camera make and model) and, for
// whatever is missing or refused, a Problem: a stable machine word (Reason)
// and a sentence.
//
// Formats: JPEG (APP1 Exif), HEIC/HEIF/AVIF (the Exif item found through
// iinf and iloc), TIFF, WebP (EXIF chunk) and PNG (eXIf chunk). An EXIF
// block that lies beyond the captured head is not read: the answer is
// ReasonBeyondHead ("exif beyond first N bytes: not read") with the offset a
// ranged read would start from, never an error that stops the pipeline.
//
// A GPS position is returned only when it passes every rule (see gps.go and
// CheckPosition): (0, 0), out-of-range values, a GPS block without latitude
// or longitude, GPSStatus "V", zero denominators, non-finite values and
// damaged or truncated EXIF all give no position and a reason.
//
// # Library
//
// The IFDs are decoded by github.com/dsoprea/go-exif/v3 (v3.0.1), after
// comparing it with github.com/evanoberholster/imagemeta (v0.3.1).
// imagemeta is built for streaming, but its HEIC path looks for the first
// byte pattern resembling a TIFF header rather than following iloc, it has
// no WebP support, and it reduces GPS to floats: a zero denominator becomes
// +Inf, a GPS block without a fix becomes (0, 0), and GPSStatus and
// GPSImgDirection are not read, so the validity rules could not be applied.
// go-exif works on a byte slice and exposes every tag with its raw rationals
// and type; it does not find EXIF inside containers (its search is also a
// byte-pattern scan), so this package walks the JPEG, ISOBMFF, RIFF and PNG
// structures itself, bounded by the head. go-exif reports errors by
// panicking internally and allocates a thumbnail at the size IFD1 declares
// before checking it (a 1 KB file declaring a 4 GB thumbnail allocated 4 GB
// in a trial), so this package checks the IFD layout first, stops the walk
// before IFD1, never asks for a value larger than the block, and recovers
// around the library call. FuzzParse exercises all of it.
package photoexif
