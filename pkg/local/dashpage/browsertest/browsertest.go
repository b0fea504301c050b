// Package browsertest loads a page in a real headless browser (Debian's
// chromium) for tests: the DOM after the page's scripts ran, and a
// screenshot. Tests of the dashboard page use it; it never ships.
package browsertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	"syscall"
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
	return runEnv(t, nil, args...)
}

// runEnv runs chromium with env added to this process's environment.
func runEnv(t testing.TB, env []string, args ...string) []byte {
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
	// Headless chromium now and then dies of a signal on a busy machine
	// (a segmentation fault while several start at once, seen in make
	// test): that is the browser, not the page, so it is started once
	// more. Any other failure, and a second crash, fail the test.
	var err error
	for attempt := 1; attempt <= 2; attempt++ {
		cmd := exec.CommandContext(ctx, Chromium(t), append(base, args...)...)
		if len(env) > 0 {
			cmd.Env = append(os.Environ(), env...)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		var out []byte
		if out, err = cmd.Output(); err == nil {
			return out
		}
		if !diedOfSignal(err) || ctx.Err() != nil {
			t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
		}
		t.Logf("chromium %v died (%v), started again:\n%s", args, err, stderr.String())
	}
	t.Fatalf("chromium %v: crashed twice: %v", args, err)
	return nil
}

// diedOfSignal reports whether err is a process killed by a signal of its
// own (a crash), not one that exited with a status.
func diedOfSignal(err error) bool {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
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
// its charts without a script error, each chart has its canvas and is
// readable at 1600 px (AssertReadable), and the screenshot shows ALARM red
// and OK green.
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
	AssertReadable(t, Layout(t, path, 1600, 1400))
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

// ChartText is a text an ECharts chart drew (an axis label, an axis name, a
// threshold's label), its box in the chart's own pixels.
type ChartText struct {
	Text       string
	X, Y, W, H float64
}

// ChartLayout is what one chart of the page drew, and its size.
type ChartLayout struct {
	ID            string
	Width, Height float64
	Texts         []ChartText
}

// PageLayout is the layout of a dashboard page at one window size.
type PageLayout struct {
	Charts []ChartLayout
	// Cut names the widgets whose content overflows their box (hidden by
	// it): "title: ELEMENT by N px".
	Cut []string
}

// layoutProbe records, once the page has rendered, every chart's size and
// the texts it drew (from ECharts' display list: what is on the canvas,
// labels that hideOverlap dropped excluded), and any widget whose content
// runs past its bottom.
const layoutProbe = `<script>
(function () {
  function probe() {
    if (document.documentElement.getAttribute("data-rendered") !== "true") { setTimeout(probe, 20); return; }
    var charts = [];
    document.querySelectorAll("[data-chart]").forEach(function (el) {
      var texts = [];
      echarts.getInstanceByDom(el).getZr().storage.getDisplayList(true).forEach(function (d) {
        if (!d.style || typeof d.style.text !== "string" || d.style.text === "") { return; }
        var r = d.getBoundingRect().clone();
        if (d.transform) { r.applyTransform(d.transform); }
        texts.push({Text: d.style.text, X: r.x, Y: r.y, W: r.width, H: r.height});
      });
      var box = el.getBoundingClientRect();
      charts.push({ID: el.id, Width: box.width, Height: box.height, Texts: texts});
    });
    var cut = [];
    document.querySelectorAll("section.widget").forEach(function (s) {
      var sb = s.getBoundingClientRect(), h = s.querySelector("h2");
      Array.from(s.children).forEach(function (c) {
        var cb = c.getBoundingClientRect();
        if (cb.height > 0 && cb.bottom > sb.bottom + 0.5) {
          cut.push((h ? h.textContent : "untitled") + ": " + c.tagName + " by " + Math.round(cb.bottom - sb.bottom) + " px");
        }
      });
    });
    document.documentElement.setAttribute("data-layout", JSON.stringify({Charts: charts, Cut: cut}));
  }
  probe();
})();
</script>`

// Layout loads a copy of a dashboard page with layoutProbe appended in a
// window of width x height and returns what each chart drew. env adds to
// the browser's environment (TZ=..., to draw in another time zone).
func Layout(t testing.TB, page string, width, height int, env ...string) PageLayout {
	t.Helper()
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), filepath.Base(page))
	if err := os.WriteFile(copyPath, append(raw, layoutProbe...), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runEnv(t, env, "--dump-dom", "--window-size="+itoa(width)+","+itoa(height), "--hide-scrollbars", fileURL(t, copyPath))
	m := regexp.MustCompile(`data-layout="([^"]*)"`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("the layout probe did not run (the page never rendered?)")
	}
	var l PageLayout
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &l); err != nil {
		t.Fatalf("layout %q: %v", m[1], err)
	}
	return l
}

// MinChartHeight is the least height, in pixels, a chart of the page needs
// to be read: room for a few value labels and a line between them.
const MinChartHeight = 100

// AssertReadable fails for every chart that cannot be read at the layout's
// window width: squashed under MinChartHeight (notes above it once left 20
// px), a text cut at the chart's edge (a right axis's "1,000,0"), two texts
// on top of each other (time labels), and for every widget whose content
// runs past its box (a legend hidden by the widget's edge).
func AssertReadable(t testing.TB, l PageLayout) {
	t.Helper()
	if len(l.Charts) == 0 {
		t.Errorf("no chart on the page")
	}
	for _, c := range l.Charts {
		if c.Height < MinChartHeight {
			t.Errorf("%s is %.0f px high, want at least %d", c.ID, c.Height, MinChartHeight)
		}
		for i, a := range c.Texts {
			if a.X < -0.5 || a.Y < -0.5 || a.X+a.W > c.Width+0.5 || a.Y+a.H > c.Height+0.5 {
				t.Errorf("%s: %q at %.0f,%.0f (%.0fx%.0f) is cut by the chart's edge (%.0fx%.0f)", c.ID, a.Text, a.X, a.Y, a.W, a.H, c.Width, c.Height)
			}
			for _, b := range c.Texts[i+1:] {
				if min(a.X+a.W, b.X+b.W)-max(a.X, b.X) > 1 && min(a.Y+a.H, b.Y+b.H)-max(a.Y, b.Y) > 1 {
					t.Errorf("%s: %q and %q overlap", c.ID, a.Text, b.Text)
				}
			}
		}
	}
	for _, cut := range l.Cut {
		t.Errorf("widget content cut off: %s", cut)
	}
}

// Texts returns every text the page's charts drew.
func (l PageLayout) Texts() []string {
	var out []string
	for _, c := range l.Charts {
		for _, x := range c.Texts {
			out = append(out, x.Text)
		}
	}
	return out
}
