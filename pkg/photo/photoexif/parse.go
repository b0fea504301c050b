package photoexif

import (
	"errors"
	"fmt"

	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
)

// Parse reads EXIF from a whole file. See ParseHead for the results.
func Parse(data []byte) (Meta, error) { return ParseHead(data, int64(len(data))) }

// ParseHead reads EXIF from the first bytes of a file of size bytes (size < 0
// when unknown). It never panics and never allocates more than the head it
// is given, whatever the file declares.
//
// A nil error means the EXIF block was read: Meta holds what it carries, and
// Meta.GPSProblem says why Meta.GPS is nil if it is. A non-nil error is a
// *Problem saying why no EXIF, or not all of it, could be read (no EXIF at
// all is ReasonNoEXIF); Meta.GPS is then nil, Meta.GPSProblem repeats the
// error, and camera and time fields read before the damage are kept.
func ParseHead(head []byte, size int64) (Meta, error) {
	var m Meta
	lim := limits{complete: size >= 0 && int64(len(head)) >= size, headLen: len(head)}
	block, isFile, err := locate(head)
	if err == nil {
		lim.isFile = isFile
		if err = readEXIF(&m, block, lim); err == nil {
			return m, nil
		}
	}
	var need *needMore
	if errors.As(err, &need) {
		err = lim.past(need.at, need.what)
	}
	return fail(m, err)
}

// limits says how to report a structure that runs past the bytes at hand:
// inside a container's EXIF block it is an offset outside the block; in a
// whole file it is truncation; in a head it is a block beyond the head.
type limits struct {
	isFile   bool // the EXIF block is the file (TIFF), not a container's part
	complete bool // the bytes at hand are the whole file
	headLen  int
}

// past reports a structure the walkers could not finish reading in the file.
func (l limits) past(at int64, what string) *Problem {
	if l.complete {
		return problemf(ReasonTruncated, "file of %d bytes ends inside %s", l.headLen, what)
	}
	return &Problem{
		Reason: ReasonBeyondHead,
		Detail: fmt.Sprintf("exif beyond first %d bytes: not read (%s continues at byte %d)", l.headLen, what, at),
		Offset: at,
	}
}

// outside reports a TIFF structure that points or runs past the EXIF block:
// r (ReasonOffsetOutside or ReasonIFDCount) inside a container, the file's
// end or the head's end for a TIFF file.
func (l limits) outside(r Reason, at int64, detail string) *Problem {
	if l.isFile {
		return l.past(at, detail)
	}
	return &Problem{Reason: r, Detail: detail}
}

func fail(m Meta, err error) (Meta, error) {
	var p *Problem
	if !errors.As(err, &p) {
		p = problemf(ReasonMalformed, "%v", err)
	}
	m.GPS = nil
	m.GPSProblem = p
	return m, p
}

// needMore is the structure walkers' signal that they need bytes beyond the
// slice: a truncated file, or a head too short, depending on the caller.
type needMore struct {
	at   int64  // first byte offset not available
	what string // the structure being read, for the message
}

func (n *needMore) Error() string { return fmt.Sprintf("%s continues at byte %d", n.what, n.at) }

func need(at int, what string) error { return &needMore{at: int64(at), what: what} }

// locate finds the EXIF TIFF block in a file. isFile is true for TIFF files,
// where the block is the file and offsets past the head may be valid.
func locate(data []byte) (block []byte, isFile bool, err error) {
	format, ok := imageformat.Detect(data)
	if !ok {
		if len(data) < imageformat.MinHeaderBytes {
			return nil, false, problemf(ReasonUnsupportedFormat, "%d bytes are too few to recognise an image", len(data))
		}
		return nil, false, problemf(ReasonUnsupportedFormat, "not a recognised image format")
	}
	switch format {
	case imageformat.JPEG:
		block, err = locateJPEG(data)
	case imageformat.HEIC, imageformat.HEIF, imageformat.AVIF:
		block, err = locateISOBMFF(data)
	case imageformat.WebP:
		block, err = locateWebP(data)
	case imageformat.PNG:
		block, err = locatePNG(data)
	case imageformat.TIFF:
		return data, true, nil
	default:
		return nil, false, problemf(ReasonUnsupportedFormat, "EXIF is not read from %s files", format.Name)
	}
	return block, false, err
}
