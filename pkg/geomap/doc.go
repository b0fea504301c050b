// Package geomap draws predictions on a world map as SVG, on the server
// side: no tiles, no network, no script, so the same map works in a page
// opened from disk (geolocate results --map, geolocate local --map) and in a
// CloudWatch custom widget, which strips scripts (functions/mapwidget).
//
// # The world
//
// The outline is Natural Earth's 1:110m land polygons (naturalearthdata.com;
// Natural Earth's data is in the public domain), as the npm package
// world-atlas 2.0.2 redistributes them (land-110m.json, TopoJSON; the
// package's ISC licence covers its packaging). cmd/geomapgen fetches the
// package with `npm pack`, decodes the topology and writes world110m.txt,
// one ring a line at 0.01° (about 1 km, below what 1:110m resolves), 67 KB,
// which is embedded: `go generate ./pkg/geomap` rewrites it.
//
// # Projection
//
// Equal Earth (Šavrič, Patterson and Jenny, 2018), equal-area: a radius of
// 100 km covers the same area of map at the equator and in Norway, so the
// eye compares spreads fairly, and the continents keep familiar shapes.
//
// # What a map shows
//
//   - each point as a marker coloured by its category (ByStatus: a paid
//     prediction, a position from EXIF without a call; or ByModel);
//   - its radius to scale: the geodesic circle of that radius on the Earth
//     (geodist's sphere), projected, so it stretches as the map does; a
//     radius smaller than the marker is hidden under it;
//   - the photo's EXIF position (a hollow square) and the great-circle line
//     from the prediction to it, when the photo had one;
//   - a legend with each category's count.
//
// Lines and areas that cross the antimeridian or enclose a pole are split or
// closed along the pole (planarRings), for the land and the radii alike.
//
// # Many points
//
// Up to Options.MaxMarkers points (default 300) are each drawn in full. With
// more, they are grouped by a square grid on the map, the cell growing by a
// quarter until at most MaxMarkers cells are occupied (grid clustering, as
// map tools do it): a cell with one point draws that point in full, a cell
// with several one marker with the count, coloured by its most frequent
// category. Radii, EXIF positions and error lines are drawn for the points
// shown one by one only. Points given first are drawn on top and win ties,
// so give the most important first (the ledger's Query returns the newest
// first). The output depends only on the input: the same points give the
// same bytes. BenchmarkRender10k measures 10,000 points.
package geomap
