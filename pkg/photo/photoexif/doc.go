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
// # Why no EXIF library
//
// Two maintained libraries were tried. github.com/evanoberholster/imagemeta
// (v0.3.1) is built for streaming, but its HEIC path looks for the first
// byte pattern resembling a TIFF header rather than following iloc, it has
// no WebP support, and it reduces GPS to floats: a zero denominator becomes
// +Inf, a GPS block without a fix becomes (0, 0), and GPSStatus and
// GPSImgDirection are not read, so the validity rules could not be applied.
// github.com/dsoprea/go-exif/v3 (v3.0.1) exposes every tag with its raw
// rationals, and was used first; but it links text/template (through its
// logging package), whose reflective method calls stop the linker from
// dropping unused methods, so the predictor's binary went from 11.8 MB to
// 21.2 MB (stripped, linux/arm64) for a reader of a dozen tags. It also
// panics internally on bad input and allocated a thumbnail at the size IFD1
// declares before checking it (4 GB for a 1 KB file in a trial).
//
// So this package decodes the three IFDs it needs itself (ifd.go: IFD0, the
// Exif IFD and the GPS IFD; never IFD1): the TIFF header, entry tables and
// the seven field types, every offset and count checked against the block
// before it is read. It also walks the JPEG, ISOBMFF (iloc), RIFF and PNG
// containers, bounded by the head. FuzzParse exercises all of it.
package photoexif
