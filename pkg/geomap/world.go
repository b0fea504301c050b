package geomap

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

//go:generate go run ../../cmd/geomapgen -out world110m.txt

// world110m holds Natural Earth's 1:110m land rings (see doc.go), written
// by cmd/geomapgen: one ring a line, "lon,lat" pairs in degrees.
//
//go:embed world110m.txt
var world110m string

// landRings is the embedded outline, parsed once and split for the plane
// (planarRings); a broken file is a build defect, which the tests catch.
var landRings = sync.OnceValue(func() [][]lonLat {
	rings, err := parseRings(world110m)
	if err != nil {
		panic("geomap: embedded world110m.txt: " + err.Error())
	}
	var out [][]lonLat
	for _, r := range rings {
		out = append(out, planarRings(r)...)
	}
	return out
})

func parseRings(text string) ([][]lonLat, error) {
	var rings [][]lonLat
	for n, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		ring := make([]lonLat, 0, len(fields))
		for _, f := range fields {
			lonText, latText, ok := strings.Cut(f, ",")
			lon, err1 := strconv.ParseFloat(lonText, 64)
			lat, err2 := strconv.ParseFloat(latText, 64)
			if !ok || err1 != nil || err2 != nil {
				return nil, fmt.Errorf("line %d: %q is not lon,lat", n+1, f)
			}
			ring = append(ring, lonLat{lon: lon, lat: lat})
		}
		rings = append(rings, ring)
	}
	if len(rings) == 0 {
		return nil, fmt.Errorf("no rings")
	}
	return rings, nil
}
