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

// Bounds is a box of latitudes and longitudes (MinLon > MaxLon is not
// supported: a box across the antimeridian is drawn from the world map).
type Bounds struct{ MinLat, MaxLat, MinLon, MaxLon float64 }

// maxZoom bounds how far a map zooms in: at 960 pixels about 40 m a pixel,
// well below the 1:110m outline's resolution already.
const maxZoom = 1000.0

// zoomTo is f zoomed and centred on b (with a sixth of padding), keeping
// the map area's size.
func (f frame) zoomTo(b Bounds) frame {
	xmin, ymin, xmax, ymax := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for i := 0; i <= 4; i++ {
		for j := 0; j <= 4; j++ {
			x, y := equalEarth(b.MinLon+(b.MaxLon-b.MinLon)*float64(i)/4, b.MinLat+(b.MaxLat-b.MinLat)*float64(j)/4)
			xmin, xmax, ymin, ymax = min(xmin, x), max(xmax, x), min(ymin, y), max(ymax, y)
		}
	}
	k := min(f.width/((xmax-xmin)*f.scale), f.height/((ymax-ymin)*f.scale)) / 1.2
	k = min(max(k, 1), maxZoom)
	z := f
	z.scale = f.scale * k
	z.left = f.left + f.width/2 - ((xmin+xmax)/2+eeMaxX)*z.scale
	z.top = f.top + f.height/2 - (eeMaxY-(ymin+ymax)/2)*z.scale
	return z
}
