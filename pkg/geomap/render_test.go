package geomap

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// element is one SVG element with the class of the group it is in.
type element struct {
	name, group string
	attr        map[string]string
	text        string
}

// parseSVG reads an SVG (or an HTML page holding one) as XML: a map that
// is not well-formed XML fails here.
func parseSVG(t testing.TB, doc string) (root map[string]string, els []element) {
	t.Helper()
	start := strings.Index(doc, "<svg")
	end := strings.LastIndex(doc, "</svg>")
	if start < 0 || end < 0 {
		t.Fatalf("no svg in %.200s", doc)
	}
	dec := xml.NewDecoder(strings.NewReader(doc[start : end+len("</svg>")]))
	var groups []string
	var stack []int // indexes into els of the open elements
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range tok.Attr {
				attr[a.Name.Local] = a.Value
			}
			group := ""
			if len(groups) > 0 {
				group = groups[len(groups)-1]
			}
			if tok.Name.Local == "svg" {
				root = attr
			}
			if tok.Name.Local == "g" {
				child := group
				if c := attr["class"]; c != "" && c != "cluster" {
					child = c
				}
				groups = append(groups, child)
			}
			els = append(els, element{name: tok.Name.Local, group: group, attr: attr})
			stack = append(stack, len(els)-1)
		case xml.EndElement:
			if tok.Name.Local == "g" {
				groups = groups[:len(groups)-1]
			}
			// A <title>'s text belongs to the element it describes.
			if top := stack[len(stack)-1]; tok.Name.Local == "title" && len(stack) > 1 {
				els[stack[len(stack)-2]].text += els[top].text
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				els[stack[len(stack)-1]].text += string(tok)
			}
		}
	}
	if root == nil {
		t.Fatalf("the svg did not parse as XML")
	}
	return root, els
}

func in(els []element, group, name string) []element {
	var out []element
	for _, e := range els {
		if e.group == group && e.name == name {
			out = append(out, e)
		}
	}
	return out
}

func num(t testing.TB, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return v
}

func f64(v float64) *float64 { return &v }

// samplePoints are three predictions, one with an EXIF position, and a
// position recorded from EXIF.
func samplePoints() []Point {
	return []Point{
		{Lat: 48.8566, Lon: 2.3522, RadiusKm: 400, Category: CategoryPredicted, Label: "paris <1>.jpg", Place: "Paris, FR",
			Exif: &LatLon{Lat: 45.764, Lon: 4.8357}, ErrorKm: f64(391.5)},
		{Lat: -1.2921, Lon: 36.8219, RadiusKm: 5, Category: CategoryPredicted, Label: "nairobi.jpg"},
		{Lat: -17.8, Lon: 178.4, RadiusKm: 900, Category: "global-v2", Label: "fiji.jpg"},
		{Lat: 35.6762, Lon: 139.6503, Category: CategoryFromEXIF, Label: "tokyo.jpg"},
	}
}

func TestRenderDrawsEachPointWhereItIs(t *testing.T) {
	points := samplePoints()
	var buf bytes.Buffer
	res, err := Render(&buf, points, func(o *Options) { o.Width = 800 })
	if err != nil {
		t.Fatal(err)
	}
	root, els := parseSVG(t, buf.String())
	if root["width"] != "800" || root["data-points"] != "4" || root["data-individual"] != "4" || root["data-clusters"] != "0" {
		t.Errorf("svg attributes %v", root)
	}
	if res.Width != 800 || res.Height < 400 || res.Height > 450 {
		t.Errorf("size %dx%d, want 800 wide and about 0.49 as high plus the legend", res.Width, res.Height)
	}
	f := newFrame(800, margin)
	markers := in(els, "points", "circle")
	if len(markers) != len(points) {
		t.Fatalf("%d markers, want %d", len(markers), len(points))
	}
	colors := map[string]string{CategoryPredicted: "#0072B2", CategoryFromEXIF: "#009E73", "global-v2": "#D55E00"}
	for _, m := range markers {
		i, _ := strconv.Atoi(m.attr["data-index"])
		p := points[i]
		x, y := f.pixel(p.Lon, p.Lat)
		if math.Abs(num(t, m.attr["cx"])-x) > 0.06 || math.Abs(num(t, m.attr["cy"])-y) > 0.06 {
			t.Errorf("%s drawn at %s,%s, want %.1f,%.1f", p.Label, m.attr["cx"], m.attr["cy"], x, y)
		}
		if m.attr["fill"] != colors[p.Category] {
			t.Errorf("%s filled %s, want %s for %s", p.Label, m.attr["fill"], colors[p.Category], p.Category)
		}
	}
	// Paris is drawn last, on top: the first point given matters most.
	if markers[len(markers)-1].attr["data-index"] != "0" {
		t.Errorf("the first point is not drawn on top")
	}
	if !strings.Contains(markers[len(markers)-1].text, "paris <1>.jpg · Paris, FR") {
		t.Errorf("tooltip %q", markers[len(markers)-1].text)
	}

	// Radii: Paris' 400 km and Fiji's 900 km (twice: it crosses the
	// antimeridian, so one path has two rings); Nairobi's 5 km is smaller
	// than its marker; Tokyo has none. Largest first.
	radii := in(els, "radii", "path")
	if len(radii) != 2 || res.Radii != 2 {
		t.Fatalf("%d radius paths (Result %d), want 2", len(radii), res.Radii)
	}
	if !strings.Contains(radii[0].text, "fiji.jpg") || strings.Count(radii[0].attr["d"], "M") != 2 {
		t.Errorf("first radius %q with %d rings, want Fiji's in two pieces", radii[0].text, strings.Count(radii[0].attr["d"], "M"))
	}
	// Paris' radius reaches 400 km north of Paris: its topmost vertex is
	// where that point projects.
	north := destination(48.8566, 2.3522, 0, 400)
	_, wantTop := f.pixel(north.lon, north.lat)
	top := math.Inf(1)
	for _, pair := range strings.FieldsFunc(radii[1].attr["d"], func(r rune) bool { return r == 'M' || r == 'L' || r == 'Z' }) {
		_, y, _ := strings.Cut(pair, ",")
		top = min(top, num(t, y))
	}
	if math.Abs(top-wantTop) > 0.1 {
		t.Errorf("Paris' radius reaches up to y=%.1f, want %.1f (400 km north)", top, wantTop)
	}

	// Paris' EXIF position and the error line to it.
	exif := in(els, "exif", "rect")
	if len(exif) != 1 {
		t.Fatalf("%d EXIF markers, want 1", len(exif))
	}
	ex, ey := f.pixel(4.8357, 45.764)
	if math.Abs(num(t, exif[0].attr["x"])+exifHalfSide-ex) > 0.1 || math.Abs(num(t, exif[0].attr["y"])+exifHalfSide-ey) > 0.1 {
		t.Errorf("EXIF marker at %s,%s, want centred on %.1f,%.1f", exif[0].attr["x"], exif[0].attr["y"], ex, ey)
	}
	lines := in(els, "errors", "path")
	if len(lines) != 1 || !strings.Contains(lines[0].text, "off by 392 km") {
		t.Fatalf("error lines %v", lines)
	}
	px, py := f.pixel(2.3522, 48.8566)
	if d := lines[0].attr["d"]; !strings.HasPrefix(d, "M"+coord(px)+","+coord(py)) || !strings.HasSuffix(d, coord(ex)+","+coord(ey)) {
		t.Errorf("error line %s does not run from the prediction to the EXIF position", d)
	}

	// The legend names each category with its count, then the symbols.
	var legend []string
	for _, e := range in(els, "legend", "text") {
		legend = append(legend, e.text)
	}
	want := []string{"predicted (2)", "from EXIF, no call (1)", "global-v2 (1)", "EXIF position", "error to EXIF", "radius to scale"}
	if strings.Join(legend, "|") != strings.Join(want, "|") {
		t.Errorf("legend %q, want %q", legend, want)
	}
	// The land is there, clipped to the projection's outline.
	if land := in(els, "", "path"); len(land) < 2 {
		t.Errorf("no sphere and land paths")
	}
	if !strings.Contains(buf.String(), `class="land"`) || !strings.Contains(buf.String(), `clip-path="url(#geomap-sphere)"`) {
		t.Errorf("no clipped land")
	}
}

// manyPoints are n points spread over the inhabited latitudes, seeded: the
// same every run.
func manyPoints(n int) []Point {
	rng := rand.New(rand.NewPCG(27, 2026))
	cats := []string{CategoryPredicted, CategoryFromEXIF, "global-v2"}
	points := make([]Point, n)
	for i := range points {
		points[i] = Point{
			Lat: rng.Float64()*120 - 55, Lon: rng.Float64()*360 - 180,
			RadiusKm: rng.Float64() * 1500, Category: cats[i%len(cats)],
			Label: fmt.Sprintf("photos/%05d.jpg", i),
		}
		if i%4 == 0 {
			points[i].Exif = &LatLon{Lat: points[i].Lat + 1, Lon: points[i].Lon + 1}
		}
	}
	return points
}

func TestRenderGroupsManyPoints(t *testing.T) {
	points := manyPoints(10000)
	var buf bytes.Buffer
	res, err := Render(&buf, points)
	if err != nil {
		t.Fatal(err)
	}
	_, els := parseSVG(t, buf.String())
	markers, clusters := in(els, "points", "circle"), in(els, "clusters", "g")
	if len(markers) != len(res.Individual) || len(clusters) != res.Clusters {
		t.Fatalf("%d markers and %d clusters drawn, Result says %d and %d", len(markers), len(clusters), len(res.Individual), res.Clusters)
	}
	if n := len(markers) + len(clusters); n > DefaultMaxMarkers || n < DefaultMaxMarkers/2 {
		t.Errorf("%d markers in all, want at most %d and not far fewer (the grid grows in small steps)", n, DefaultMaxMarkers)
	}
	total := len(markers)
	for _, c := range clusters {
		n, _ := strconv.Atoi(c.attr["data-count"])
		total += n
	}
	if total != len(points) {
		t.Errorf("markers and clusters hold %d points, want %d", total, len(points))
	}
	// Radii, EXIF positions and error lines only for the points drawn one
	// by one.
	if n := len(in(els, "exif", "rect")); n > len(markers) {
		t.Errorf("%d EXIF markers for %d points drawn", n, len(markers))
	}
	if res.Radii > len(markers) {
		t.Errorf("%d radii for %d points drawn", res.Radii, len(markers))
	}
	if !strings.Contains(buf.String(), "10000 points: ") {
		t.Errorf("the legend does not say how the points were grouped")
	}
	if buf.Len() > 400<<10 {
		t.Errorf("the map of 10,000 points is %d KB, want it small enough for a dashboard widget", buf.Len()>>10)
	}
	// Deterministic: the same points give the same bytes.
	var again bytes.Buffer
	if _, err := Render(&again, points); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Errorf("two renders of the same points differ")
	}
}

func TestRenderWithoutPoints(t *testing.T) {
	var buf bytes.Buffer
	res, err := Render(&buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, els := parseSVG(t, buf.String())
	if res.Points != 0 || len(in(els, "points", "circle")) != 0 || !strings.Contains(buf.String(), "No positions to show.") {
		t.Errorf("empty map: %+v", res)
	}
}

func TestRenderRefusesBadInput(t *testing.T) {
	for name, c := range map[string]struct {
		points []Point
		opt    func(*Options)
		want   string
	}{
		"latitude beyond 90": {[]Point{{Lat: 91, Lon: 0, Label: "a.jpg"}}, func(*Options) {}, "a.jpg"},
		"NaN":                {[]Point{{Lat: math.NaN(), Lon: 0}}, func(*Options) {}, "not a position"},
		"narrow":             {nil, func(o *Options) { o.Width = 50 }, "width 50"},
		"no markers":         {nil, func(o *Options) { o.MaxMarkers = 0 }, "MaxMarkers"},
	} {
		var buf bytes.Buffer
		if _, err := Render(&buf, c.points, c.opt); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one naming %q", name, err, c.want)
		}
		if buf.Len() != 0 {
			t.Errorf("%s: wrote %d bytes before failing", name, buf.Len())
		}
	}
}

func TestFromRecords(t *testing.T) {
	at := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	records := []ledger.Record{
		{Key: "a.jpg", Status: ledger.StatusSucceeded, Source: ledger.SourceService, ModelID: "global-v2", Latitude: f64(1), Longitude: f64(2), RadiusKM: f64(10),
			ExifLatitude: f64(1.5), ExifLongitude: f64(2.5), ErrorKm: f64(78.6), Place: "A", CountryCode: "XA", UpdatedAt: at},
		{Key: "b.jpg", Status: ledger.StatusSucceeded, Source: ledger.SourceEXIF, Latitude: f64(3), Longitude: f64(4), ExifLatitude: f64(3), ExifLongitude: f64(4)},
		{Key: "c.jpg", Status: ledger.StatusRejected, ErrorCode: "not_an_image"},
		{Key: "d.jpg", Status: ledger.StatusSucceeded, Latitude: f64(95), Longitude: f64(4)},
		{Key: "e.jpg", Status: ledger.StatusSucceeded, Latitude: f64(5), Longitude: f64(6), Confidence: f64(0.9)},
	}
	points, skipped := FromRecords(records, ByStatus)
	if skipped != 2 || len(points) != 3 {
		t.Fatalf("%d points, %d skipped; want 3 and 2 (no position, a position out of range)", len(points), skipped)
	}
	a, b, e := points[0], points[1], points[2]
	if a.Category != CategoryPredicted || a.RadiusKm != 10 || a.Exif == nil || *a.ErrorKm != 78.6 || a.Place != "A, XA" || !a.Time.Equal(at) {
		t.Errorf("a: %+v", a)
	}
	if b.Category != CategoryFromEXIF || b.Exif != nil {
		t.Errorf("b, from EXIF, is its own EXIF position: %+v", b)
	}
	if e.RadiusKm != 0 || e.Category != CategoryPredicted {
		t.Errorf("e: %+v", e)
	}
	byModel, _ := FromRecords(records, ByModel)
	if byModel[0].Category != "global-v2" || byModel[1].Category != CategoryFromEXIF || byModel[2].Category != "model not recorded" {
		t.Errorf("by model: %q %q %q", byModel[0].Category, byModel[1].Category, byModel[2].Category)
	}
}

func TestCategoriesKeepStatusColours(t *testing.T) {
	var points []Point
	for i := range 20 {
		points = append(points, Point{Category: fmt.Sprintf("model-%02d", i%9)})
	}
	points = append(points, Point{Category: CategoryFromEXIF})
	cats := categories(points)
	seen := map[string]string{}
	for _, c := range cats {
		if c.Name == CategoryFromEXIF && c.Color != "#009E73" {
			t.Errorf("from EXIF is %s", c.Color)
		}
		if c.Name != CategoryFromEXIF && c.Color == "#009E73" {
			t.Errorf("%s took the EXIF colour", c.Name)
		}
		if other, ok := seen[c.Color]; ok && c.Color != palette[len(palette)-1] {
			t.Errorf("%s and %s share %s", other, c.Name, c.Color)
		}
		seen[c.Color] = c.Name
	}
	if cats[0].Name != "model-00" || cats[0].Count != 3 {
		t.Errorf("first category %+v, want the most frequent", cats[0])
	}
}

func TestWritePage(t *testing.T) {
	points := samplePoints()
	var buf bytes.Buffer
	if _, err := WritePage(&buf, points, PageOptions{Title: "Predictions <since>", Lines: []string{"status: any"}, Skipped: 2, TableRows: 3}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{"<h1>Predictions &lt;since&gt;</h1>", "status: any", "2 record(s) without a position", "paris &lt;1&gt;.jpg",
		"<td class=\"num\">400 km</td><td class=\"num\">392 km</td>", "and 1 more drawn one by one"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, "<tr><td>"); n != 3 {
		t.Errorf("%d table rows, want TableRows 3", n)
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "http://") && !strings.Contains(page, "http://www.w3.org/2000/svg") {
		t.Errorf("the page has a script or an outside reference")
	}
}

func TestWritePageFileLeavesNoFileOnFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "map.html")
	if _, err := WritePageFile(path, []Point{{Lat: 100}}, PageOptions{}); err == nil {
		t.Fatal("no error for a bad point")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left %v behind", entries)
	}
	if _, err := WritePageFile(path, samplePoints(), PageOptions{Title: "ok"}); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("want only map.html, found %v", entries)
	}
}

// benchRecords are n succeeded records with positions, half with EXIF.
func benchRecords(n int) []ledger.Record {
	records := make([]ledger.Record, n)
	for i, p := range manyPoints(n) {
		records[i] = ledger.Record{Key: p.Label, Status: ledger.StatusSucceeded, Source: ledger.SourceService, ModelID: "global-v2",
			Latitude: f64(p.Lat), Longitude: f64(p.Lon), RadiusKM: f64(p.RadiusKm)}
		if p.Exif != nil {
			records[i].ExifLatitude, records[i].ExifLongitude = f64(p.Exif.Lat), f64(p.Exif.Lon)
		}
	}
	return records
}

// europe are three predictions a few hundred km apart, with radii too
// small to see on the world map, and one far away.
func europe() []Point {
	return []Point{
		{Lat: 48.8566, Lon: 2.3522, RadiusKm: 90, Category: CategoryPredicted, Label: "paris.jpg", Place: "Paris, FR", Exif: &LatLon{Lat: 50.08, Lon: 14.42}, ErrorKm: f64(885)},
		{Lat: 50.0755, Lon: 14.4378, RadiusKm: 80, Category: CategoryPredicted, Label: "prague.jpg", Place: "Prague, CZ"},
		{Lat: 47.4979, Lon: 19.0402, RadiusKm: 60, Category: CategoryPredicted, Label: "budapest.jpg", Place: "Budapest, HU"},
		{Lat: -33.86, Lon: 151.2, RadiusKm: 50, Category: CategoryPredicted, Label: "sydney.jpg"},
	}
}

func TestFocusZoomsWhereMostPointsAre(t *testing.T) {
	sub, b, label, ok := Focus(europe())
	if !ok || len(sub) != 3 || label != "Paris, FR" {
		t.Fatalf("Focus: %d points around %q (ok %t), want the three in Europe around Paris", len(sub), label, ok)
	}
	// The box holds the points and their radii.
	if b.MinLon > 2.3522-1.2 || b.MaxLon < 19.0402+0.7 || b.MinLat > 47.4979-0.5 || b.MaxLat < 50.0755+0.7 {
		t.Errorf("box %+v does not hold the points and their radii", b)
	}
	if _, _, _, ok := Focus(samplePoints()); ok {
		t.Errorf("points far apart got a closer map")
	}
	// The world map hides the radii under the markers; the closer one
	// draws each, the largest first.
	var world, closer bytes.Buffer
	wr, _ := Render(&world, europe())
	cr, err := Render(&closer, sub, func(o *Options) { o.Bounds = &b })
	if err != nil {
		t.Fatal(err)
	}
	if wr.Radii != 0 || cr.Radii != 3 {
		t.Errorf("radii drawn: world %d, closer %d; want 0 and 3", wr.Radii, cr.Radii)
	}
	_, els := parseSVG(t, closer.String())
	for _, m := range in(els, "points", "circle") {
		x, y := num(t, m.attr["cx"]), num(t, m.attr["cy"])
		if x < 0 || x > DefaultWidth || y < 0 || y > float64(cr.Height) {
			t.Errorf("marker at %g,%g is outside the closer map", x, y)
		}
	}
	var page bytes.Buffer
	if _, err := WritePage(&page, europe(), PageOptions{Title: "Europe"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "<h2>Closer: 3 point(s) around Paris, FR</h2>") || strings.Count(page.String(), `class="geomap"`) != 2 {
		t.Errorf("the page has no closer map of Europe")
	}
}

// A reprocess run's answer is drawn with the move from the result it
// replaced: one great circle from the old position to the new, titled with
// the distance; points without a previous result have none.
func TestRenderDrawsTheMove(t *testing.T) {
	records := []ledger.Record{
		{Key: "moved.jpg", Run: "newer", Status: ledger.StatusSucceeded, Latitude: f64(46.2044), Longitude: f64(6.1432),
			Previous: &ledger.HistoryEntry{Latitude: f64(45.764), Longitude: f64(4.8357)}},
		{Key: "still.jpg", Status: ledger.StatusSucceeded, Latitude: f64(-1.29), Longitude: f64(36.82)},
	}
	points, _ := FromRecords(records, ByStatus)
	if points[0].Previous == nil || points[0].Previous.Lat != 45.764 || points[1].Previous != nil {
		t.Fatalf("previous positions %+v, %+v", points[0].Previous, points[1].Previous)
	}
	var buf bytes.Buffer
	if _, err := Render(&buf, points, func(o *Options) { o.Width = 800 }); err != nil {
		t.Fatal(err)
	}
	_, els := parseSVG(t, buf.String())
	moves := in(els, "moves", "path")
	if len(moves) != 1 || !strings.Contains(moves[0].text, "moved.jpg: moved from") || !strings.Contains(moves[0].text, "112 km") {
		t.Fatalf("moves %+v, want one from Lyon to Geneva, 112 km", moves)
	}
	f := newFrame(800, margin)
	x, y := f.pixel(4.8357, 45.764)
	if d := moves[0].attr["d"]; !strings.HasPrefix(d, fmt.Sprintf("M%.1f,%.1f", x, y)) && !strings.HasPrefix(d, fmt.Sprintf("M%.2f,%.2f", x, y)) {
		t.Errorf("the move starts at %.30s, want the old position %.1f,%.1f", d, x, y)
	}
}
