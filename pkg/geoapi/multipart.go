package geoapi

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"
	"strings"
	"sync"
	"sync/atomic"
)

// formField is the multipart field the service reads the image from.
const formField = "file"

// uploadBody streams a multipart/form-data body made of a precomputed part
// header, the image read straight from its source, and the closing boundary.
// Nothing is buffered, and when the image size is known the exact
// Content-Length is known too, so the request is not chunked.
type uploadBody struct {
	io.Reader
	// sent becomes true once the transport has read the whole body: from
	// then on the service may have done (and charged for) the work.
	sent          atomic.Bool
	image         *guardedReader
	source        io.Closer
	contentLength int64 // -1 when the image size is unknown
	contentType   string
	closeOnce     sync.Once
	closeErr      error
}

// newUploadBody wraps image (size bytes, or -1 when unknown) in a multipart
// body with a single "file" part; the stream stops past limit bytes.
func newUploadBody(image io.Reader, source io.Closer, size, limit int64, filename, imageType string) (*uploadBody, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	header := make(textproto.MIMEHeader)
	header.Set("Content-Disposition",
		fmt.Sprintf(`form-data; name="%s"; filename="%s"`, formField, escapeQuotes(filename)))
	header.Set("Content-Type", imageType)
	if _, err := mw.CreatePart(header); err != nil {
		return nil, fmt.Errorf("write multipart header: %w", err)
	}
	head := bytes.Clone(buf.Bytes())
	buf.Reset()
	if err := mw.Close(); err != nil {
		return nil, fmt.Errorf("write multipart trailer: %w", err)
	}
	tail := bytes.Clone(buf.Bytes())

	guard := &guardedReader{r: image, want: size, limit: limit}
	length := int64(-1)
	if size >= 0 {
		length = int64(len(head)) + size + int64(len(tail))
	}
	return &uploadBody{
		Reader:        io.MultiReader(bytes.NewReader(head), guard, bytes.NewReader(tail)),
		image:         guard,
		source:        source,
		contentLength: length,
		contentType:   mw.FormDataContentType(),
	}, nil
}

// Close closes the image source once, however many times it is called.
// Read marks the body sent when the transport reaches its end.
func (b *uploadBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if err == io.EOF {
		b.sent.Store(true)
	}
	return n, err
}

func (b *uploadBody) Close() error {
	b.closeOnce.Do(func() { b.closeErr = b.source.Close() })
	return b.closeErr
}

// failure returns the error that stopped the image stream, if any: the image
// grew past the limit, did not match its announced size, or could not be read.
func (b *uploadBody) failure() error { return b.image.failure() }

// guardedReader counts the image bytes as they are streamed and stops the
// upload when they pass the size limit or differ from the announced size.
type guardedReader struct {
	r     io.Reader
	want  int64 // announced size, -1 when unknown
	limit int64
	n     int64

	mu  sync.Mutex
	err error
}

func (g *guardedReader) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	g.n += int64(n)
	switch {
	case g.n > g.limit:
		return 0, g.fail(&InputError{Field: "Image", Err: ErrImageTooLarge, Size: g.n, Limit: g.limit, Sending: true,
			Reason: fmt.Sprintf("more than %d bytes", g.limit)})
	case g.want >= 0 && g.n > g.want:
		return 0, g.fail(&InputError{Field: "Size", Err: ErrSizeMismatch, Size: g.n, Limit: g.want,
			Reason: fmt.Sprintf("image source has more than the announced %d bytes", g.want)})
	case err == io.EOF && g.want >= 0 && g.n < g.want:
		return n, g.fail(&InputError{Field: "Size", Err: ErrSizeMismatch, Size: g.n, Limit: g.want,
			Reason: fmt.Sprintf("image source ended after %d of the announced %d bytes", g.n, g.want)})
	case err != nil && err != io.EOF:
		return n, g.fail(fmt.Errorf("geoapi: Predict: read image: %w", err))
	}
	return n, err
}

func (g *guardedReader) fail(err error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err == nil {
		g.err = err
	}
	return g.err
}

func (g *guardedReader) failure() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"", "\r", "", "\n", "")

// escapeQuotes makes a filename safe inside a quoted header parameter.
func escapeQuotes(s string) string { return quoteEscaper.Replace(s) }
