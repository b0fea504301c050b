package main

import (
	"slices"
	"testing"
)

// A log line printed while a benchmark runs splits its name from its
// figures; the figures are joined back, not dropped.
func TestBenchmarkLinesKeepFiguresAfterALogLine(t *testing.T) {
	raw := []byte("goos: linux\n" +
		"BenchmarkHandler-2   \t     100\t  29238403 ns/op\t  838393 B/op\n" +
		"BenchmarkHandler10MBPeakHeap-2   \t2026/11/27 18:58:25 http: superfluous response.WriteHeader call\n" +
		"       3\t 412345678 ns/op\t 0.76 peak-heap-MB\n" +
		"PASS\n")
	want := []string{
		"BenchmarkHandler-2   \t     100\t  29238403 ns/op\t  838393 B/op",
		"BenchmarkHandler10MBPeakHeap-2\t3\t 412345678 ns/op\t 0.76 peak-heap-MB",
	}
	if got := benchmarkLines(raw); !slices.Equal(got, want) {
		t.Errorf("benchmarkLines:\n got %q\nwant %q", got, want)
	}
}
