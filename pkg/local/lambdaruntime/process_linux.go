package lambdaruntime

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func supported() error { return nil }

// isolate puts the bootstrap in its own process group, so that freezes and
// kills reach everything it starts, and has the kernel kill it if the Go
// process dies first.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the process group led by pid.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// stopGroup freezes the process group led by pid and waits, briefly, until
// every thread of the leader is stopped, so that nothing runs after it
// returns.
func stopGroup(pid int) {
	if pid <= 0 {
		return
	}
	if syscall.Kill(-pid, syscall.SIGSTOP) != nil {
		return
	}
	deadline := time.Now().Add(500 * time.Millisecond)
	for !threadsStopped(pid) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Microsecond)
	}
}

func continueGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGCONT)
	}
}

// threadsStopped reports whether every thread of pid is stopped (or the
// process is gone), from /proc/PID/task/TID/stat.
func threadsStopped(pid int) bool {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return true // gone
	}
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "stat"))
		if err != nil {
			continue // the thread is gone
		}
		// The state follows the parenthesised command name.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 || i+2 >= len(b) {
			return false
		}
		switch b[i+2] {
		case 'T', 't', 'Z', 'X':
		default:
			return false
		}
	}
	return true
}
