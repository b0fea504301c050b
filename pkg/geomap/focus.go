package geomap

import (
	"fmt"
	"math"
)

// Focus finds where a closer look pays: at world scale a radius of 100 km
// is two pixels, hidden under its marker. It bins the points into cells of
// focusCellDeg degrees and takes the block of 3 x 3 cells holding the most
// (ties to the block of the earlier point), then the box around those
// points and their radii. ok is false when that block holds fewer than two
// points or its box spans more than focusMaxSpanDeg of longitude (no
// closer than the world map). sub are those points, in the given order;
// label names the region by its first point's place.
func Focus(points []Point) (sub []Point, b Bounds, label string, ok bool) {
	type cell struct{ x, y int }
	cellOf := func(p Point) cell {
		return cell{int(math.Floor((p.Lon + 180) / focusCellDeg)), int(math.Floor((p.Lat + 90) / focusCellDeg))}
	}
	counts := map[cell]int{}
	for _, p := range points {
		counts[cellOf(p)]++
	}
	block := func(c cell) int {
		n := 0
		for dx := -1; dx <= 1; dx++ {
			for dy := -1; dy <= 1; dy++ {
				n += counts[cell{c.x + dx, c.y + dy}]
			}
		}
		return n
	}
	best, bestN := cell{}, 0
	for _, p := range points {
		if n := block(cellOf(p)); n > bestN {
			best, bestN = cellOf(p), n
		}
	}
	if bestN < 2 {
		return nil, Bounds{}, "", false
	}
	b = Bounds{MinLat: 90, MaxLat: -90, MinLon: 180, MaxLon: -180}
	for _, p := range points {
		c := cellOf(p)
		if c.x < best.x-1 || c.x > best.x+1 || c.y < best.y-1 || c.y > best.y+1 {
			continue
		}
		sub = append(sub, p)
		dLat := p.RadiusKm / kmPerDegree
		dLon := dLat / max(math.Cos(radians(p.Lat)), 0.05)
		b.MinLat, b.MaxLat = min(b.MinLat, max(p.Lat-dLat, -90)), max(b.MaxLat, min(p.Lat+dLat, 90))
		b.MinLon, b.MaxLon = min(b.MinLon, max(p.Lon-dLon, -180)), max(b.MaxLon, min(p.Lon+dLon, 180))
	}
	if b.MaxLon-b.MinLon > focusMaxSpanDeg {
		return nil, Bounds{}, "", false
	}
	label = sub[0].Place
	if label == "" {
		label = fmt.Sprintf("%.1f, %.1f", sub[0].Lat, sub[0].Lon)
	}
	return sub, b, label, true
}

const (
	focusCellDeg    = 10.0
	focusMaxSpanDeg = 90.0
	kmPerDegree     = 111.19 // of latitude, on geodist's sphere
)
