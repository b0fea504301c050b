// Package metastriptest checks, for tests anywhere in the repository, what a
// metadata reader finds in a photo: exiftool (libimage-exiftool-perl) reads
// every metadata format there is. CI installs it (.ci/run); elsewhere a
// missing exiftool skips the test, except on CI, where it fails.
package metastriptest

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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

// exiftoolArgs read every tag of every group, duplicates (-a), unknown ones
// (-u) and embedded documents (-ee: the metadata of images and streams
// inside the file), named by their family 1 group (-G1), as JSON, binary
// values included (-b, as "base64:..."), so that an embedded image's bytes
// can be looked at. JSON has one key per name: with -G1 alone, exiftool
// 12.57 writes a second tag of the same group and name (a second auxC's
// URN, a second XMP serial) under the first's key, and only one reaches
// the map; family 4 (-G1:4) names the copies Group:CopyN:Tag.
var exiftoolArgs = []string{"-j", "-a", "-u", "-ee", "-G1:4", "-b"}

// OwnerMetadata lists the tags exiftool reads from the photo b that belong
// to its owner, as "Group:Tag=value": a position, a camera, a serial number,
// a time, a name, an embedded image (thumbnail or preview), or any XMP, IPTC
// or comment at all. The Orientation tag and the file's own properties
// (size, dimensions) are not the owner's.
func OwnerMetadata(t testing.TB, b []byte) []string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "photo")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(Tool(t, "exiftool"), append(exiftoolArgs, file)...).Output()
	if err != nil {
		t.Fatalf("exiftool: %v", err)
	}
	found, err := parseOwnerTags(out)
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// Exiftool is one exiftool process answering one query after another
// (-stay_open), so that a test reading hundreds of files (a fuzz target)
// pays exiftool's start, about 0.3 s, once.
type Exiftool struct {
	mu   sync.Mutex
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	file string
}

// StartExiftool starts the process; it ends when tb's test does.
func StartExiftool(tb testing.TB) *Exiftool {
	tb.Helper()
	cmd := exec.Command(Tool(tb, "exiftool"), "-stay_open", "True", "-@", "-")
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("exiftool: %v", err)
	}
	e := &Exiftool{cmd: cmd, in: in, out: bufio.NewReader(out), file: filepath.Join(tb.TempDir(), "photo")}
	tb.Cleanup(func() {
		fmt.Fprint(in, "-stay_open\nFalse\n")
		in.Close()
		cmd.Wait()
	})
	return e
}

// OwnerMetadata is the package's OwnerMetadata, asked of the running process.
func (e *Exiftool) OwnerMetadata(t testing.TB, b []byte) []string {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := os.WriteFile(e.file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(e.in, "%s\n%s\n-execute\n", strings.Join(exiftoolArgs, "\n"), e.file)
	var out bytes.Buffer
	for {
		line, err := e.out.ReadString('\n')
		if err != nil {
			t.Fatalf("exiftool: %v after %q", err, out.String())
		}
		if line == "{ready}\n" {
			break
		}
		out.WriteString(line)
	}
	found, err := parseOwnerTags(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func parseOwnerTags(out []byte) ([]string, error) {
	var tags []map[string]any
	if err := json.Unmarshal(out, &tags); err != nil || len(tags) != 1 {
		return nil, fmt.Errorf("exiftool output: %v\n%s", err, out)
	}
	return ownerTags(tags[0]), nil
}

// embeddedImages are exiftool's names for an image inside the photo
// (thumbnails, previews) whose own metadata -ee may not reach: any of them
// on a stripped photo is a finding, whatever it holds.
var embeddedImages = map[string]bool{
	"ThumbnailImage": true, "PreviewImage": true, "JpgFromRaw": true, "OtherImage": true,
	"ThumbnailTIFF": true, "PreviewTIFF": true, "EmbeddedImage": true,
}

// blank reports whether a binary value (an embedded image's, a field
// exiftool cannot decode) is only zero bytes: what a stripper blanked,
// which exiftool still lists by its location.
func blank(v string) bool {
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(v, "base64:"))
	return strings.HasPrefix(v, "base64:") && err == nil && !slices.ContainsFunc(b, func(c byte) bool { return c != 0 })
}

// ownerTags picks the owner's tags from exiftool's "Group:Tag" keys.
func ownerTags(tags map[string]any) []string {
	var found []string
	for key, v := range tags {
		group, name, _ := strings.Cut(key, ":")
		name = name[strings.LastIndexByte(name, ':')+1:] // after Copy1: of -G1:4
		switch {
		case embeddedImages[name], strings.HasPrefix(name, "MPImage"): // exiftool puts some in File
			if s, _ := v.(string); !blank(s) {
				found = append(found, fmt.Sprintf("%s=(%d bytes)", key, len(s)))
			}
		case group == "System" || group == "ExifTool" || group == "File" && name != "Comment":
		case v == "" || v == "0000:00:00 00:00:00" || blank(fmt.Sprint(v)): // a blanked field, read as empty
		case strings.HasPrefix(group, "XMP"), group == "IPTC", group == "Photoshop", group == "JUMBF",
			strings.Contains(name, "Manufacturer"), strings.Contains(name, "Owner"), strings.Contains(name, "Artist"),
			strings.Contains(name, "Copyright"), name == "ProfileDescription", name == "DeviceMfgDesc",
			strings.Contains(name, "GPS"), strings.Contains(name, "Make"), strings.Contains(name, "Model"),
			strings.Contains(name, "Serial"), strings.Contains(name, "DateTime"), strings.Contains(name, "CreateDate"),
			strings.Contains(name, "DateCreated"), strings.Contains(name, "Creator"), strings.Contains(name, "Author"),
			name == "Comment", name == "ModifyDate", name == "By-line", name == "City", name == "ImageUniqueID",
			name == "URL", name == "URN", // a HEIF data reference's location: any text
			name == "AuxiliaryImageType" && !strings.HasPrefix(fmt.Sprint(v), "urn:mpeg:"): // a HEIF auxC URN that is no standard's
			b, _ := json.Marshal(v)
			found = append(found, key+"="+string(b))
		}
	}
	return found
}
