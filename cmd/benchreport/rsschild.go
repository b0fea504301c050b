package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/bench"
)

// A child's peak RSS, as wait4 reports it, is at least the RSS of the
// process that started it: Go starts children with vfork (CLONE_VM), and at
// exec Linux folds the parent's memory high-water mark into the child's
// maxrss. The driver holds every uploaded image in its in-process S3, so
// measuring the predictor as its direct child would report the driver's
// size. Instead the driver re-executes itself as a small launcher
// (rssLauncherArg) that starts the predictor and reports, on the last line
// of stderr, two bounds of its peak RSS:
//   - maxrss (wait4): an upper bound, max(the launcher's size at exec, the
//     predictor's peak);
//   - hwm: the predictor's own VmHWM (/proc/<pid>/status, its address space
//     only), polled every millisecond until it exits: a lower bound that
//     can only miss growth in its last millisecond.
//
// GNU time (`time -f %M`, forking from a small C process) agrees with both
// within a few hundred KB here.
const (
	rssLauncherArg    = "rss-launcher"
	rssLauncherPrefix = "benchreport-rss "
)

// runRSSLauncher is the launcher's main: run args, forward its output and
// exit status, and report its peak RSS, wall and CPU time.
func runRSSLauncher(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "benchreport rss-launcher: no command")
		return 2
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "benchreport rss-launcher: %v\n", err)
		return 1
	}
	var hwm atomic.Int64
	stop := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if v := highWaterMark(status); v > hwm.Load() {
				hwm.Store(v)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	wall := time.Since(start)
	close(stop)
	<-polled
	code := 0
	if err != nil {
		code = 1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			fmt.Fprintf(os.Stderr, "benchreport rss-launcher: %v\n", err)
			return 1
		}
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "benchreport rss-launcher: no rusage")
		return 1
	}
	fmt.Fprintf(os.Stderr, "\n%smaxrss=%d hwm=%d wall_ns=%d cpu_ns=%d\n", rssLauncherPrefix,
		bench.MaxRSSBytes(ru), hwm.Load(), wall.Nanoseconds(), bench.RusageCPU(ru).Nanoseconds())
	return code
}

// launcherFigures parses the launcher's report from the end of stderr.
func launcherFigures(stderr string) (maxRSS, hwm int64, wall, cpu time.Duration, err error) {
	i := strings.LastIndex(stderr, rssLauncherPrefix)
	if i < 0 {
		return 0, 0, 0, 0, fmt.Errorf("no launcher report in the output")
	}
	fields := map[string]int64{}
	for _, f := range strings.Fields(stderr[i+len(rssLauncherPrefix):]) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, 0, 0, 0, fmt.Errorf("launcher report %q: %w", f, err)
		}
		fields[k] = n
	}
	return fields["maxrss"], fields["hwm"], time.Duration(fields["wall_ns"]), time.Duration(fields["cpu_ns"]), nil
}

// highWaterMark is VmHWM of a /proc/<pid>/status file in bytes: the peak
// RSS of that process's address space (0 when unavailable, e.g. after exit).
func highWaterMark(statusFile string) int64 {
	b, err := os.ReadFile(statusFile)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}
