// Package browsertest loads a page in a real headless browser (Debian's
// chromium) for tests: the DOM after the page's scripts ran, and a
// screenshot. Tests of the dashboard page use it; it never ships.
package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/png"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Chromium returns the browser's path. Without chromium, the test is
// skipped, except on CI (CI set in the environment), where the browser is
// part of the setup (.ci/run installs it) and its absence fails the test.
func Chromium(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err == nil {
		return path
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("chromium is not installed, and CI is set: .ci/run installs it (apt-get install chromium)")
	}
	t.Skip("chromium is not installed: apt-get install chromium to run this browser test")
	return ""
}

// virtualTime lets the page's scripts and animation frames run before the
// browser dumps the DOM or takes the screenshot; virtual time passes as
// fast as the page allows, so it costs no real wait.
const virtualTime = "--virtual-time-budget=10000"

// DOM returns the page's DOM after its scripts ran, as chromium serializes it.
func DOM(t testing.TB, page string) string {
	t.Helper()
	out := run(t, "--dump-dom", fileURL(t, page))
	return string(out)
}

// DOMSized is DOM with the window at width x height pixels, the size a
// Screenshot of the same page takes: the layout, and so the positions a
// page's script reads, are the same in both.
func DOMSized(t testing.TB, page string, width, height int) string {
	t.Helper()
	out := run(t, "--dump-dom", "--window-size="+itoa(width)+","+itoa(height), "--hide-scrollbars", fileURL(t, page))
	return string(out)
}

// Screenshot returns a screenshot of the page at width x height pixels.
func Screenshot(t testing.TB, page string, width, height int) image.Image {
	t.Helper()
	shot := filepath.Join(t.TempDir(), "screenshot.png")
	run(t, "--screenshot="+shot, "--window-size="+itoa(width)+","+itoa(height), "--hide-scrollbars", fileURL(t, page))
	data, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("chromium wrote no screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	return img
}

// CountNear counts the pixels of img within tolerance of the colour
// r, g, b on every channel.
func CountNear(img image.Image, r, g, b uint8, tolerance int) int {
	n := 0
	bounds := img.Bounds()
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			pr, pg, pb, _ := img.At(x, y).RGBA()
			if near(pr>>8, r, tolerance) && near(pg>>8, g, tolerance) && near(pb>>8, b, tolerance) {
				n++
			}
		}
	}
	return n
}

func near(v uint32, want uint8, tolerance int) bool {
	d := int(v) - int(want)
	return d >= -tolerance && d <= tolerance
}

func run(t testing.TB, args ...string) []byte {
	t.Helper()
	// A bound on a hung browser, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{
		"--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
		// Root in a container has no user namespace for the sandbox.
		"--no-sandbox",
		"--user-data-dir=" + t.TempDir(),
		virtualTime,
	}
	cmd := exec.CommandContext(ctx, Chromium(t), append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

func fileURL(t testing.TB, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatalf("page path: %v", err)
	}
	return (&url.URL{Scheme: "file", Path: abs}).String()
}

func itoa(n int) string { return fmt.Sprint(n) }

// AssertDashboardRendered checks a page in headless chromium: it finished drawing
// its charts without a script error, each chart has its canvas, and the
// screenshot shows ALARM red and OK green.
func AssertDashboardRendered(t *testing.T, path string, charts int) {
	t.Helper()
	dom := DOM(t, path)
	if !strings.Contains(dom, `data-rendered="true"`) {
		errs := regexp.MustCompile(`data-errors="[^"]*"`).FindString(dom)
		t.Fatalf("the page did not finish rendering: %s %s", regexp.MustCompile(`data-rendered="[^"]*"`).FindString(dom), errs)
	}
	if n := strings.Count(dom, `_echarts_instance_="`); n != charts {
		t.Errorf("%d ECharts instances in the DOM, want %d", n, charts)
	}
	if n := strings.Count(dom, "<canvas"); n < charts {
		t.Errorf("%d canvases in the DOM, want at least %d", n, charts)
	}
	shot := Screenshot(t, path, 1600, 1400)
	// The alarm widget draws states as solid bands in the console's colours.
	if n := CountNear(shot, 0xd1, 0x32, 0x12, 12); n < 200 {
		t.Errorf("%d pixels in ALARM red in the screenshot, want a band", n)
	}
	if n := CountNear(shot, 0x1d, 0x81, 0x02, 12); n < 200 {
		t.Errorf("%d pixels in OK green in the screenshot, want a band", n)
	}
}

// Box is an element's bounding box in CSS pixels of the window.
type Box struct{ Left, Top, Width, Height float64 }

// ShotWithBoxes screenshots page at width x height and returns, from the
// same layout, the boxes of the elements matching selector, so a test can
// look at the pixels where it drew something. It loads a copy of the page
// with a script appended that records the boxes (the page itself needs no
// script: a map's SVG is checked as drawn).
func ShotWithBoxes(t testing.TB, page, selector string, width, height int) (image.Image, []Box) {
	t.Helper()
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	probe := fmt.Sprintf(`<script>document.documentElement.setAttribute("data-boxes", JSON.stringify(Array.from(document.querySelectorAll(%q)).map(function (e) { var r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })));</script>`, selector)
	copyPath := filepath.Join(t.TempDir(), filepath.Base(page))
	if err := os.WriteFile(copyPath, append(raw, probe...), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := DOMSized(t, copyPath, width, height)
	m := regexp.MustCompile(`data-boxes="([^"]*)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the probe found no boxes for %s", selector)
	}
	var raws [][4]float64
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &raws); err != nil {
		t.Fatalf("boxes %q: %v", m[1], err)
	}
	boxes := make([]Box, len(raws))
	for i, r := range raws {
		boxes[i] = Box{r[0], r[1], r[2], r[3]}
	}
	return Screenshot(t, copyPath, width, height), boxes
}

// ColorNear reports whether the pixel at x, y (CSS pixels, rounded) is
// within tolerance of the colour #rrggbb on every channel, and the colour
// it has, for the failure message.
func ColorNear(img image.Image, x, y float64, hex string, tolerance int) (bool, string) {
	var r, g, b uint8
	fmt.Sscanf(strings.TrimPrefix(hex, "#"), "%02x%02x%02x", &r, &g, &b)
	pr, pg, pb, _ := img.At(int(x+0.5), int(y+0.5)).RGBA()
	got := fmt.Sprintf("#%02X%02X%02X", pr>>8, pg>>8, pb>>8)
	return near(pr>>8, r, tolerance) && near(pg>>8, g, tolerance) && near(pb>>8, b, tolerance), got
}

// Place is a position on a map and the colour a person should see there.
type Place struct {
	What     string
	Lat, Lon float64
	Color    string // #rrggbb
}

// CheckMap fails the test for each place whose pixel in shot is not its
// colour: box holds a map drawn width pixels wide (scaled to the box), and
// pixel is the map's own projection (geomap.Pixel).
func CheckMap(t testing.TB, shot image.Image, box Box, width int, pixel func(width int, lat, lon float64) (x, y float64), places []Place) {
	t.Helper()
	scale := box.Width / float64(width)
	for _, p := range places {
		x, y := pixel(width, p.Lat, p.Lon)
		sx, sy := box.Left+x*scale, box.Top+y*scale
		if ok, got := ColorNear(shot, sx, sy, p.Color, 24); !ok {
			t.Errorf("%s (%g, %g) at pixel %.0f,%.0f is %s, want %s", p.What, p.Lat, p.Lon, sx, sy, got, p.Color)
		}
	}
}
