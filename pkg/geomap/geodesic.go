package geomap

import (
	"math"

	"github.com/geolocate-aws/geolocate/pkg/geodist"
)

// lonLat is a position in degrees. Inside a ring the longitude may be
// unwrapped beyond ±180 so that the ring runs on without a jump.
type lonLat struct{ lon, lat float64 }

// destination is the point distanceKm from (lat, lon) along the great
// circle that leaves it at bearing degrees (clockwise from north), on the
// sphere of geodist.EarthRadiusKm, the radius the pipeline measures its
// errors with.
func destination(lat, lon, bearing, distanceKm float64) lonLat {
	φ1, λ1, θ := radians(lat), radians(lon), radians(bearing)
	δ := distanceKm / geodist.EarthRadiusKm
	sinφ2 := math.Sin(φ1)*math.Cos(δ) + math.Cos(φ1)*math.Sin(δ)*math.Cos(θ)
	φ2 := math.Asin(max(-1, min(1, sinφ2)))
	λ2 := λ1 + math.Atan2(math.Sin(θ)*math.Sin(δ)*math.Cos(φ1), math.Cos(δ)-math.Sin(φ1)*sinφ2)
	return lonLat{lon: normalizeLon(degrees(λ2)), lat: degrees(φ2)}
}

// geodesicCircle is the ring of points radiusKm from the centre, n of them,
// clockwise from north: the prediction's radius as it lies on the Earth,
// which a projection then distorts (stretched towards the poles and the
// map's edges) rather than a circle drawn on the map.
func geodesicCircle(lat, lon, radiusKm float64, n int) []lonLat {
	ring := make([]lonLat, n)
	for i := range n {
		ring[i] = destination(lat, lon, 360*float64(i)/float64(n), radiusKm)
	}
	return ring
}

// planarRings turns a closed ring on the sphere into rings a planar map can
// fill, in unwrapped longitudes:
//   - a step of more than 180° in longitude crosses the antimeridian: the
//     longitudes are unwrapped so the ring runs on past ±180 instead of
//     jumping across the map;
//   - a ring that, unwrapped, ends 360° from where it began goes around a
//     pole: it is closed along that pole's line (the pole nearer its
//     points' mean latitude), so that the polar cap fills;
//   - a ring that reaches beyond ±180 is repeated shifted by ∓360°, so the
//     part beyond one edge of the map shows at the other (a polar cap
//     spans 360° and so always has two copies); the map's clip path cuts
//     the copies to the outline.
//
// One function serves the world's land (Natural Earth's rings are cut at
// the antimeridian, Antarctica around the South Pole) and the radius
// circles (one around Fiji crosses it, one near a pole may enclose it).
func planarRings(ring []lonLat) [][]lonLat {
	if len(ring) < 3 {
		return nil
	}
	out := make([]lonLat, 0, len(ring)+4)
	out = append(out, ring[0])
	offset := 0.0
	for i := 1; i < len(ring); i++ {
		d := ring[i].lon - ring[i-1].lon
		switch {
		case d > 180:
			offset -= 360
		case d < -180:
			offset += 360
		}
		out = append(out, lonLat{lon: ring[i].lon + offset, lat: ring[i].lat})
	}
	// Close the ring: the step from the last point back to the first.
	first := out[0]
	if d := first.lon - ring[len(ring)-1].lon; d > 180 {
		offset -= 360
	} else if d < -180 {
		offset += 360
	}
	if offset != 0 {
		pole := 90.0
		sum := 0.0
		for _, p := range out {
			sum += p.lat
		}
		if sum < 0 {
			pole = -90
		}
		// On to the first point one turn later, to the pole, along it
		// back to the first point's longitude; the path closes from there.
		end := first.lon + offset
		out = append(out, lonLat{lon: end, lat: first.lat}, lonLat{lon: end, lat: pole}, lonLat{lon: first.lon, lat: pole})
	}
	rings := [][]lonLat{out}
	minLon, maxLon := lonRange(out)
	if maxLon > 180 {
		rings = append(rings, shifted(out, -360))
	}
	if minLon < -180 {
		rings = append(rings, shifted(out, 360))
	}
	return rings
}

func lonRange(ring []lonLat) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range ring {
		lo, hi = min(lo, p.lon), max(hi, p.lon)
	}
	return lo, hi
}

func shifted(ring []lonLat, by float64) []lonLat {
	out := make([]lonLat, len(ring))
	for i, p := range ring {
		out[i] = lonLat{lon: p.lon + by, lat: p.lat}
	}
	return out
}

// normalizeLon brings a longitude into [-180, 180).
func normalizeLon(lon float64) float64 {
	lon = math.Mod(lon+180, 360)
	if lon < 0 {
		lon += 360
	}
	return lon - 180
}

func radians(deg float64) float64 { return deg * math.Pi / 180 }
func degrees(rad float64) float64 { return rad * 180 / math.Pi }
