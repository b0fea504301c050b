package awsparts

import (
	"errors"
	"os/exec"
	"syscall"
)

// isolate puts the child in its own process group, so Stop can kill the
// JVM and anything it spawned, and has the kernel kill it if the Go process
// dies first, so no JVM outlives a crashed test binary.
func isolate(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the child's whole process group.
func killGroup(cmd *exec.Cmd) error {
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// processGone reports whether no process has the id pid.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
