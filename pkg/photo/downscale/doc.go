// Package downscale turns a photo over the geolocation service's upload limit
// into a JPEG under it, so that the pipeline can geolocate large photos
// instead of rejecting them.
//
// [Downscale] reads JPEG, PNG or WebP, shrinks the image so that its longest
// side is at most [Options.MaxSide] pixels, and re-encodes it as a baseline
// JPEG of at most [Options.MaxBytes] bytes, lowering the quality and, as a
// last resort, the size until it fits.
//
// What it deliberately does not do:
//
//   - It does not touch photos within the limit. Those are sent byte for byte;
//     the caller decides, and only calls Downscale for objects over the limit.
//   - It keeps no metadata. image/jpeg writes no APPn segment at all (no JFIF,
//     EXIF, XMP, ICC or MPF), so the re-encoded photo carries no EXIF and no
//     GPS position: the service receives pixels only. Any EXIF the pipeline
//     wants must be read from the original bytes.
//   - It does not apply the EXIF orientation. The service receives the pixels
//     as stored, exactly as it does for a photo within the limit sent byte for
//     byte, so both paths agree.
//   - It does not decode HEIC, HEIF or AVIF: no pure-Go decoder for them is
//     available, so they are refused with an [UnsupportedFormatError] the
//     caller can record as the rejection reason.
//
// Untrusted input is checked before it costs memory: the image header is read
// first, and an image declaring more than [Options.MaxPixels] pixels (a
// decompression bomb: a tiny file declaring 100,000 x 100,000 pixels) is
// refused with a [DimensionsError] before any pixel buffer is allocated.
//
// # Memory
//
// The caller streams the object into Downscale: only the header (a few KB,
// up to the JPEG's SOF marker) is buffered, the rest is decoded as it is
// read. Memory is dominated by the decoded image, kept in the decoder's
// native form (a JPEG stays YCbCr, 1.5 bytes per pixel with 4:2:0 chroma,
// never converted to 4-byte RGBA), plus an intermediate image of
// newWidth x oldHeight RGBA and the RGBA result; see resize.go for why and
// the package benchmark for the figures. Worst cases per decoded pixel:
// baseline JPEG 4:2:0 1.5 bytes, JPEG 4:4:4 3, progressive JPEG adds about
// 2 bytes per sample for its coefficients, PNG 8-bit RGB(A) 4, PNG 16-bit 8,
// lossless WebP 4.
package downscale
