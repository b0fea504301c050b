// Package metastriptest checks, for tests anywhere in the repository, what a
// metadata reader finds in a photo: exiftool (libimage-exiftool-perl) reads
// every metadata format there is. CI installs it (.ci/run); elsewhere a
// missing exiftool skips the test, except on CI, where it fails.
package metastriptest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Tool returns the path of a command-line tool, skipping the test when it is
// not installed (failing it on CI, where CI is set).
func Tool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed; .ci/run installs it", name)
		}
		t.Skipf("%s not installed (apt-get install libimage-exiftool-perl libheif-examples)", name)
	}
	return path
}

// OwnerMetadata lists the tags exiftool reads from the photo b that belong
// to its owner, as "Group:Tag=value": a position, a camera, a serial number,
// a time, a name, or any XMP, IPTC or comment at all. The Orientation tag and
// the file's own properties (size, dimensions) are not the owner's.
func OwnerMetadata(t testing.TB, b []byte) []string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "photo")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(Tool(t, "exiftool"), "-j", "-a", "-u", "-G1", file).Output()
	if err != nil {
		t.Fatalf("exiftool: %v", err)
	}
	var tags []map[string]any
	if err := json.Unmarshal(out, &tags); err != nil || len(tags) != 1 {
		t.Fatalf("exiftool output: %v\n%s", err, out)
	}
	return ownerTags(tags[0])
}

// embeddedImages are exiftool's names for an image inside the photo
// (thumbnails, previews) whose own metadata -ee may not reach: any of them
// on a stripped photo is a finding, whatever it holds.
var embeddedImages = map[string]bool{
	"ThumbnailImage": true, "PreviewImage": true, "JpgFromRaw": true, "OtherImage": true,
	"ThumbnailTIFF": true, "PreviewTIFF": true, "EmbeddedImage": true,
}

// ownerTags picks the owner's tags from exiftool's "Group:Tag" keys.
func ownerTags(tags map[string]any) []string {
	var found []string
	for key, v := range tags {
		group, name, _ := strings.Cut(key, ":")
		switch {
		case group == "System" || group == "ExifTool" || group == "File" && name != "Comment":
		case v == "" || v == "0000:00:00 00:00:00": // a blanked field, read as empty
		case strings.HasPrefix(group, "XMP"), group == "IPTC", group == "Photoshop", group == "JUMBF",
			embeddedImages[name], strings.HasPrefix(name, "MPImage"),
			strings.Contains(name, "Manufacturer"), strings.Contains(name, "Owner"), strings.Contains(name, "Artist"),
			strings.Contains(name, "Copyright"), name == "ProfileDescription", name == "DeviceMfgDesc",
			strings.Contains(name, "GPS"), strings.Contains(name, "Make"), strings.Contains(name, "Model"),
			strings.Contains(name, "Serial"), strings.Contains(name, "DateTime"), strings.Contains(name, "CreateDate"),
			strings.Contains(name, "DateCreated"), strings.Contains(name, "Creator"), strings.Contains(name, "Author"),
			name == "Comment", name == "ModifyDate", name == "By-line", name == "City", name == "ImageUniqueID":
			b, _ := json.Marshal(v)
			found = append(found, key+"="+string(b))
		}
	}
	return found
}
