package photoexif

import "fmt"

// Reason is a short machine word saying why EXIF, or its GPS position, was
// not used. The pipeline records it as is, so the values are stable.
type Reason string

// Reasons for the EXIF block as a whole (returned as the error of Parse,
// ParseHead and Capture.Meta, and repeated in Meta.GPSProblem).
const (
	// ReasonUnsupportedFormat: the bytes are not a JPEG, HEIC/HEIF/AVIF,
	// TIFF, WebP or PNG file.
	ReasonUnsupportedFormat Reason = "unsupported_format"
	// ReasonNoEXIF: the file is well formed and carries no EXIF block.
	ReasonNoEXIF Reason = "no_exif"
	// ReasonBeyondHead: the EXIF block, or the structure leading to it,
	// lies beyond the bytes captured while streaming. Problem.Offset says
	// where reading would have to continue.
	ReasonBeyondHead Reason = "exif_beyond_head"
	// ReasonTruncated: the file ends before the EXIF block does.
	ReasonTruncated Reason = "exif_truncated"
	// ReasonOffsetOutside: an IFD offset points outside the EXIF block.
	ReasonOffsetOutside Reason = "exif_offset_outside"
	// ReasonIFDCount: an IFD declares more entries than the block holds.
	ReasonIFDCount Reason = "exif_ifd_count"
	// ReasonMalformed: anything else the parser refused.
	ReasonMalformed Reason = "exif_malformed"
)

// Reasons for a missing or rejected GPS position (Meta.GPSProblem only).
// None of them ever yields a position.
const (
	// ReasonNoGPS: the EXIF block has no GPS IFD.
	ReasonNoGPS Reason = "no_gps"
	// ReasonNoFix: a GPS IFD without latitude or longitude (phones write
	// one when they had no fix).
	ReasonNoFix Reason = "gps_no_fix"
	// ReasonStatusVoid: GPSStatus is "V", measurement void.
	ReasonStatusVoid Reason = "gps_status_void"
	// ReasonNullIsland: latitude and longitude are both 0, what receivers
	// without a fix write.
	ReasonNullIsland Reason = "gps_null_island"
	// ReasonOutOfRange: latitude beyond ±90, longitude beyond ±180, or
	// minutes or seconds of 60 or more.
	ReasonOutOfRange Reason = "gps_out_of_range"
	// ReasonZeroDenominator: a coordinate rational has a zero denominator.
	ReasonZeroDenominator Reason = "gps_zero_denominator"
	// ReasonNotFinite: a coordinate is NaN or infinite.
	ReasonNotFinite Reason = "gps_not_finite"
	// ReasonGPSMalformed: a reference that is not N/S/E/W, a coordinate of
	// the wrong type or count, or a value stored outside the block.
	ReasonGPSMalformed Reason = "gps_malformed"
)

// Problem says why EXIF, or its GPS position, was not used: a stable
// machine word and a sentence for people.
type Problem struct {
	Reason Reason
	Detail string
	// Offset is, for ReasonBeyondHead, the byte offset in the file where
	// reading would have to continue; a ranged GET from there could read
	// the block. Zero otherwise.
	Offset int64
}

// Error makes a Problem usable as an error: "reason: detail".
func (p *Problem) Error() string {
	if p.Detail == "" {
		return string(p.Reason)
	}
	return string(p.Reason) + ": " + p.Detail
}

func problemf(r Reason, format string, args ...any) *Problem {
	return &Problem{Reason: r, Detail: fmt.Sprintf(format, args...)}
}
