package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/geolocate-aws/geolocate/pkg/geomap"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// mapFlags are --map and --map-color of results and local: a page with the
// records on a world map (pkg/geomap) and a short table of the points.
type mapFlags struct {
	path    *string
	colorBy *string
}

func registerMapFlags(fs *flag.FlagSet) *mapFlags {
	return &mapFlags{
		path:    fs.String("map", "", "write the records with a position on a world map, with a short table, to this self-contained HTML `file` (no script, no network); written only when the command succeeds"),
		colorBy: fs.String("map-color", string(geomap.ByStatus), "what the map's colours stand for: status (a paid prediction or a position from EXIF) or model"),
	}
}

// check refuses a bad --map-color before any work is done.
func (m *mapFlags) check() error {
	switch geomap.ColorBy(*m.colorBy) {
	case geomap.ByStatus, geomap.ByModel:
		return nil
	}
	return usageError{fmt.Errorf("--map-color %q: want %s or %s", *m.colorBy, geomap.ByStatus, geomap.ByModel)}
}

// write writes the page of records (most important first) to the --map
// file, if one was asked for, and says so on progress.
func (m *mapFlags) write(records []ledger.Record, title string, lines []string, progress io.Writer) error {
	if *m.path == "" {
		return nil
	}
	points, skipped := geomap.FromRecords(records, geomap.ColorBy(*m.colorBy))
	res, err := geomap.WritePageFile(*m.path, points, geomap.PageOptions{Title: title, Lines: lines, Skipped: skipped})
	if err != nil {
		return fmt.Errorf("--map: %w", err)
	}
	var how []string
	if len(res.Individual) < res.Points {
		how = append(how, fmt.Sprintf("%d in %d groups", res.Points-len(res.Individual), res.Clusters))
	}
	if skipped > 0 {
		how = append(how, fmt.Sprintf("%d without a position", skipped))
	}
	note := ""
	if len(how) > 0 {
		note = "; " + strings.Join(how, ", ")
	}
	fmt.Fprintf(progress, "map       %s (%d point(s) on the map%s)\n", *m.path, res.Points, note)
	return nil
}
