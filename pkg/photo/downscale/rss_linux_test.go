//go:build linux

package downscale

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// rssChildEnv names the JPEG the child process downscales.
const rssChildEnv = "DOWNSCALE_RSS_CHILD_INPUT"

// TestRSSChild is the child process of BenchmarkDownscale50MPPeakRSS: it
// streams one file through Downscale, as the predictor streams an S3 body,
// and exits. It does nothing in a normal test run.
func TestRSSChild(t *testing.T) {
	path := os.Getenv(rssChildEnv)
	if path == "" {
		t.Skip("run by BenchmarkDownscale50MPPeakRSS only")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := Downscale(context.Background(), f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	var hwm int64
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			hwm, _ = strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	fmt.Printf("downscaled to %d x %d, %d bytes\nVmHWM %d\n", res.Width, res.Height, res.Bytes, hwm*1024)
}

// BenchmarkDownscale50MPPeakRSS measures what Lambda's memory size must
// hold: the peak RSS of a fresh process that downscales the 50 MP photo
// once, streamed from a file, with the Go runtime's default settings
// (GOGC=100, no GOMEMLIMIT unless set in the environment). peak-RSS-MB is
// the child's own VmHWM, read by the child as it ends; wait4's maxrss is
// not used, as Linux folds the parent's RSS (here the generated photo)
// into a vforked child's. It includes the test binary itself (a few MB).
func BenchmarkDownscale50MPPeakRSS(b *testing.B) {
	path := filepath.Join(b.TempDir(), "50mp.jpg")
	if err := os.WriteFile(path, jpeg50MP(b), 0o600); err != nil {
		b.Fatal(err)
	}
	var peak int64
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRSSChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), rssChildEnv+"="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("child: %v\n%s", err, out)
		}
		_, hwmLine, ok := strings.Cut(string(out), "VmHWM ")
		if !ok {
			b.Fatalf("child reported no VmHWM:\n%s", out)
		}
		hwm, err := strconv.ParseInt(strings.Fields(hwmLine)[0], 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		peak = max(peak, hwm)
	}
	b.ReportMetric(float64(peak)/1e6, "peak-RSS-MB")
}
