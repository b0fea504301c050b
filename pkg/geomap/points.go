package geomap

import (
	"cmp"
	"slices"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// Point is one position to draw: a prediction, or a position recorded from
// the photo's own EXIF without a call.
type Point struct {
	Lat, Lon float64
	// RadiusKm is the prediction's radius (0: none given, e.g. a
	// high-accuracy result with a confidence instead).
	RadiusKm float64
	// Exif is the photo's own GPS position, when it has one that differs
	// from Lat/Lon (a prediction of a photo with EXIF): the map draws it and
	// the error line to it.
	Exif *LatLon
	// ErrorKm is the distance from the prediction to Exif, as recorded.
	ErrorKm *float64
	// Previous is the position of the result a reprocess run's answer
	// replaced (ledger.Record.Previous): the map draws the move from it.
	Previous *LatLon
	// Category names the point's legend entry and colour (see Categories).
	Category string
	// Label and Place describe the point in its tooltip and the page's table.
	Label, Place string
	Status       string
	Model        string
	Time         time.Time
}

// LatLon is a position in degrees.
type LatLon struct{ Lat, Lon float64 }

// ColorBy chooses what a point's colour (its Category) stands for.
type ColorBy string

const (
	// ByStatus colours predictions by how the position was obtained:
	// a paid prediction, a position from EXIF without a call, or another
	// status that carries a position.
	ByStatus ColorBy = "status"
	// ByModel colours predictions by the model that made them.
	ByModel ColorBy = "model"
)

// Category names of ByStatus (the others are the record's status).
const (
	CategoryPredicted = "predicted"
	CategoryFromEXIF  = "from EXIF, no call"
)

// FromRecords turns records into points, in the records' order (the map
// draws the first ones on top and keeps them out of clusters longest, so
// pass the most important first: Query's newest first does that). Records
// without a position (rejected, failed, waiting) are not drawn: skipped
// counts them, so a map can say what it leaves out.
func FromRecords(records []ledger.Record, by ColorBy) (points []Point, skipped int) {
	points = make([]Point, 0, len(records))
	for i := range records {
		r := &records[i]
		if r.Latitude == nil || r.Longitude == nil || !validLatLon(*r.Latitude, *r.Longitude) {
			skipped++
			continue
		}
		p := Point{
			Lat: *r.Latitude, Lon: *r.Longitude,
			ErrorKm: r.ErrorKm,
			Label:   r.Key,
			Place:   place(r),
			Status:  r.Status,
			Model:   r.ModelID,
			Time:    r.UpdatedAt,
		}
		if r.RadiusKM != nil && *r.RadiusKM > 0 {
			p.RadiusKm = *r.RadiusKM
		}
		if r.Source != ledger.SourceEXIF && r.ExifLatitude != nil && r.ExifLongitude != nil && validLatLon(*r.ExifLatitude, *r.ExifLongitude) {
			p.Exif = &LatLon{Lat: *r.ExifLatitude, Lon: *r.ExifLongitude}
		}
		if prev := r.Previous; prev != nil && prev.Latitude != nil && prev.Longitude != nil && validLatLon(*prev.Latitude, *prev.Longitude) {
			p.Previous = &LatLon{Lat: *prev.Latitude, Lon: *prev.Longitude}
		}
		p.Category = category(r, by)
		points = append(points, p)
	}
	return points, skipped
}

func category(r *ledger.Record, by ColorBy) string {
	fromEXIF := r.Source == ledger.SourceEXIF
	if by == ByModel {
		switch {
		case fromEXIF:
			return CategoryFromEXIF
		case r.ModelID == "":
			return "model not recorded"
		}
		return r.ModelID
	}
	switch {
	case r.Status != ledger.StatusSucceeded:
		return r.Status
	case fromEXIF:
		return CategoryFromEXIF
	}
	return CategoryPredicted
}

func place(r *ledger.Record) string {
	var parts []string
	for _, s := range []string{r.Place, r.Admin1, r.CountryCode} {
		if s != "" && !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	out := ""
	for i, s := range parts {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}

func validLatLon(lat, lon float64) bool {
	return lat >= -90 && lat <= 90 && lon >= -180 && lon <= 180
}

// palette is Okabe and Ito's eight colours for colour-blind readers, less
// black and yellow (too dark and too pale on the map), plus greys.
var palette = []string{"#0072B2", "#009E73", "#D55E00", "#CC79A7", "#E69F00", "#56B4E9", "#7F7F7F", "#4D4D4D"}

// fixedColors keeps the status categories' colours the same on every map.
var fixedColors = map[string]string{
	CategoryPredicted: palette[0],
	CategoryFromEXIF:  palette[1],
}

// categoryEntry is a legend entry: a category, its colour and its count.
type categoryEntry struct {
	Name  string
	Color string
	Count int
}

// Categories orders the points' categories for the legend (most points
// first, then by name) and gives each its colour: the status categories
// keep theirs, the others take the palette's in that order, the last
// colour standing for every category beyond it.
func categories(points []Point) []categoryEntry {
	counts := map[string]int{}
	for _, p := range points {
		counts[p.Category]++
	}
	out := make([]categoryEntry, 0, len(counts))
	for name, n := range counts {
		out = append(out, categoryEntry{Name: name, Count: n})
	}
	slices.SortFunc(out, func(a, b categoryEntry) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	used := map[string]bool{}
	for _, c := range fixedColors {
		used[c] = true
	}
	next := 0
	for i := range out {
		if c, ok := fixedColors[out[i].Name]; ok {
			out[i].Color = c
			continue
		}
		for next < len(palette)-1 && used[palette[next]] {
			next++
		}
		out[i].Color = palette[next]
		used[palette[next]] = true
	}
	return out
}
