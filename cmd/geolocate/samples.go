package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
)

// sampleImagesDir is where a checkout keeps the sample images, below the
// module root.
var sampleImagesDir = filepath.Join("testdata", "images")

// sampleLargeName is the generated photo over the service's limit.
const sampleLargeName = "exif-gps-harbour-over-10MB.jpg"

// sampleImages is the folder a local run uploads when given no --images: a
// temporary copy of the checkout's testdata/images plus a photo over the
// service's 10,000,000-byte limit, with EXIF GPS, generated (10 MB of
// binary is not committed) so a run shows the downscale and the error
// column. A watching run watches the copy: files dropped there must never
// become untracked files of the repository that later runs upload and
// tests read. remove deletes the copy.
func sampleImages() (dir string, remove func(), err error) {
	root, err := awsparts.ModuleRoot()
	if err != nil {
		return "", nil, fmt.Errorf("no --images given and no checkout here to take the sample images from (%v): pass --images DIR", err)
	}
	dir, err = awsparts.TempDir("", "geolocate-images")
	if err != nil {
		return "", nil, fmt.Errorf("sample images: %w", err)
	}
	remove = func() { _ = os.RemoveAll(dir) }
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, sampleImagesDir))); err != nil {
		remove()
		return "", nil, fmt.Errorf("copy the sample images: %w", err)
	}
	if err := writeLargeSample(filepath.Join(dir, sampleLargeName)); err != nil {
		remove()
		return "", nil, err
	}
	return dir, remove, nil
}

// writeLargeSample writes the deterministic photo over the limit.
func writeLargeSample(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("sample photo: %w", err)
	}
	w := bufio.NewWriter(f)
	_, err = exiftest.WriteLargeJPEG(w, exiftest.LargeJPEGBytes, exiftest.Harbour().Bytes())
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sample photo %s: %w", path, err)
	}
	return nil
}

// isCheckoutSamples reports whether dir is the checkout's own
// testdata/images, which a watching run must not watch.
func isCheckoutSamples(dir string) bool {
	root, err := awsparts.ModuleRoot()
	if err != nil {
		return false
	}
	a, errA := filepath.Abs(dir)
	b, errB := filepath.Abs(filepath.Join(root, sampleImagesDir))
	if err := errors.Join(errA, errB); err != nil {
		return false
	}
	return filepath.Clean(a) == filepath.Clean(b)
}
