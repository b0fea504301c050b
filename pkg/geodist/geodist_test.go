package geodist

import (
	"math"
	"slices"
	"testing"
)

func TestKm(t *testing.T) {
	tests := []struct {
		name                   string
		lat1, lon1, lat2, lon2 float64
		want, tol              float64
	}{
		// Notre-Dame de Paris to Westminster: 343.5 km on the sphere.
		{"Paris-London", 48.8530, 2.3499, 51.5007, -0.1246, 343.5, 0.5},
		// JFK to LHR, the classic example: 5,540 km on the mean sphere.
		{"New York-London", 40.6413, -73.7781, 51.4700, -0.4543, 5540, 5},
		{"same point", 53.54389, 9.96611, 53.54389, 9.96611, 0, 1e-9},
		{"antipodes", 10, 20, -10, -160, math.Pi * EarthRadiusKm, 1e-6},
		{"poles", 90, 0, -90, 0, math.Pi * EarthRadiusKm, 1e-6},
		// Across the antimeridian: 1 degree of longitude at the equator.
		{"antimeridian", 0, 179.5, 0, -179.5, 2 * math.Pi * EarthRadiusKm / 360, 1e-6},
		// Taveuni, Fiji, on both sides of 180°: 0.05° north and 0.05° east,
		// 5.56 km and 5.32 km (cos 16.8°): 7.70 km, not 20,000.
		{"antimeridian near Fiji", -16.85, 179.98, -16.80, -179.97, 7.70, 0.01},
		{"one metre", 0, 0, 0, 1.0 / (2 * math.Pi * EarthRadiusKm / 360) / 1000, 0.001, 1e-9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Km(tt.lat1, tt.lon1, tt.lat2, tt.lon2)
			if math.Abs(got-tt.want) > tt.tol {
				t.Fatalf("Km = %.6f, want %.6f ± %g", got, tt.want, tt.tol)
			}
			if back := Km(tt.lat2, tt.lon2, tt.lat1, tt.lon1); math.Abs(back-got) > 1e-9 {
				t.Fatalf("not symmetric: %v vs %v", got, back)
			}
		})
	}
}

func names(ts []Threshold) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestWithin(t *testing.T) {
	tests := []struct {
		km   float64
		want []string
	}{
		{0, []string{"street", "city", "region", "country", "continent"}},
		{1, []string{"street", "city", "region", "country", "continent"}},
		{1.0001, []string{"city", "region", "country", "continent"}},
		{343.5, []string{"country", "continent"}},
		{2500, []string{"continent"}},
		{2500.1, nil},
		{20015, nil},
		{-1, nil},
		{math.NaN(), nil},
	}
	for _, tt := range tests {
		if got := names(Within(tt.km)); !slices.Equal(got, tt.want) {
			t.Errorf("Within(%v) = %v, want %v", tt.km, got, tt.want)
		}
	}
}

func TestThresholdsAreTheLiteratureLevels(t *testing.T) {
	want := map[string]float64{"street": 1, "city": 25, "region": 200, "country": 750, "continent": 2500}
	if len(Thresholds) != len(want) {
		t.Fatalf("%d thresholds, want %d", len(Thresholds), len(want))
	}
	for i, th := range Thresholds {
		if want[th.Name] != th.Km {
			t.Errorf("%s = %v km, want %v", th.Name, th.Km, want[th.Name])
		}
		if i > 0 && Thresholds[i-1].Km >= th.Km {
			t.Errorf("thresholds not smallest first at %s", th.Name)
		}
	}
}
