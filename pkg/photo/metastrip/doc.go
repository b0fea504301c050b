// Package metastrip removes a photo's metadata on its way to the
// geolocation service, without re-encoding it: an io.Reader in, an io.Reader
// out, in bounded memory, the pixels untouched.
//
// What it removes, by format: JPEG APP1 Exif and XMP (extended XMP too),
// APP13 IPTC/Photoshop, COM, every other APPn but JFIF, ICC and Adobe, and
// whatever follows the image's end; PNG eXIf, tEXt, zTXt, iTXt, tIME and
// every ancillary chunk that does not change how the picture looks; WebP
// EXIF, XMP and unknown chunks; HEIF/HEIC/AVIF Exif, XMP and every other
// mime or URI item, XML boxes and unknown boxes. GIF and TIFF are refused
// (ErrUnsupported): their metadata cannot be removed without rewriting the
// file. BMP carries none and passes unchanged.
//
// Everything is blanked in place, so the output is exactly as long as the
// input: JPEG segments become fill bytes, PNG chunks and WebP chunks become
// padding chunks of zeros, HEIF items become zeros. The upload keeps an exact
// Content-Length (the service's contract does not say whether it takes a
// chunked upload), a retry that reads the object again sends the same bytes,
// and every offset inside the file stays valid, which HEIF's iloc needs.
//
// Orientation is the one EXIF tag kept, in a minimal EXIF block that holds
// nothing else: it changes how the picture is shown (a phone photo held
// upright is stored on its side), and its eight values say how the phone was
// held, nothing about who, where or when. Rotating the pixels instead would
// mean re-encoding them.
//
// What a Reader cannot follow (a JPEG segment shorter than its header, a PNG
// chunk with an impossible length, a HEIF meta box after the media data) is
// zeroed from there to the end and reported (Report.Problem): nothing unread
// leaves readable. Check runs the same walk over the head of a file before
// anything is paid for, so such a file can be refused instead.
package metastrip
