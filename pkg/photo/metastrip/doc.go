// Package metastrip removes a photo's metadata on its way to the
// geolocation service, without re-encoding it: an io.Reader in, an io.Reader
// out, in bounded memory, the pixels untouched.
//
// What it removes, by format: JPEG APP1 Exif and XMP (extended XMP too),
// APP13 IPTC/Photoshop, COM, JFXX thumbnails, every other APPn but JFIF, ICC
// and Adobe (cut to their fixed payloads, the profile to its colour), and
// whatever follows the image's end; PNG eXIf, tEXt, zTXt, iTXt, tIME, sPLT
// and every ancillary chunk that does not change how the picture looks
// (iCCP is rewritten with a bounded inflate); WebP EXIF, XMP and unknown
// chunks; HEIF/HEIC/AVIF every item that is not the primary image's pixels
// (Exif, XMP, mime and URI items, thumbnails, hidden previews), the mdat and
// idat bytes no kept item covers, infe strings past a known value, descriptive
// item properties, XML boxes and unknown boxes. GIF and TIFF are refused
// (ErrUnsupported): their metadata cannot be removed without rewriting the
// file. BMP carries none and passes unchanged.
//
// Structures are kept by allow lists (JPEG markers, PNG chunks, WebP chunks,
// HEIF boxes, item types and properties, ICC tags), never by recognising
// metadata: what a reader could interpret otherwise than the stripper (a
// JPEG marker off T.81's list, a second iinf or iloc, a jpeg primary item)
// is a Problem, so Check refuses the file before anything is paid.
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
