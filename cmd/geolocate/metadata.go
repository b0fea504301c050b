package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
	"github.com/geolocate-aws/geolocate/pkg/photo/metastrip"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// uploadMetadataFlag registers --upload-metadata, the CLI's name of the
// stack's uploadMetadata (settings.UploadMetadata); note ends the help text.
func uploadMetadataFlag(fs *flag.FlagSet, def, note string) settingFlag {
	return newSettingFlag(fs, "upload-metadata", settings.UploadMetadata, def,
		"what of each photo's metadata the service receives: strip (blanked before upload: EXIF but its orientation, XMP, IPTC, comments; the pixels untouched) or keep (sent as stored)", note)
}

// strippedFile is the upload of one file with its metadata stripped: the
// source opens the file through a metastrip.Reader on every attempt, and
// report says what the last attempt removed.
type strippedFile struct {
	path string
	last *metastrip.Reader
}

// newStrippedFile refuses, before any call, a file whose metadata cannot be
// stripped: a format that would need re-encoding (GIF, TIFF), or a broken
// structure within its first 256 KiB (the predictor's rule). A file that is
// no image at all gets no stripper (nil): the client refuses it before
// sending, with its own message.
func newStrippedFile(path string) (*strippedFile, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	head, err := bufio.NewReaderSize(f, 256<<10).Peek(256 << 10)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	if _, ok := imageformat.Detect(head); !ok {
		// Not an image at all: the client refuses it, and says so better.
		// No size is given, so that its format is what the client refuses,
		// not its size: 20 MB of random bytes is not "an image over the
		// limit" that the pipeline could downscale.
		return nil, 0, nil
	}
	if _, err := metastrip.Check(head, st.Size()); err != nil {
		return nil, 0, fmt.Errorf("its metadata cannot be stripped (%w); --upload-metadata keep sends it as it is", err)
	}
	return &strippedFile{path: path}, st.Size(), nil
}

func (s *strippedFile) source(ctx context.Context) (io.ReadCloser, error) {
	rc, err := geoapi.FileSource(s.path)(ctx)
	if err != nil {
		return nil, err
	}
	r, err := metastrip.New(rc)
	if err != nil {
		rc.Close()
		return nil, err
	}
	s.last = r
	return struct {
		io.Reader
		io.Closer
	}{r, rc}, nil
}

// removed is what the last attempt blanked, kind -> bytes.
func (s *strippedFile) removed() metastrip.Report {
	if s.last == nil {
		return metastrip.Report{}
	}
	return s.last.Report()
}
