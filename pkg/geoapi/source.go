package geoapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
)

// ImageSource opens the image to upload. It is called once per attempt, so
// a retry re-reads the image from its source instead of holding a copy.
type ImageSource func(ctx context.Context) (io.ReadCloser, error)

// FileSource reads the image from a file; its size is taken from the file.
func FileSource(path string) ImageSource {
	return func(context.Context) (io.ReadCloser, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("open image file: %w", err)
		}
		return f, nil
	}
}

// BytesSource reads the image from b without copying it.
func BytesSource(b []byte) ImageSource {
	return func(context.Context) (io.ReadCloser, error) {
		return bytesReadCloser{bytes.NewReader(b)}, nil
	}
}

// bytesReadCloser keeps bytes.Reader's Len visible, which io.NopCloser hides.
type bytesReadCloser struct{ *bytes.Reader }

func (bytesReadCloser) Close() error { return nil }

// sizeOf discovers the length of a freshly opened source when it can tell:
// a file's size or an in-memory reader's length. It returns -1 otherwise.
func sizeOf(rc io.ReadCloser) int64 {
	switch r := rc.(type) {
	case *os.File:
		if fi, err := r.Stat(); err == nil && fi.Mode().IsRegular() {
			return fi.Size()
		}
	case interface{ Len() int }:
		// Len is what is left to read, which is the whole image for a
		// freshly opened reader.
		return int64(r.Len())
	}
	return -1
}
