package geosim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
)

// upload is what the simulator keeps of a file: not the bytes themselves
// (unless Config.KeepFiles asks), so memory stays flat however many
// clients upload at once.
type upload struct {
	size     int64
	sha256   string
	format   string // "" when not an accepted image
	file     []byte // the bytes received, with Config.KeepFiles only
	partType string // the file part's Content-Type
	filename string
}

var (
	errNoFile   = errors.New("form field file is required")
	errTooLarge = errors.New("upload too large")
)

// readUpload streams the multipart body, hashing the "file" field and
// keeping its first bytes for sniffing. Reading stops past the limit
// (errTooLarge); the rest of the body is left for the caller to drain.
func readUpload(r *http.Request, limit int64, keep bool) (upload, error) {
	mediaType, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/form-data" || params["boundary"] == "" {
		return upload{}, errNoFile
	}
	// The whole request may carry some form overhead beyond the file.
	body := http.MaxBytesReader(nil, r.Body, limit+1<<20)
	mr := multipart.NewReader(body, params["boundary"])
	var (
		up    upload
		found bool
	)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return upload{}, errTooLarge
			}
			return upload{}, fmt.Errorf("read multipart body: %w", err)
		}
		if part.FormName() != "file" || found {
			if _, err := io.Copy(io.Discard, part); err != nil {
				return upload{}, asTooLarge(err)
			}
			continue
		}
		found = true
		partType, filename := part.Header.Get("Content-Type"), part.FileName()
		if up, err = readFilePart(part, limit, keep); err != nil {
			return upload{partType: partType, filename: filename}, err
		}
		up.partType, up.filename = partType, filename
	}
	// Reading to EOF lets net/http notice a client that disconnects while
	// the prediction runs (the request context is then cancelled).
	_, _ = io.Copy(io.Discard, body)
	if !found {
		return upload{}, errNoFile
	}
	return up, nil
}

func readFilePart(part io.Reader, limit int64, keep bool) (upload, error) {
	h := sha256.New()
	head := &headWriter{max: sniffHeadBytes}
	var file bytes.Buffer
	w := io.MultiWriter(h, head)
	if keep {
		w = io.MultiWriter(h, head, &file)
	}
	n, err := io.Copy(w, io.LimitReader(part, limit+1))
	if err != nil {
		return upload{}, asTooLarge(err)
	}
	if n > limit {
		return upload{}, errTooLarge
	}
	return upload{size: n, sha256: hex.EncodeToString(h.Sum(nil)), format: sniffFormat(head.buf), file: file.Bytes()}, nil
}

func asTooLarge(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return errTooLarge
	}
	return fmt.Errorf("read upload: %w", err)
}

// headWriter keeps the first max bytes written to it.
type headWriter struct {
	buf []byte
	max int
}

func (w *headWriter) Write(p []byte) (int, error) {
	if room := w.max - len(w.buf); room > 0 {
		w.buf = append(w.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
