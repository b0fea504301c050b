package geomap

import "math"

// Equal Earth (Šavrič, Patterson and Jenny, 2018): an equal-area
// pseudocylindrical projection, so a radius of 100 km covers the same area
// of map wherever it lies, and the eye compares spreads fairly. Parallels
// are straight, so a map is a rectangle-ish outline with flat poles.
const (
	eeA1 = 1.340264
	eeA2 = -0.081106
	eeA3 = 0.000893
	eeA4 = 0.003796
)

var eeM = math.Sqrt(3) / 2

// equalEarth projects a longitude and latitude in degrees to the plane, in
// units of the Earth's radius, x east and y north. Longitudes beyond ±180
// (an unwrapped ring) go on outward linearly, which the map's clip removes.
func equalEarth(lon, lat float64) (x, y float64) {
	lambda := lon * math.Pi / 180
	phi := lat * math.Pi / 180
	theta := math.Asin(eeM * math.Sin(phi))
	t2 := theta * theta
	t6 := t2 * t2 * t2
	x = lambda * math.Cos(theta) / (eeM * (eeA1 + 3*eeA2*t2 + t6*(7*eeA3+9*eeA4*t2)))
	y = theta * (eeA1 + eeA2*t2 + t6*(eeA3+eeA4*t2))
	return x, y
}

// Extent of the projection: x in [-eeMaxX, eeMaxX], y in [-eeMaxY, eeMaxY].
var (
	eeMaxX, _ = equalEarth(180, 0)
	_, eeMaxY = equalEarth(0, 90)
)

// frame maps projected coordinates to the SVG's pixels: a margin around
// the whole world, y down.
type frame struct {
	scale, left, top float64
	width, height    float64 // of the world's extent, pixels
}

func newFrame(width int, margin float64) frame {
	w := float64(width) - 2*margin
	scale := w / (2 * eeMaxX)
	return frame{scale: scale, left: margin, top: margin, width: w, height: 2 * eeMaxY * scale}
}

// Pixel returns where a longitude and latitude in degrees fall in the SVG.
func (f frame) pixel(lon, lat float64) (px, py float64) {
	x, y := equalEarth(lon, lat)
	return f.left + (x+eeMaxX)*f.scale, f.top + (eeMaxY-y)*f.scale
}

// Pixel returns where a position in degrees falls on a map Render draws
// width pixels wide, in the SVG's pixels: what a test looking at the drawn
// map compares with.
func Pixel(width int, lat, lon float64) (x, y float64) {
	return newFrame(width, margin).pixel(lon, lat)
}
