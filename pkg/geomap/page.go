package geomap

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// PageOptions describe a page around a map.
type PageOptions struct {
	// Title heads the page; Lines (the filters, the time range) follow it.
	Title string
	Lines []string
	// Skipped is the number of records left off the map for want of a
	// position (FromRecords' count), said under the map.
	Skipped int
	// TableRows caps the table of the points drawn one by one (default 100).
	TableRows int
	// Map adjusts the map.
	Map []func(*Options)
}

// DefaultTableRows is the page table's default length.
const DefaultTableRows = 100

// WritePage writes one self-contained HTML page: the title, the map as
// inline SVG (no script, no request) and a short table of the points drawn
// one by one, in the order given.
func WritePage(w io.Writer, points []Point, po PageOptions) (Result, error) {
	var svg bytes.Buffer
	res, err := Render(&svg, points, po.Map...)
	if err != nil {
		return Result{}, err
	}
	rows := po.TableRows
	if rows <= 0 {
		rows = DefaultTableRows
	}
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
	fmt.Fprintf(&b, "<title>%s</title>", html.EscapeString(po.Title))
	b.WriteString(`<style>body{font-family:Helvetica,Arial,sans-serif;margin:16px;color:#222}h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:16px 0 0}p.meta{margin:2px 0;color:#555;font-size:13px}` +
		`.map svg{max-width:100%;height:auto;display:block;margin:12px 0}table{border-collapse:collapse;font-size:13px}` +
		`th,td{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;white-space:nowrap}td.num{text-align:right}` +
		`span.dot{display:inline-block;width:10px;height:10px;border-radius:50%;margin-right:6px;vertical-align:middle}</style></head><body>`)
	fmt.Fprintf(&b, "<h1>%s</h1>", html.EscapeString(po.Title))
	for _, l := range po.Lines {
		fmt.Fprintf(&b, `<p class="meta">%s</p>`, html.EscapeString(l))
	}
	b.WriteString(`<div class="map">`)
	b.Write(svg.Bytes())
	b.WriteString(`</div>`)
	// A closer look where most points are: their radii are drawn there.
	if sub, bounds, label, ok := Focus(points); ok {
		var closer bytes.Buffer
		opts := append(slices.Clone(po.Map), func(o *Options) { o.Bounds, o.ID = &bounds, "geomap-closer" })
		if _, err := Render(&closer, sub, opts...); err != nil {
			return Result{}, err
		}
		fmt.Fprintf(&b, `<h2>Closer: %d point(s) around %s</h2><div class="map closer">`, len(sub), html.EscapeString(label))
		b.Write(closer.Bytes())
		b.WriteString(`</div>`)
	}
	if po.Skipped > 0 {
		fmt.Fprintf(&b, `<p class="meta">%d record(s) without a position (rejected, failed or waiting) are not on the map.</p>`, po.Skipped)
	}
	colors := map[string]string{}
	for _, c := range categories(points) {
		colors[c.Name] = c.Color
	}
	shown := res.Individual
	if len(shown) > 0 {
		b.WriteString(`<table class="points"><thead><tr><th>Object</th><th>Category</th><th>Place</th><th>Latitude</th><th>Longitude</th><th>Radius</th><th>Off EXIF by</th><th>Updated (UTC)</th></tr></thead><tbody>`)
		for _, i := range shown[:min(len(shown), rows)] {
			p := points[i]
			radius, off, updated := "-", "-", "-"
			if p.RadiusKm > 0 {
				radius = km(p.RadiusKm)
			}
			if p.ErrorKm != nil {
				off = km(*p.ErrorKm)
			}
			if !p.Time.IsZero() {
				updated = p.Time.UTC().Format(time.DateTime)
			}
			fmt.Fprintf(&b, `<tr><td>%s</td><td><span class="dot" style="background:%s"></span>%s</td><td>%s</td><td class="num">%s</td><td class="num">%s</td><td class="num">%s</td><td class="num">%s</td><td>%s</td></tr>`,
				html.EscapeString(p.Label), colors[p.Category], html.EscapeString(p.Category), html.EscapeString(p.Place),
				strconv.FormatFloat(p.Lat, 'f', 4, 64), strconv.FormatFloat(p.Lon, 'f', 4, 64), radius, off, updated)
		}
		b.WriteString(`</tbody></table>`)
		if len(shown) > rows {
			fmt.Fprintf(&b, `<p class="meta">and %d more drawn one by one, not listed.</p>`, len(shown)-rows)
		}
	}
	if clustered := res.Points - len(shown); clustered > 0 {
		fmt.Fprintf(&b, `<p class="meta">%d point(s) are in the map's groups and not listed.</p>`, clustered)
	}
	b.WriteString("</body></html>\n")
	_, err = w.Write(b.Bytes())
	return res, err
}

// WritePageFile writes the page to path only once it is complete: through
// a temporary file in the same directory, renamed over path, so a failure
// leaves no file (or the previous one) behind.
func WritePageFile(path string, points []Point, po PageOptions) (Result, error) {
	var buf bytes.Buffer
	res, err := WritePage(&buf, points, po)
	if err != nil {
		return Result{}, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return Result{}, fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return Result{}, fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return Result{}, fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return Result{}, fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return Result{}, fmt.Errorf("write %s: %w", path, err)
	}
	return res, nil
}
