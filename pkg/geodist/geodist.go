// Package geodist measures how far a prediction is from the truth: the
// great-circle distance between two points and the distance thresholds the
// image geolocation literature reports accuracy at.
package geodist

import "math"

// EarthRadiusKm is the mean Earth radius (IUGG mean radius R1 of WGS 84),
// the usual choice for haversine distances.
const EarthRadiusKm = 6371.0088

// Km is the great-circle distance in kilometres between two points given in
// decimal degrees, by the haversine formula, which stays accurate for small
// distances and at the antipodes (the error from treating the Earth as a
// sphere is below 0.5%, far under the thresholds' granularity).
func Km(lat1, lon1, lat2, lon2 float64) float64 {
	φ1, φ2 := radians(lat1), radians(lat2)
	dφ, dλ := radians(lat2-lat1), radians(lon2-lon1)
	h := hav(dφ) + math.Cos(φ1)*math.Cos(φ2)*hav(dλ)
	// Rounding can push h a hair over 1 at the antipodes.
	h = min(max(h, 0), 1)
	return 2 * EarthRadiusKm * math.Asin(math.Sqrt(h))
}

func hav(θ float64) float64 {
	s := math.Sin(θ / 2)
	return s * s
}

func radians(deg float64) float64 { return deg * math.Pi / 180 }
