package bench

import (
	"syscall"
	"time"
)

// CPUTime returns the user plus system CPU time the whole process has used
// so far (getrusage RUSAGE_SELF). Differences around a piece of work give
// its CPU cost, including everything else the process did meanwhile, so
// measure work of interest with the process otherwise idle.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return RusageCPU(&ru)
}

// RusageCPU is the user plus system time recorded in ru.
func RusageCPU(ru *syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// MaxRSSBytes is ru's peak resident set size in bytes (Linux reports it in
// kilobytes).
func MaxRSSBytes(ru *syscall.Rusage) int64 {
	return ru.Maxrss * 1024
}
