// Command samplephotos writes the sample photos too large to commit into a
// folder, for `make run`: a JPEG over the service's 10,000,000-byte limit,
// carrying the harbour photo's EXIF GPS position, so a local run shows the
// downscale path and the error column. The bytes are deterministic.
//
//	go run ./cmd/samplephotos -out DIR
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
)

// largeName is the generated photo's file name.
const largeName = "exif-gps-harbour-over-10MB.jpg"

func main() {
	out := flag.String("out", "", "folder to write the generated photos into (must exist)")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "samplephotos:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	if dir == "" {
		return errors.New("-out is required: the folder to write the photos into")
	}
	path := filepath.Join(dir, largeName)
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	w := bufio.NewWriter(f)
	n, err := exiftest.WriteLargeJPEG(w, exiftest.LargeJPEGBytes, exiftest.Harbour().Bytes())
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Printf("generated %s (%d bytes)\n", path, n)
	return nil
}
