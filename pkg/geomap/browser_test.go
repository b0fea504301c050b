package geomap

import (
	"path/filepath"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/local/dashpage/browsertest"
)

// Colours of the map as drawn (render.go).
const (
	landHex  = landColor
	oceanHex = oceanColor
)

// sampleChecks are what samplePoints look like on the map.
var sampleChecks = []browsertest.Place{
	{What: "Paris' marker", Lat: 48.8566, Lon: 2.3522, Color: "#0072B2"},
	{What: "Nairobi's marker", Lat: -1.2921, Lon: 36.8219, Color: "#0072B2"},
	{What: "Fiji's marker (global-v2)", Lat: -17.8, Lon: 178.4, Color: "#D55E00"},
	{What: "Tokyo's marker, from EXIF", Lat: 35.6762, Lon: 139.6503, Color: "#009E73"},
	{What: "the hollow EXIF square near Lyon", Lat: 45.764, Lon: 4.8357, Color: "#FFFFFF"},
	{What: "the Sahara", Lat: 23, Lon: 13, Color: landHex},
	{What: "Siberia", Lat: 62, Lon: 100, Color: landHex},
	{What: "the Pacific", Lat: 0, Lon: -150, Color: oceanHex},
	{What: "the South Atlantic", Lat: -30, Lon: -15, Color: oceanHex},
}

// TestPageInBrowser opens the CLI's page in headless chromium, as a person
// would, and looks at the pixels where the points, land and sea are.
func TestPageInBrowser(t *testing.T) {
	browsertest.Chromium(t)
	path := filepath.Join(t.TempDir(), "map.html")
	if _, err := WritePageFile(path, samplePoints(), PageOptions{Title: "Sample"}); err != nil {
		t.Fatal(err)
	}
	shot, boxes := browsertest.ShotWithBoxes(t, path, "svg.geomap", 1200, 1000)
	if len(boxes) != 1 || boxes[0].Width != DefaultWidth {
		t.Fatalf("map boxes %v, want one %d pixels wide", boxes, DefaultWidth)
	}
	browsertest.CheckMap(t, shot, boxes[0], DefaultWidth, Pixel, sampleChecks)
	// Inside Paris' 400 km radius, away from the marker: the radius' tint
	// over the land, neither plain land nor the marker.
	x, y := Pixel(DefaultWidth, 50.5, 6.5)
	if ok, got := browsertest.ColorNear(shot, boxes[0].Left+x, boxes[0].Top+y, landHex, 3); ok {
		t.Errorf("inside Paris' radius the land is untinted (%s)", got)
	}
}

// TestManyPointsInBrowser: 10,000 points draw as groups a person can read:
// the page renders, and the groups' colours cover a real share of it.
func TestManyPointsInBrowser(t *testing.T) {
	browsertest.Chromium(t)
	path := filepath.Join(t.TempDir(), "many.html")
	res, err := WritePageFile(path, manyPoints(10000), PageOptions{Title: "10,000"})
	if err != nil {
		t.Fatal(err)
	}
	// The world map; a closer map follows below the window.
	shot, boxes := browsertest.ShotWithBoxes(t, path, "svg.geomap", 1200, 800)
	if len(boxes) == 0 {
		t.Fatalf("no map")
	}
	// Clusters are drawn at 80% opacity over the map: near, not equal, to
	// the category colour.
	if n := browsertest.CountNear(shot, 0x33, 0x8E, 0xC5, 40); n < 2000 {
		t.Errorf("%d pixels of the predicted clusters' blue; want the groups visible (%d groups)", n, res.Clusters)
	}
	if n := browsertest.CountNear(shot, 0xEA, 0xE6, 0xD9, 2); n < 5000 {
		t.Errorf("%d pixels of land left visible between the groups", n)
	}
}
