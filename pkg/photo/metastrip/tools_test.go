package metastrip

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/webp"

	"github.com/geolocate-aws/geolocate/pkg/photo/metastrip/metastriptest"
)

// libheif's heif-info and heif-convert (libheif-examples) are a HEIF reader
// and decoder, djpeg (libjpeg-turbo-progs) is libjpeg's decoder; exiftool
// is metastriptest's. CI installs them (.ci/run).

func TestExiftoolFindsNoOwnerMetadataInStrippedPhotos(t *testing.T) {
	simple := webpSample(t, "blue-purple-pink.lossy.webp")
	cfg, err := webp.DecodeConfig(bytes.NewReader(simple))
	if err != nil {
		t.Fatal(err)
	}
	et := metastriptest.StartExiftool(t)
	for name, in := range map[string][]byte{
		"phone.jpg":             phoneJPEG(t, gradient(64, 48), 6),
		"phone.png":             phonePNG(t, gradient(32, 32), 6),
		"phone.webp":            phoneWebP(t, simple, cfg.Width, cfg.Height, 6),
		"exif-gps-phone.jpg":    sample(t, "exif-gps-phone.jpg"),
		"exif-gps-phone.heic":   sample(t, "exif-gps-phone.heic"),
		"exif-gps-harbour.heic": sample(t, "exif-gps-harbour.heic"),
	} {
		t.Run(name, func(t *testing.T) {
			before := et.OwnerMetadata(t, in)
			if len(before) == 0 {
				t.Fatal("exiftool finds no owner metadata in the sample itself: the test would prove nothing")
			}
			out, _ := strip(t, in)
			if after := et.OwnerMetadata(t, out); len(after) != 0 {
				t.Errorf("exiftool still finds %v (the original had %d such tags)", after, len(before))
			}
		})
	}
}

func TestStrippedHEICOpensInAHEIFReaderWithTheSamePixels(t *testing.T) {
	info := metastriptest.Tool(t, "heif-info")
	in := sample(t, "exif-gps-phone.heic")
	out, rep := strip(t, in)
	if rep.ByKind()[KindEXIF] == 0 || rep.ByKind()[KindXMP] == 0 {
		t.Fatalf("report %v: the sample's Exif and XMP items were not found", rep)
	}
	stripped := filepath.Join(t.TempDir(), "stripped.heic")
	if err := os.WriteFile(stripped, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(info, stripped).CombinedOutput(); err != nil || !strings.Contains(string(msg), "primary") {
		t.Fatalf("heif-info on the stripped file: %v\n%s", err, msg)
	}
	samePixels(t, heifDecode(t, in), heifDecode(t, out))
}

func TestDjpegDecodesTheSamePixels(t *testing.T) {
	djpeg := metastriptest.Tool(t, "djpeg")
	in := phoneJPEG(t, gradient(48, 32), 6)
	out, _ := strip(t, in)
	run := func(b []byte) []byte {
		cmd := exec.Command(djpeg, "-pnm")
		cmd.Stdin = bytes.NewReader(b)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		res, err := cmd.Output()
		if err != nil {
			t.Fatalf("djpeg: %v %s", err, stderr.String())
		}
		if stderr.Len() != 0 {
			t.Errorf("djpeg warns: %s", stderr.String())
		}
		return res
	}
	if !bytes.Equal(run(in), run(out)) {
		t.Error("libjpeg decodes different pixels from the stripped JPEG")
	}
}
