// Package imageformat recognises image files by their leading bytes, so that a
// caller can reject a non-image before paying for a prediction call.
package imageformat

// DefaultMaxImageBytes is the largest upload the geolocation service accepts
// by default: the contract's "at most 10 MB", read as SI megabytes (nothing
// in the contract says MiB, and the smaller reading never sends an image the
// service could refuse). 10,000,000 bytes are allowed, one byte more is
// rejected. Callers with a configurable limit use it as the default.
const DefaultMaxImageBytes int64 = 10_000_000

// MinHeaderBytes is how many leading bytes Detect needs before it answers.
// Anything shorter is treated as a truncated header, not an image.
const MinHeaderBytes = 32

// SniffBytes is how many leading bytes Detect looks at, at most. Callers
// should peek this many bytes (or the whole file if it is shorter).
const SniffBytes = 512

// Format describes a recognised image format.
type Format struct {
	// Name is a short lower-case name such as "jpeg" or "heic".
	Name string
	// MIME is the media type to send with the upload, such as "image/jpeg".
	MIME string
	// Extension is the usual file extension including the dot, such as ".jpg".
	Extension string
}

// The formats Detect can report.
var (
	JPEG = Format{Name: "jpeg", MIME: "image/jpeg", Extension: ".jpg"}
	PNG  = Format{Name: "png", MIME: "image/png", Extension: ".png"}
	GIF  = Format{Name: "gif", MIME: "image/gif", Extension: ".gif"}
	WebP = Format{Name: "webp", MIME: "image/webp", Extension: ".webp"}
	HEIC = Format{Name: "heic", MIME: "image/heic", Extension: ".heic"}
	HEIF = Format{Name: "heif", MIME: "image/heif", Extension: ".heif"}
	AVIF = Format{Name: "avif", MIME: "image/avif", Extension: ".avif"}
	TIFF = Format{Name: "tiff", MIME: "image/tiff", Extension: ".tiff"}
	BMP  = Format{Name: "bmp", MIME: "image/bmp", Extension: ".bmp"}
)

// String returns the format name.
func (f Format) String() string { return f.Name }
