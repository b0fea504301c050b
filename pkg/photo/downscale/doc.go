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
// first, and an image is refused before any pixel buffer is allocated when it
// declares more than [Options.MaxPixels] pixels (a decompression bomb: a tiny
// file declaring 100,000 x 100,000 pixels), with a [DimensionsError], or when
// decoding and resizing it would hold more than [Options.MemoryBudget] bytes,
// with a [MemoryError]. The byte budget is the rule; the pixel limit is a
// second line.
//
// # Memory
//
// The caller streams the object into Downscale: only the header (a few KB,
// up to the JPEG's SOF marker) is buffered, the rest is decoded as it is
// read. [Cost] prices the decode from the header with the decoders' real
// per-sample costs, measured (TestEstimateMatchesDecoders checks them within
// a few percent), per pixel of a 4:4:4 image unless said: baseline JPEG 4:2:0
// 1.5 bytes, 4:4:4 3; a progressive JPEG adds 4 bytes per sample for its
// int32 coefficients, kept to the last scan (15 bytes per pixel at 4:4:4,
// 7.5 at 4:2:0: a 100 MP progressive 4:4:4 JPEG needs 1.5 GB); a CMYK JPEG
// 8, progressive 24; a 3-component JPEG without JFIF is priced with the
// 4-byte RGBA conversion image/jpeg makes of RGB; PNG 8-bit grey 1, RGB(A) 4,
// 16-bit RGB(A) 8 (800 MB at 100 MP), a tRNS chunk widens grey and RGB, and
// interlacing doubles it (the seven passes); lossy WebP 1.5 plus its
// compressed partitions (up to 128 MiB), lossless WebP 8. The resize then
// holds the decoded image and a newWidth x oldHeight RGBA intermediate, then
// the intermediate and the RGBA result (see resize.go); the garbage of each
// phase is collected before the next allocates. [MemoryBudget] turns a
// process's memory limit into a budget: 80% of it less [ProcessReserve].
package downscale
