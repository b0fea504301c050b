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
		res := goBenchmark{Command: "go " + strings.Join(args, " ")}
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "Benchmark") {
				res.Lines = append(res.Lines, line)
			}
		}
		if err != nil {
			res.Err = fmt.Errorf("%w: %s", err, tail(raw))
		}
		out = append(out, res)
	}
	return out
}
