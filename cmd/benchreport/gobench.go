package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// goBenchmark is one `go test -bench` run quoted in the report.
type goBenchmark struct {
	Command string
	Lines   []string // the result lines ("Benchmark...")
	Err     error
}

// goBenchmarks are the packages' own benchmarks, run briefly so the report
// and `go test -bench` can be compared.
var goBenchmarks = []struct{ pkg, pattern, benchtime string }{
	{"./pkg/geoapi/", "^(BenchmarkPredict10MB|BenchmarkBareMultipartPOST10MB)$", "5x"},
	{"./pkg/predictor/", "^BenchmarkHandler$", "100x"},
	{"./pkg/predictor/", "^BenchmarkHandler10MBPeakHeap$", "3x"},
	// The path for photos over the limit: time and heap of one 50 MP JPEG
	// (about 20 MB) downscaled, and the peak RSS of a fresh process doing it,
	// which is what the predictor's memory size must hold. Once each: a run
	// takes seconds and the figure does not need averaging to size memory.
	{"./pkg/photo/downscale/", "^(BenchmarkDownscale50MP|BenchmarkDownscale50MPPeakRSS)$", "1x"},
}

func runGoBenchmarks(ctx context.Context, root string, progress func(string, ...any)) []goBenchmark {
	var out []goBenchmark
	for _, b := range goBenchmarks {
		args := []string{"test", "-run", "^$", "-bench", b.pattern, "-benchtime", b.benchtime, "-benchmem", "-count", "1", b.pkg}
		progress("go %s", strings.Join(args, " "))
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = root
		raw, err := cmd.CombinedOutput()
		res := goBenchmark{Command: "go " + strings.Join(args, " "), Lines: benchmarkLines(raw)}
		if err != nil {
			res.Err = fmt.Errorf("%w: %s", err, tail(raw))
		}
		out = append(out, res)
	}
	return out
}

// benchmarkLines are the result lines of `go test -bench` output. The
// testing package prints a benchmark's name, runs it, then prints its
// figures on the same line; a log line the benchmark's code writes in
// between (a server's error log) ends the name's line, and the figures
// follow on a line of their own. Those are joined back to their name, so
// no figure is lost.
func benchmarkLines(raw []byte) []string {
	var lines []string
	pending := "" // a name whose figures have not come yet
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Benchmark") && strings.Contains(line, " ns/op"):
			lines, pending = append(lines, line), ""
		case strings.HasPrefix(line, "Benchmark"):
			pending = strings.Fields(line)[0]
		case pending != "" && strings.Contains(line, " ns/op"):
			lines, pending = append(lines, pending+"\t"+strings.TrimSpace(line)), ""
		}
	}
	return lines
}
