package geomap

import (
	"io"
	"testing"
)

// BenchmarkRender10k draws 10,000 points (grouped by the grid) on the
// default 960-pixel map; the issue asks for well under a second.
func BenchmarkRender10k(b *testing.B) {
	points := manyPoints(10000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(io.Discard, points); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRender300 draws 300 points each in full, radius, EXIF position
// and error line included: the most a map draws one by one by default.
func BenchmarkRender300(b *testing.B) {
	points := manyPoints(300)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(io.Discard, points); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFromRecords10k turns 10,000 ledger records into points.
func BenchmarkFromRecords10k(b *testing.B) {
	records := benchRecords(10000)
	b.ReportAllocs()
	for b.Loop() {
		FromRecords(records, ByStatus)
	}
}
