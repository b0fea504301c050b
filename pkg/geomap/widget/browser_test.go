package widget

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/geomap"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/dashpage/browsertest"
)

// TestWidgetInBrowser renders the widget's answer in headless chromium the
// way the console shows it, in a box of the widget's size: the map fits
// the box and the points are where they belong.
func TestWidgetInBrowser(t *testing.T) {
	browsertest.Chromium(t)
	src := &fakeSource{records: []ledger.Record{
		{Key: "oslo.jpg", Status: ledger.StatusSucceeded, Source: ledger.SourceService, Latitude: f64(59.91), Longitude: f64(10.75), RadiusKM: f64(150)},
		{Key: "lima.jpg", Status: ledger.StatusSucceeded, Source: ledger.SourceEXIF, Latitude: f64(-12.05), Longitude: f64(-77.04)},
	}}
	out, err := newWidget(src).Handle(context.Background(), event(t, docEvent))
	if err != nil {
		t.Fatal(err)
	}
	// The console puts the answer in the widget's box (588 x 369 in the
	// event); it runs no script.
	page := `<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0"><div style="width:588px;height:369px;overflow:hidden">` + out.(string) + `</div></body></html>`
	path := filepath.Join(t.TempDir(), "widget.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	shot, boxes := browsertest.ShotWithBoxes(t, path, "svg.geomap", 800, 600)
	if len(boxes) != 1 {
		t.Fatalf("boxes %v", boxes)
	}
	b := boxes[0]
	if b.Left+b.Width > 588 || b.Top+b.Height > 369 || b.Width < 400 {
		t.Errorf("the map's box %+v does not fit the 588 x 369 widget, or is too small to read", b)
	}
	browsertest.CheckMap(t, shot, b, 576, geomap.Pixel, []browsertest.Place{
		{What: "Oslo's marker", Lat: 59.91, Lon: 10.75, Color: "#0072B2"},
		{What: "Lima's marker, from EXIF", Lat: -12.05, Lon: -77.04, Color: "#009E73"},
		{What: "Australia", Lat: -25, Lon: 134, Color: "#EAE6D9"},
		{What: "the Indian Ocean", Lat: -30, Lon: 80, Color: "#DCE9F5"},
	})
}
