package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/photo/metastrip/metastriptest"
)

var imgPhone = filepath.Join("..", "..", "testdata", "images", "exif-gps-phone.jpg")

// geolocate predict strips by default, says what it removed, sends as
// stored with --upload-metadata keep, and refuses what it cannot strip
// before any call.
func TestPredictStripsMetadataUnlessToldToKeepIt(t *testing.T) {
	original, err := os.ReadFile(imgPhone)
	if err != nil {
		t.Fatal(err)
	}
	sim, url := startSim(t, func(c *geosim.Config) { c.KeepFiles = true })

	r := runCLI(t, simEnv(url, testKey), nil, "predict", imgPhone)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "metadata removed before upload: comment") || !strings.Contains(r.stdout, "exif") {
		t.Errorf("output does not say what was removed:\n%s", r.stdout)
	}
	sent := sim.Calls()[0].File
	if len(sent) != len(original) {
		t.Errorf("sent %d bytes of %d", len(sent), len(original))
	}
	if found := metastriptest.OwnerMetadata(t, sent); len(found) != 0 {
		t.Errorf("the service received %v", found)
	}

	r = runCLI(t, simEnv(url, testKey), nil, "predict", "--upload-metadata", "keep", "--json", imgPhone)
	var out struct {
		UploadMetadata  string           `json:"upload_metadata"`
		MetadataRemoved map[string]int64 `json:"metadata_removed"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.code != 0 {
		t.Fatalf("exit %d, %v: %s %s", r.code, err, r.stdout, r.stderr)
	}
	if out.UploadMetadata != "keep" || out.MetadataRemoved != nil || string(sim.Calls()[1].File) != string(original) {
		t.Errorf("--upload-metadata keep: %+v, sent as stored %v", out, string(sim.Calls()[1].File) == string(original))
	}

	gif := filepath.Join(t.TempDir(), "anim.gif")
	if err := os.WriteFile(gif, append([]byte("GIF89a\x10\x00\x10\x00\x00\x00\x00"), make([]byte, 64)...), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runCLI(t, simEnv(url, testKey), nil, "predict", gif)
	if r.code == 0 || !strings.Contains(r.stderr, "cannot be stripped") || !strings.Contains(r.stderr, "--upload-metadata keep") {
		t.Errorf("GIF: exit %d stderr %q, want a refusal naming --upload-metadata keep", r.code, r.stderr)
	}
	if n := len(sim.Calls()); n != 2 {
		t.Errorf("%d calls: the GIF must not be sent", n)
	}
	if r := runCLI(t, simEnv(url, testKey), nil, "predict", "--upload-metadata", "maybe", imgPhone); r.code != 2 {
		t.Errorf("--upload-metadata maybe: exit %d, want 2 (usage)", r.code)
	}
}

func TestLocalRefusesAnUnknownUploadMetadataBeforeStarting(t *testing.T) {
	r := runCLI(t, nil, nil, "local", "--upload-metadata", "ignore", "--images", t.TempDir())
	if r.code != 2 || !strings.Contains(r.stderr, "--upload-metadata \"ignore\" is neither strip nor keep") {
		t.Errorf("exit %d stderr %q, want a usage error naming the values", r.code, r.stderr)
	}
}

// TestLocalRefusesAnUnknownReuseModeBeforeStarting: --reuse-results takes
// the table's values (settings.ReuseResults), and says which.
func TestLocalRefusesAnUnknownReuseModeBeforeStarting(t *testing.T) {
	r := runCLI(t, nil, nil, "local", "--reuse-results", "object", "--images", t.TempDir())
	if r.code != 2 || !strings.Contains(r.stderr, "--reuse-results \"object\" is neither content nor off") {
		t.Errorf("exit %d stderr %q, want a usage error naming the values", r.code, r.stderr)
	}
}

// Issue 46 point 12: 20 MB of random bytes was "the image is 20,000,000
// bytes...", a size the pipeline could have downscaled; it is not an image
// at all, which is what predict says, with either --upload-metadata.
func TestPredictSaysNotAnImageBeforeItsSize(t *testing.T) {
	sim, url := startSim(t)
	noise := filepath.Join(t.TempDir(), "noise.jpg")
	b := make([]byte, 20_000_000)
	for i := range b {
		b[i] = byte(i*7919 + i>>8) // no format's magic bytes at the start
	}
	if err := os.WriteFile(noise, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"strip", "keep"} {
		r := runCLI(t, simEnv(url, testKey), nil, "predict", "--upload-metadata", mode, noise)
		if r.code != exitError || !strings.Contains(r.stderr, "the file is not an image the service accepts") || strings.Contains(r.stderr, "bytes") {
			t.Errorf("--upload-metadata %s: exit %d stderr %q, want not an image, no size", mode, r.code, r.stderr)
		}
	}
	if n := sim.CallCount(); n != 0 {
		t.Errorf("%d calls, want none", n)
	}
}
