package geomap

import (
	"math"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/geodist"
)

// The projection is equal-area: a small cell of the sphere covers a map
// area proportional to its area on the Earth, whatever its latitude and
// longitude. A wrong coefficient or formula breaks the proportion.
func TestEqualEarthKeepsAreas(t *testing.T) {
	const d = 0.01 // degrees
	ratio := func(lon, lat float64) float64 {
		x0, y0 := equalEarth(lon, lat)
		x1, y1 := equalEarth(lon+d, lat)
		x2, y2 := equalEarth(lon, lat+d)
		mapArea := math.Abs((x1-x0)*(y2-y0) - (x2-x0)*(y1-y0))
		sphereArea := radians(d) * (math.Sin(radians(lat+d)) - math.Sin(radians(lat)))
		return mapArea / sphereArea
	}
	want := ratio(0, 0)
	for _, c := range [][2]float64{{0, 30}, {100, 45}, {-170, -60}, {45, 75}, {179, -85}} {
		if got := ratio(c[0], c[1]); math.Abs(got/want-1) > 1e-3 {
			t.Errorf("area ratio at lon %g lat %g is %g, at the origin %g: not equal-area", c[0], c[1], got, want)
		}
	}
	// The published extent of Equal Earth on the unit sphere.
	if math.Abs(eeMaxX-2.7066) > 1e-3 || math.Abs(eeMaxY-1.3174) > 1e-3 {
		t.Errorf("extent %g x %g, want 2.7066 x 1.3174", eeMaxX, eeMaxY)
	}
	if x, y := equalEarth(0, 0); x != 0 || y != 0 {
		t.Errorf("origin projects to %g, %g", x, y)
	}
}

// Every vertex of a radius circle lies the radius away from its centre on
// the sphere the pipeline measures errors on.
func TestGeodesicCircleIsTheRadiusAway(t *testing.T) {
	for _, c := range []struct{ lat, lon, km float64 }{{48.85, 2.35, 12.5}, {-33.9, 151.2, 800}, {64.8, -147.7, 2500}, {0, 179.9, 300}} {
		for _, p := range geodesicCircle(c.lat, c.lon, c.km, 64) {
			if got := geodist.Km(c.lat, c.lon, p.lat, p.lon); math.Abs(got-c.km) > 1e-6*c.km+1e-9 {
				t.Fatalf("vertex %v is %g km from %v, want %g", p, got, c, c.km)
			}
			if p.lon < -180 || p.lon >= 180 {
				t.Fatalf("vertex longitude %g not normalized", p.lon)
			}
		}
	}
}

func TestPlanarRings(t *testing.T) {
	t.Run("a small circle is one ring", func(t *testing.T) {
		rings := planarRings(geodesicCircle(48.85, 2.35, 100, 32))
		if len(rings) != 1 || len(rings[0]) != 32 {
			t.Fatalf("got %d rings", len(rings))
		}
	})
	t.Run("a circle across the antimeridian runs on and is repeated at the other edge", func(t *testing.T) {
		rings := planarRings(geodesicCircle(-17.8, 178, 800, 64))
		if len(rings) != 2 {
			t.Fatalf("got %d rings, want the ring and its copy", len(rings))
		}
		lo, hi := lonRange(rings[0])
		if hi <= 180 || hi-lo > 30 {
			t.Errorf("ring spans %g..%g, want a continuous span past 180", lo, hi)
		}
		lo2, hi2 := lonRange(rings[1])
		if lo2 != lo-360 || hi2 != hi-360 {
			t.Errorf("copy spans %g..%g, want %g..%g", lo2, hi2, lo-360, hi-360)
		}
	})
	t.Run("a circle around a pole is closed along the pole", func(t *testing.T) {
		rings := planarRings(geodesicCircle(85, 10, 900, 64))
		var reachesPole bool
		for _, p := range rings[0] {
			reachesPole = reachesPole || p.lat == 90
		}
		lo, hi := lonRange(rings[0])
		if !reachesPole || hi-lo < 359 {
			t.Errorf("ring spans %g..%g (pole reached: %t), want 360° closed at the North Pole", lo, hi, reachesPole)
		}
		if len(rings) != 2 {
			t.Errorf("got %d rings, want the cap and its copy covering the map's width", len(rings))
		}
	})
	t.Run("Antarctica, cut at the antimeridian in the data, is closed along the South Pole", func(t *testing.T) {
		found := false
		for _, ring := range landRings() {
			for _, p := range ring {
				found = found || p.lat == -90
			}
		}
		if !found {
			t.Errorf("no land ring reaches the South Pole")
		}
	})
}

// The embedded outline is Natural Earth's land: known land is inside it
// and known sea outside (even-odd over all rings, as the SVG fills it).
func TestWorldOutlineIsLand(t *testing.T) {
	rings, err := parseRings(world110m)
	if err != nil {
		t.Fatal(err)
	}
	points := 0
	for _, r := range rings {
		points += len(r)
		for _, p := range r {
			if !validLatLon(p.lat, p.lon) {
				t.Fatalf("point %v out of range", p)
			}
		}
	}
	if len(rings) < 100 || points < 4000 {
		t.Fatalf("%d rings, %d points: not the 1:110m land", len(rings), points)
	}
	inside := func(lon, lat float64) bool {
		in := false
		for _, ring := range landRings() {
			for i, j := 0, len(ring)-1; i < len(ring); j, i = i, i+1 {
				a, b := ring[i], ring[j]
				if (a.lat > lat) != (b.lat > lat) && lon < (b.lon-a.lon)*(lat-a.lat)/(b.lat-a.lat)+a.lon {
					in = !in
				}
			}
		}
		return in
	}
	for _, land := range []struct {
		name     string
		lon, lat float64
	}{{"Sahara", 13, 23}, {"Siberia", 100, 62}, {"Chukotka, past the antimeridian", -175, 66}, {"Brazil", -50, -10}, {"Antarctica", 0, -85}, {"Australia", 134, -25}} {
		if !inside(land.lon, land.lat) {
			t.Errorf("%s (%g, %g) is not land", land.name, land.lon, land.lat)
		}
	}
	for _, sea := range []struct {
		name     string
		lon, lat float64
	}{{"mid Atlantic", -35, 20}, {"Pacific", -150, 0}, {"Indian Ocean", 80, -30}, {"Caspian Sea", 50.5, 42}} {
		if inside(sea.lon, sea.lat) {
			t.Errorf("%s (%g, %g) is land", sea.name, sea.lon, sea.lat)
		}
	}
}

func TestKm(t *testing.T) {
	for v, want := range map[float64]string{0.84: "0.8 km", 12.5: "12.5 km", 250: "250 km", 1234.4: "1,234 km", 19999.6: "20,000 km"} {
		if got := km(v); got != want {
			t.Errorf("km(%g) = %q, want %q", v, got, want)
		}
	}
}
