package geomap

import (
	"cmp"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/geolocate-aws/geolocate/pkg/geodist"
)

// Options adjust a map.
type Options struct {
	// Width of the SVG in pixels (default 960); the height follows from
	// the projection, plus the legend.
	Width int
	// MaxMarkers is the most markers (points drawn one by one, and
	// clusters) a map shows (default 300). Up to that many points are each
	// drawn in full; more are grouped by a grid (see Render).
	MaxMarkers int
	// ID prefixes the SVG's element ids, so several maps can share a page.
	ID string
	// Bounds, when set, zooms the map to that box (the map keeps its size;
	// what lies outside is cut off). Nil: the whole world.
	Bounds *Bounds
}

// Defaults of Options.
const (
	DefaultWidth      = 960
	DefaultMaxMarkers = 300
	minWidth          = 200
)

// Result says what a map shows.
type Result struct {
	// Points is the number of points given.
	Points int
	// Individual are the indexes (into the points given, ascending) of
	// the points drawn one by one, with their radius, EXIF position and
	// error line; the others are in clusters.
	Individual []int
	// Clusters is the number of cluster markers; CellPx the grid's cell
	// size in pixels (0: no clustering).
	Clusters int
	CellPx   float64
	// Radii is the number of radius areas drawn (a radius smaller than a
	// marker is not drawn: the marker covers it).
	Radii int
	// Width and Height of the SVG in pixels.
	Width, Height int
}

// Layout constants, in pixels.
const (
	margin        = 2.0
	markerRadius  = 4.5 // a point drawn one by one
	exifHalfSide  = 3.5 // the EXIF position's square
	legendLine    = 18.0
	legendPadding = 6.0
	charWidth     = 6.6 // of the legend's 12px sans-serif, to wrap lines
	// minRadiusPx: a radius area smaller than this is hidden by its marker.
	minRadiusPx = markerRadius + 1
	// The cluster grid starts at firstCellPx and grows by cellGrowth until
	// the markers fit in MaxMarkers.
	firstCellPx = 2 * markerRadius
	cellGrowth  = 1.25
)

// Colours of the map itself.
const (
	oceanColor     = "#DCE9F5"
	outlineColor   = "#9FB3C8"
	graticuleColor = "#C3D4E6"
	landColor      = "#EAE6D9"
	landEdgeColor  = "#B5AC95"
	exifColor      = "#222222"
	errorColor     = "#222222"
	moveColor      = "#7B3FBF" // a reprocess run's move, old -> new
)

// Render writes points as an SVG world map: the land, each point drawn one
// by one as a marker with its radius to scale (a geodesic circle on the
// Earth, projected), its EXIF position and the great-circle error line to
// it, coloured by category, and a legend. Nothing in it needs a script or
// the network. The output depends only on the points and options.
//
// Readability with many points: up to MaxMarkers points are each drawn. With
// more, the points are grouped by a square grid on the map (as map tools'
// grid clustering does), the cell growing until at most MaxMarkers cells
// are occupied; a cell holding one point draws it in full, a cell holding
// several draws one cluster marker, sized by the count and coloured by its
// most frequent category, with the count on it. Earlier points are drawn
// on top of later ones, small radii on top of large ones, clusters above
// points.
func Render(w io.Writer, points []Point, optFns ...func(*Options)) (Result, error) {
	o := Options{Width: DefaultWidth, MaxMarkers: DefaultMaxMarkers, ID: "geomap"}
	for _, fn := range optFns {
		fn(&o)
	}
	if o.Width < minWidth {
		return Result{}, fmt.Errorf("geomap: width %d is below the minimum of %d pixels", o.Width, minWidth)
	}
	if o.MaxMarkers < 1 {
		return Result{}, fmt.Errorf("geomap: MaxMarkers %d, want at least 1", o.MaxMarkers)
	}
	for i, p := range points {
		if !validLatLon(p.Lat, p.Lon) {
			return Result{}, fmt.Errorf("geomap: point %d (%s) at %g, %g is not a position", i, p.Label, p.Lat, p.Lon)
		}
	}
	r := &renderer{o: o, f: newFrame(o.Width, margin), points: points, cats: categories(points)}
	if o.Bounds != nil {
		r.f = r.f.zoomTo(*o.Bounds)
	}
	r.colors = map[string]string{}
	for _, c := range r.cats {
		r.colors[c.Name] = c.Color
	}
	r.layout()
	r.chooseRadii()
	legend := r.legendLines()
	mapHeight := r.f.height + 2*margin
	height := int(math.Ceil(mapHeight + legendPadding + float64(len(legend))*legendLine + legendPadding))
	r.res.Points, r.res.Width, r.res.Height = len(points), o.Width, height

	b := &r.b
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" class="geomap" viewBox="0 0 %d %d" width="%d" height="%d" font-family="Helvetica, Arial, sans-serif" font-size="12" data-points="%d" data-individual="%d" data-clusters="%d" data-radii="%d">`,
		o.Width, height, o.Width, height, len(points), len(r.res.Individual), r.res.Clusters, r.res.Radii)
	outline := r.outlinePath()
	clip := o.ID + "-sphere"
	// Everything of the map stays in its area (a zoomed map reaches beyond
	// it), clear of the legend.
	area := o.ID + "-area"
	fmt.Fprintf(b, `<defs><clipPath id="%s"><path d="%s"/></clipPath><clipPath id="%s"><rect x="0" y="0" width="%d" height="%s"/></clipPath></defs>`,
		clip, outline, area, o.Width, coord(mapHeight))
	fmt.Fprintf(b, `<g clip-path="url(#%s)">`, area)
	fmt.Fprintf(b, `<path class="sphere" d="%s" fill="%s"/>`, outline, oceanColor)
	fmt.Fprintf(b, `<g clip-path="url(#%s)">`, clip)
	fmt.Fprintf(b, `<path class="graticule" d="%s" fill="none" stroke="%s" stroke-width="0.6"/>`, r.graticulePath(), graticuleColor)
	fmt.Fprintf(b, `<path class="land" d="%s" fill="%s" fill-rule="evenodd" stroke="%s" stroke-width="0.6"/>`, r.landPath(), landColor, landEdgeColor)
	r.writeRadii()
	b.WriteString(`</g>`)
	fmt.Fprintf(b, `<path class="sphere-edge" d="%s" fill="none" stroke="%s"/>`, outline, outlineColor)
	r.writeErrors()
	r.writeMoves()
	r.writeExif()
	r.writePoints()
	r.writeClusters()
	b.WriteString(`</g>`)
	r.writeLegend(legend, mapHeight+legendPadding)
	b.WriteString("</svg>\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return Result{}, err
	}
	return r.res, nil
}

type renderer struct {
	o        Options
	f        frame
	points   []Point
	cats     []categoryEntry
	colors   map[string]string
	px, py   []float64 // each point's pixel
	clusters []cluster
	radii    []int // points whose radius is drawn, in drawing order
	res      Result
	b        strings.Builder
}

type cluster struct {
	x, y    float64
	members []int
}

// layout projects the points and decides which are drawn one by one and
// which are clustered.
func (r *renderer) layout() {
	n := len(r.points)
	r.px, r.py = make([]float64, n), make([]float64, n)
	for i, p := range r.points {
		r.px[i], r.py[i] = r.f.pixel(p.Lon, p.Lat)
	}
	if n <= r.o.MaxMarkers {
		r.res.Individual = make([]int, n)
		for i := range n {
			r.res.Individual[i] = i
		}
		return
	}
	// Grow the cell until the occupied cells fit. Cells are listed in the
	// order of their first (most important) point, so the output does not
	// depend on map iteration.
	type cellKey struct{ x, y int }
	var cells [][]int
	for cell := firstCellPx; ; cell *= cellGrowth {
		index := map[cellKey]int{}
		cells = cells[:0]
		for i := range n {
			k := cellKey{int(math.Floor(r.px[i] / cell)), int(math.Floor(r.py[i] / cell))}
			j, ok := index[k]
			if !ok {
				j = len(cells)
				index[k] = j
				cells = append(cells, nil)
			}
			cells[j] = append(cells[j], i)
		}
		if len(cells) <= r.o.MaxMarkers {
			r.res.CellPx = cell
			break
		}
	}
	for _, members := range cells {
		if len(members) == 1 {
			r.res.Individual = append(r.res.Individual, members[0])
			continue
		}
		c := cluster{members: members}
		for _, i := range members {
			c.x += r.px[i]
			c.y += r.py[i]
		}
		c.x /= float64(len(members))
		c.y /= float64(len(members))
		r.clusters = append(r.clusters, c)
	}
	slices.Sort(r.res.Individual)
	r.res.Clusters = len(r.clusters)
}

// chooseRadii picks the radius areas to draw: those of the points drawn one
// by one that are larger than a marker, the largest first so that smaller
// ones stay visible on top.
func (r *renderer) chooseRadii() {
	kmpp := r.kmPerPixel()
	for _, i := range r.res.Individual {
		if r.points[i].RadiusKm/kmpp >= minRadiusPx {
			r.radii = append(r.radii, i)
		}
	}
	slices.SortStableFunc(r.radii, func(a, b int) int { return cmp.Compare(r.points[b].RadiusKm, r.points[a].RadiusKm) })
	r.res.Radii = len(r.radii)
}

// outlinePath is the projection's outline: the meridians ±180 pole to pole.
func (r *renderer) outlinePath() string {
	var ring []lonLat
	for lat := -90.0; lat <= 90; lat += 5 {
		ring = append(ring, lonLat{-180, lat})
	}
	for lat := 90.0; lat >= -90; lat -= 5 {
		ring = append(ring, lonLat{180, lat})
	}
	var b []byte
	return string(r.appendRing(b, ring, true))
}

// graticulePath draws meridians and parallels every 30°.
func (r *renderer) graticulePath() string {
	var b []byte
	for lon := -150.0; lon <= 150; lon += 30 {
		var line []lonLat
		for lat := -90.0; lat <= 90; lat += 10 {
			line = append(line, lonLat{lon, lat})
		}
		b = r.appendRing(b, line, false)
	}
	for lat := -60.0; lat <= 60; lat += 30 {
		b = r.appendRing(b, []lonLat{{-180, lat}, {180, lat}}, false)
	}
	return string(b)
}

func (r *renderer) landPath() string {
	b := make([]byte, 0, 96<<10)
	for _, ring := range landRings() {
		b = r.appendRing(b, ring, true)
	}
	return string(b)
}

// appendRing appends a path through ring's points in pixels, one decimal.
func (r *renderer) appendRing(b []byte, ring []lonLat, closed bool) []byte {
	for i, p := range ring {
		x, y := r.f.pixel(p.lon, p.lat)
		if i == 0 {
			b = append(b, 'M')
		} else {
			b = append(b, 'L')
		}
		b = appendCoord(b, x)
		b = append(b, ',')
		b = appendCoord(b, y)
	}
	if closed && len(ring) > 0 {
		b = append(b, 'Z')
	}
	return b
}

func appendCoord(b []byte, v float64) []byte {
	return strconv.AppendFloat(b, math.Round(v*10)/10, 'f', -1, 64)
}

func coord(v float64) string { return string(appendCoord(nil, v)) }

// kmPerPixel is the scale at the equator's centre, for sizing radii (the
// equal-area projection keeps areas, not lengths, so this is a guide for
// whether a radius is visible and how many vertices it needs).
func (r *renderer) kmPerPixel() float64 {
	x0, _ := r.f.pixel(0, 0)
	x1, _ := r.f.pixel(1, 0)
	return (2 * math.Pi * geodist.EarthRadiusKm / 360) / (x1 - x0)
}

// writeRadii draws the radius areas chooseRadii picked.
func (r *renderer) writeRadii() {
	if len(r.radii) == 0 {
		return
	}
	kmpp := r.kmPerPixel()
	r.b.WriteString(`<g class="radii" fill-opacity="0.14" stroke-opacity="0.75" stroke-width="1">`)
	var d []byte
	for _, i := range r.radii {
		p := r.points[i]
		vertices := int(min(max(p.RadiusKm/kmpp, 32), 180))
		d = d[:0]
		for _, ring := range planarRings(geodesicCircle(p.Lat, p.Lon, p.RadiusKm, vertices)) {
			d = r.appendRing(d, ring, true)
		}
		color := r.colors[p.Category]
		fmt.Fprintf(&r.b, `<path d="%s" fill="%s" stroke="%s"><title>%s</title></path>`, d, color, color, html.EscapeString(p.Label+": radius "+km(p.RadiusKm)))
	}
	r.b.WriteString(`</g>`)
}

// writeErrors draws, for each point drawn one by one that has an EXIF
// position, the great circle from the prediction to it.
func (r *renderer) writeErrors() {
	started := false
	for _, i := range r.res.Individual {
		p := r.points[i]
		if p.Exif == nil {
			continue
		}
		if !started {
			fmt.Fprintf(&r.b, `<g class="errors" fill="none" stroke="%s" stroke-width="1.2" stroke-dasharray="4 2">`, errorColor)
			started = true
		}
		var d []byte
		for _, line := range r.greatCircle(p.Lat, p.Lon, p.Exif.Lat, p.Exif.Lon) {
			d = r.appendRing(d, line, false)
		}
		title := p.Label + ": EXIF position " + latLon(p.Exif.Lat, p.Exif.Lon)
		if p.ErrorKm != nil {
			title += ", prediction off by " + km(*p.ErrorKm)
		}
		fmt.Fprintf(&r.b, `<path d="%s"><title>%s</title></path>`, d, html.EscapeString(title))
	}
	if started {
		r.b.WriteString(`</g>`)
	}
}

// writeMoves draws, for each point drawn one by one that a reprocess run
// moved, the great circle from the result it replaced to it.
func (r *renderer) writeMoves() {
	started := false
	for _, i := range r.res.Individual {
		p := r.points[i]
		if p.Previous == nil {
			continue
		}
		if !started {
			fmt.Fprintf(&r.b, `<g class="moves" fill="none" stroke="%s" stroke-width="1.2">`, moveColor)
			started = true
		}
		var d []byte
		for _, line := range r.greatCircle(p.Previous.Lat, p.Previous.Lon, p.Lat, p.Lon) {
			d = r.appendRing(d, line, false)
		}
		title := fmt.Sprintf("%s: moved from %s by %s", p.Label, latLon(p.Previous.Lat, p.Previous.Lon),
			km(geodist.Km(p.Previous.Lat, p.Previous.Lon, p.Lat, p.Lon)))
		fmt.Fprintf(&r.b, `<path d="%s"><title>%s</title></path>`, d, html.EscapeString(title))
	}
	if started {
		r.b.WriteString(`</g>`)
	}
}

// greatCircle samples the shortest path between two positions, split
// where it crosses the antimeridian so no segment spans the map.
func (r *renderer) greatCircle(lat1, lon1, lat2, lon2 float64) [][]lonLat {
	distance := geodist.Km(lat1, lon1, lat2, lon2)
	steps := int(min(max(distance/(20*r.kmPerPixel()), 1), 64))
	φ1, λ1, φ2, λ2 := radians(lat1), radians(lon1), radians(lat2), radians(lon2)
	δ := distance / geodist.EarthRadiusKm
	var lines [][]lonLat
	var line []lonLat
	for s := 0; s <= steps; s++ {
		f := float64(s) / float64(steps)
		var p lonLat
		switch {
		case s == 0:
			p = lonLat{lon1, lat1}
		case s == steps:
			p = lonLat{lon2, lat2}
		default:
			a, b := math.Sin((1-f)*δ)/math.Sin(δ), math.Sin(f*δ)/math.Sin(δ)
			x := a*math.Cos(φ1)*math.Cos(λ1) + b*math.Cos(φ2)*math.Cos(λ2)
			y := a*math.Cos(φ1)*math.Sin(λ1) + b*math.Cos(φ2)*math.Sin(λ2)
			z := a*math.Sin(φ1) + b*math.Sin(φ2)
			p = lonLat{degrees(math.Atan2(y, x)), degrees(math.Atan2(z, math.Hypot(x, y)))}
		}
		if len(line) > 0 && math.Abs(p.lon-line[len(line)-1].lon) > 180 {
			lines = append(lines, line)
			line = nil
		}
		line = append(line, p)
	}
	return append(lines, line)
}

// writeExif marks the EXIF positions: small dark squares, hollow.
func (r *renderer) writeExif() {
	started := false
	for _, i := range r.res.Individual {
		p := r.points[i]
		if p.Exif == nil {
			continue
		}
		if !started {
			fmt.Fprintf(&r.b, `<g class="exif" fill="#FFFFFF" stroke="%s" stroke-width="1.5">`, exifColor)
			started = true
		}
		x, y := r.f.pixel(p.Exif.Lon, p.Exif.Lat)
		fmt.Fprintf(&r.b, `<rect x="%s" y="%s" width="%s" height="%s"><title>%s</title></rect>`,
			coord(x-exifHalfSide), coord(y-exifHalfSide), coord(2*exifHalfSide), coord(2*exifHalfSide),
			html.EscapeString(p.Label+": EXIF position "+latLon(p.Exif.Lat, p.Exif.Lon)))
	}
	if started {
		r.b.WriteString(`</g>`)
	}
}

// writePoints draws the points drawn one by one, the first given on top.
func (r *renderer) writePoints() {
	if len(r.res.Individual) == 0 {
		return
	}
	r.b.WriteString(`<g class="points" stroke="#FFFFFF" stroke-width="1.2">`)
	for k := len(r.res.Individual) - 1; k >= 0; k-- {
		i := r.res.Individual[k]
		p := r.points[i]
		fmt.Fprintf(&r.b, `<circle cx="%s" cy="%s" r="%g" fill="%s" data-index="%d"><title>%s</title></circle>`,
			coord(r.px[i]), coord(r.py[i]), markerRadius, r.colors[p.Category], i, html.EscapeString(pointTitle(p)))
	}
	r.b.WriteString(`</g>`)
}

func pointTitle(p Point) string {
	parts := []string{p.Label}
	if p.Place != "" {
		parts = append(parts, p.Place)
	}
	parts = append(parts, latLon(p.Lat, p.Lon), p.Category)
	if p.RadiusKm > 0 {
		parts = append(parts, "radius "+km(p.RadiusKm))
	}
	if p.ErrorKm != nil {
		parts = append(parts, "off the EXIF position by "+km(*p.ErrorKm))
	}
	return strings.Join(parts, " · ")
}

// clusterRadius grows with the logarithm of the count: a cluster of 10,000
// is bigger than one of 10, not a thousand times bigger.
func clusterRadius(n int) float64 {
	return markerRadius + 1 + 1.6*math.Log2(float64(n))
}

// writeClusters draws the cluster markers, the largest first so the small
// ones beside them stay visible.
func (r *renderer) writeClusters() {
	if len(r.clusters) == 0 {
		return
	}
	order := make([]int, len(r.clusters))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(len(r.clusters[b].members), len(r.clusters[a].members))
	})
	r.b.WriteString(`<g class="clusters" stroke="#FFFFFF" stroke-width="1.5" text-anchor="middle" font-size="10" font-weight="bold">`)
	for _, ci := range order {
		c := r.clusters[ci]
		counts := map[string]int{}
		for _, i := range c.members {
			counts[r.points[i].Category]++
		}
		// The most frequent category; ties go to the legend's order.
		top, parts := "", []string{}
		for _, cat := range r.cats {
			n := counts[cat.Name]
			if n == 0 {
				continue
			}
			if top == "" || n > counts[top] {
				top = cat.Name
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, cat.Name))
		}
		title := fmt.Sprintf("%d points: %s", len(c.members), strings.Join(parts, ", "))
		fmt.Fprintf(&r.b, `<g class="cluster" data-count="%d"><circle cx="%s" cy="%s" r="%s" fill="%s" fill-opacity="0.8"/><text x="%s" y="%s" fill="#FFFFFF" stroke="none">%s</text><title>%s</title></g>`,
			len(c.members), coord(c.x), coord(c.y), coord(clusterRadius(len(c.members))), r.colors[top],
			coord(c.x), coord(c.y+3.5), countLabel(len(c.members)), html.EscapeString(title))
	}
	r.b.WriteString(`</g>`)
}

func countLabel(n int) string {
	if n >= 10000 {
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

// legendItem is one entry of the legend: a swatch and its text.
type legendItem struct {
	kind  string // "category", "exif", "error", "radius", "cluster", "note"
	color string
	text  string
}

// legendLines lays the legend's items out in lines that fit the width.
func (r *renderer) legendLines() [][]legendItem {
	var items []legendItem
	for _, c := range r.cats {
		items = append(items, legendItem{"category", c.Color, fmt.Sprintf("%s (%d)", c.Name, c.Count)})
	}
	hasExif := false
	for _, i := range r.res.Individual {
		hasExif = hasExif || r.points[i].Exif != nil
	}
	if hasExif {
		items = append(items, legendItem{kind: "exif", text: "EXIF position"}, legendItem{kind: "error", text: "error to EXIF"})
	}
	if r.res.Radii > 0 {
		items = append(items, legendItem{kind: "radius", color: palette[0], text: "radius to scale"})
	}
	if len(r.clusters) > 0 {
		items = append(items, legendItem{kind: "cluster", color: palette[6], text: "points grouped, with their count"})
	}
	switch {
	case len(r.points) == 0:
		items = append(items, legendItem{kind: "note", text: "No positions to show."})
	case len(r.clusters) > 0:
		items = append(items, legendItem{kind: "note", text: fmt.Sprintf("%d points: %d drawn one by one, %d in %d groups (grid of %s px)",
			len(r.points), len(r.res.Individual), len(r.points)-len(r.res.Individual), len(r.clusters), coord(r.res.CellPx))})
	}
	var lines [][]legendItem
	var line []legendItem
	x := 0.0
	for _, it := range items {
		w := itemWidth(it)
		if len(line) > 0 && x+w > float64(r.o.Width)-2*legendPadding {
			lines = append(lines, line)
			line, x = nil, 0
		}
		line = append(line, it)
		x += w
	}
	if len(line) > 0 {
		lines = append(lines, line)
	}
	return lines
}

func itemWidth(it legendItem) float64 {
	return 22 + float64(len([]rune(it.text)))*charWidth + 14
}

func (r *renderer) writeLegend(lines [][]legendItem, top float64) {
	b := &r.b
	b.WriteString(`<g class="legend" fill="#333333">`)
	for li, line := range lines {
		y := top + float64(li)*legendLine + legendLine/2
		x := legendPadding
		for _, it := range line {
			sx := x + 8
			switch it.kind {
			case "category":
				fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="%g" fill="%s" stroke="#FFFFFF"/>`, coord(sx), coord(y), markerRadius+0.5, it.color)
			case "exif":
				fmt.Fprintf(b, `<rect x="%s" y="%s" width="7" height="7" fill="#FFFFFF" stroke="%s" stroke-width="1.5"/>`, coord(sx-3.5), coord(y-3.5), exifColor)
			case "error":
				fmt.Fprintf(b, `<path d="M%s,%sL%s,%s" stroke="%s" stroke-width="1.2" stroke-dasharray="4 2"/>`, coord(sx-8), coord(y), coord(sx+8), coord(y), errorColor)
			case "radius":
				fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="7" fill="%s" fill-opacity="0.14" stroke="%s" stroke-opacity="0.75"/>`, coord(sx), coord(y), it.color, it.color)
			case "cluster":
				fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="7.5" fill="%s" fill-opacity="0.85"/>`, coord(sx), coord(y), it.color)
			}
			tx := sx + 14
			if it.kind == "note" {
				tx = x
			}
			fmt.Fprintf(b, `<text x="%s" y="%s">%s</text>`, coord(tx), coord(y+4), html.EscapeString(it.text))
			x += itemWidth(it)
		}
	}
	b.WriteString(`</g>`)
}

// km formats a distance for people: 0.8 km, 12.5 km, 1,234 km.
func km(v float64) string {
	switch {
	case v < 100:
		return strconv.FormatFloat(v, 'f', 1, 64) + " km"
	case v < 1000:
		return strconv.FormatFloat(v, 'f', 0, 64) + " km"
	}
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	return s[:len(s)-3] + "," + s[len(s)-3:] + " km"
}

func latLon(lat, lon float64) string {
	return strconv.FormatFloat(lat, 'f', 4, 64) + ", " + strconv.FormatFloat(lon, 'f', 4, 64)
}
