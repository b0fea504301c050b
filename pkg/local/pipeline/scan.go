package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// fileState identifies a version of a local file, to notice new and changed
// files in watch mode.
type fileState struct {
	size    int64
	modTime time.Time
}

// skippedPath is something in the images folder that is not uploaded, with
// the reason, so the user is told instead of wondering where a photo went.
type skippedPath struct {
	Path   string // relative to the images folder, forward slashes
	Reason string
}

// scan is what one pass over the images folder found.
type scan struct {
	files   map[string]fileState // by relative path, forward slashes
	paths   []string             // the keys of files, sorted
	skipped []skippedPath        // in walk order
}

// Reasons a path is not uploaded.
const (
	skipHidden        = "hidden"
	skipHiddenFolder  = "hidden folder, not entered"
	skipSymlink       = "symbolic link, not followed"
	skipNotRegular    = "not a regular file"
	skipUnreadablePfx = "cannot be read: "
)

// scanDir walks dir and every folder below it and lists the regular files
// to upload, by their path relative to dir with forward slashes (the object
// key, as `aws s3 sync` would make it). Photo folders are nested (a trip,
// then a day), so nothing below dir is left out silently: hidden files and
// folders (.DS_Store, .thumbnails), symbolic links (which could loop or
// lead outside dir) and anything that is not a regular file are listed in
// skipped with the reason. dir itself may be a symbolic link.
func scanDir(dir string) (scan, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return scan{}, fmt.Errorf("images folder %s: %w", dir, err)
	}
	s := scan{files: map[string]fileState{}}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, walkErr error) error {
		if path == root {
			return walkErr // the folder itself must be readable
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		skip := func(reason string) error {
			s.skipped = append(s.skipped, skippedPath{Path: rel, Reason: reason})
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case walkErr != nil:
			if errors.Is(walkErr, fs.ErrNotExist) {
				return nil // removed while walking
			}
			return skip(skipUnreadablePfx + unwrapPathError(walkErr))
		case strings.HasPrefix(d.Name(), ".") && d.IsDir():
			return skip(skipHiddenFolder)
		case strings.HasPrefix(d.Name(), "."):
			return skip(skipHidden)
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			return skip(skipSymlink)
		case !d.Type().IsRegular():
			return skip(skipNotRegular)
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed while walking
		}
		s.files[rel] = fileState{size: info.Size(), modTime: info.ModTime()}
		s.paths = append(s.paths, rel)
		return nil
	})
	if err != nil {
		return scan{}, fmt.Errorf("images folder %s: %w", dir, err)
	}
	sort.Strings(s.paths)
	return s, nil
}

// unwrapPathError keeps only the cause of a *fs.PathError: the path is
// already on the line.
func unwrapPathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// localPath is the file behind a scanned relative path.
func localPath(dir, rel string) string {
	return filepath.Join(dir, filepath.FromSlash(rel))
}

// checkImagesDir is the check made before anything starts: the folder
// exists, is a folder, can be read, and has something to upload unless
// allowEmpty (watch mode, where files are expected to arrive later). The
// run scans again once the local parts are up, as files may change while
// they start.
func checkImagesDir(dir string, allowEmpty bool) error {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("images folder %s does not exist: give an existing folder with --images (make run IMAGES=...)", dir)
	case err != nil:
		return fmt.Errorf("images folder %s: %w", dir, err)
	case !info.IsDir():
		return fmt.Errorf("images folder %s is a file, not a folder: give the folder that holds the photos", dir)
	}
	s, err := scanDir(dir)
	if err != nil {
		return err
	}
	if len(s.paths) == 0 && !allowEmpty {
		what := "no files"
		if len(s.skipped) > 0 {
			what = fmt.Sprintf("no files to upload (skipped: %s)", describeSkipped(s.skipped, 3))
		}
		return fmt.Errorf("images folder %s has %s: add photos, or keep the run going to process files as they are dropped in (make run WATCH=1, geolocate local --watch)", dir, what)
	}
	return nil
}

// describeSkipped lists up to max skipped paths with their reasons.
func describeSkipped(skipped []skippedPath, max int) string {
	parts := make([]string, 0, max+1)
	for i, sk := range skipped {
		if i == max {
			parts = append(parts, fmt.Sprintf("and %d more", len(skipped)-max))
			break
		}
		parts = append(parts, sk.Path+" ("+sk.Reason+")")
	}
	return strings.Join(parts, ", ")
}
