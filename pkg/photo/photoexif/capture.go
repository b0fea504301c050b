package photoexif

// DefaultCaptureLimit is how many leading bytes a Capture keeps unless told
// otherwise. A JPEG APP1 segment cannot exceed 64 KiB and follows SOI and at
// most a few small segments; phones put the HEIF meta box and the Exif item
// near the start. 256 KiB leaves room for large ICC profiles and XMP written
// before the EXIF block, at a fixed cost per object.
const DefaultCaptureLimit = 256 << 10

// Capture keeps the first bytes of a stream that passes through it, so that
// EXIF can be read from the same single read that uploads the image:
//
//	c := photoexif.NewCapture(0)
//	body := io.TeeReader(object, c)
//	... send body ...
//	meta, err := c.Meta()
//
// It keeps at most its limit and only counts the rest, so memory stays flat
// whatever the size of the stream. Write never fails. A Capture is not safe
// for concurrent use.
type Capture struct {
	buf   []byte
	total int64
}

// NewCapture returns a Capture keeping at most limit bytes; limit <= 0 means
// DefaultCaptureLimit. The buffer is allocated once, up front.
func NewCapture(limit int) *Capture {
	if limit <= 0 {
		limit = DefaultCaptureLimit
	}
	return &Capture{buf: make([]byte, 0, limit)}
}

// Write keeps what fits under the limit and counts everything.
func (c *Capture) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	if room := cap(c.buf) - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// Head is the bytes kept so far. It aliases the Capture's buffer.
func (c *Capture) Head() []byte { return c.buf }

// Total is how many bytes passed through, kept or not.
func (c *Capture) Total() int64 { return c.total }

// Meta reads EXIF from the captured head. Call it once the stream has ended:
// it takes the bytes counted so far as the size of the file, so a block
// beyond the head is reported as ReasonBeyondHead and a block cut short by
// the end of the file as ReasonTruncated. To decide before the stream ends
// (for example, not to pay for a photo whose position is known), read at
// least the limit first and call ParseHead with the object's size.
func (c *Capture) Meta() (Meta, error) { return ParseHead(c.buf, c.total) }
