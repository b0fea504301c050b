//go:build unix

package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
)

// nestedTree is a photo folder as people have them: nested by trip and
// day, with the debris of file managers and a few oddities. It returns the
// folder, the paths to upload and what must be skipped, and why.
func nestedTree(t *testing.T) (string, []string, []skippedPath) {
	t.Helper()
	dir := t.TempDir()
	jpeg, err := os.ReadFile(filepath.Join(sampleImagesDir, "gradient-64x48.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{
		"top.jpg",
		"day1/beach.jpg",
		"day2/evening/harbour at dusk.jpg",
		"day2/.DS_Store",
		".thumbnails/top.jpg",
	} {
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Dir(path), filepath.Base(path), jpeg)
	}
	if err := os.Mkdir(filepath.Join(dir, "empty day"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "top.jpg"), filepath.Join(dir, "day1", "link.jpg")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "loop")); err != nil { // would walk forever if followed
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "day1", "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	upload := []string{"day1/beach.jpg", "day2/evening/harbour at dusk.jpg", "top.jpg"}
	skipped := []skippedPath{
		{".thumbnails", skipHiddenFolder},
		{"day1/link.jpg", skipSymlink},
		{"day1/pipe", skipNotRegular},
		{"day2/.DS_Store", skipHidden},
		{"loop", skipSymlink},
	}
	return dir, upload, skipped
}

func TestScanDirWalksSubfoldersAndSaysWhatItSkips(t *testing.T) {
	dir, wantPaths, wantSkipped := nestedTree(t)
	for _, root := range []string{dir, symlinkTo(t, dir)} { // the folder itself may be a link
		s, err := scanDir(root)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(s.paths, wantPaths) {
			t.Errorf("%s: paths %q, want %q", root, s.paths, wantPaths)
		}
		if !reflect.DeepEqual(s.skipped, wantSkipped) {
			t.Errorf("%s: skipped %+v, want %+v", root, s.skipped, wantSkipped)
		}
	}
}

func symlinkTo(t *testing.T, dir string) string {
	t.Helper()
	link := filepath.Join(t.TempDir(), "photos")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	return link
}

func TestScanDirSaysWhichFolderItCannotRead(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every folder")
	}
	dir := t.TempDir()
	writeFile(t, dir, "a.jpg", []byte{0xFF, 0xD8, 0xFF})
	locked := filepath.Join(dir, "locked")
	if err := os.Mkdir(locked, 0o000); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(locked, 0o755) })
	s, err := scanDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.skipped) != 1 || s.skipped[0].Path != "locked" || !strings.HasPrefix(s.skipped[0].Reason, skipUnreadablePfx) {
		t.Errorf("skipped %+v, want locked as unreadable", s.skipped)
	}
}

// TestRunUploadsNestedFoldersByRelativePath runs the pipeline on the nested
// tree: every photo is uploaded once, keyed by prefix + relative path, and
// each skip is reported once.
func TestRunUploadsNestedFoldersByRelativePath(t *testing.T) {
	db := awspartstest.SharedDynamoDB(t)
	dir, wantPaths, wantSkipped := nestedTree(t)
	var progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sum, err := Run(ctx, Options{
		ImagesDir: dir,
		KeyPrefix: "trip/",
		Getenv:    noServiceEnv,
		DynamoDB:  db,
		Table:     "nested-" + fmt.Sprint(time.Now().UnixNano()),
		Progress:  &progress,
	})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress.String())
	}
	var keys []string
	for _, r := range sum.Results {
		keys = append(keys, r.Upload.Key)
		if r.Status() != ledger.StatusSucceeded {
			t.Errorf("%s: %s", r.Upload.Key, r.Status())
		}
		if want := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(r.Upload.Key, "trip/"))); r.Upload.File != want {
			t.Errorf("%s uploaded from %s, want %s", r.Upload.Key, r.Upload.File, want)
		}
	}
	var wantKeys []string
	for _, p := range wantPaths {
		wantKeys = append(wantKeys, "trip/"+p)
	}
	if !reflect.DeepEqual(keys, wantKeys) {
		t.Errorf("keys %q, want %q", keys, wantKeys)
	}
	for _, sk := range wantSkipped {
		line := fmt.Sprintf("skipped   %s (%s)\n", sk.Path, sk.Reason)
		if n := strings.Count(progress.String(), line); n != 1 {
			t.Errorf("%q reported %d times, want once:\n%s", line, n, progress.String())
		}
	}
}

// TestRunChecksTheImagesFolderFirst: a wrong folder is one error, found
// before the simulator, S3 or DynamoDB Local is started.
func TestRunChecksTheImagesFolderFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "photo.jpg")
	writeFile(t, dir, "photo.jpg", []byte{0xFF, 0xD8, 0xFF})
	empty := t.TempDir()
	onlyHidden := t.TempDir()
	writeFile(t, onlyHidden, ".DS_Store", []byte("x"))
	tests := []struct {
		name, dir    string
		watch        bool
		want         string
		serveRefuses bool
	}{
		{"missing", filepath.Join(dir, "no-such-folder"), false, "images folder " + filepath.Join(dir, "no-such-folder") + " does not exist: give an existing folder with --images", true},
		{"missing, watch", filepath.Join(dir, "no-such-folder"), true, "does not exist", true},
		{"a file", file, false, "images folder " + file + " is a file, not a folder", true},
		{"empty", empty, false, "images folder " + empty + " has no files: add photos, or keep the run going to process files as they are dropped in (make run WATCH=1, geolocate local --watch)", false},
		{"only hidden files", onlyHidden, false, "has no files to upload (skipped: .DS_Store (hidden))", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var progress bytes.Buffer
			begin := time.Now()
			sum, err := Run(context.Background(), Options{ImagesDir: tt.dir, Watch: tt.watch, Getenv: noServiceEnv, Progress: &progress})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if sum != nil || progress.Len() != 0 {
				t.Errorf("something started: summary %v, progress %q", sum, progress.String())
			}
			if d := time.Since(begin); d > time.Second {
				t.Errorf("took %s: the check must come before starting anything", d)
			}
			if tt.serveRefuses {
				// Serve accepts an empty folder (events may name later
				// uploads); a cancelled context bounds it if it starts.
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				if err := Serve(ctx, Options{ImagesDir: tt.dir, Getenv: noServiceEnv, Progress: &progress}); err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("Serve: err = %v, want %q", err, tt.want)
				}
			}
		})
	}
}
