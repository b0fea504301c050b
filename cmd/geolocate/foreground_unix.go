//go:build linux || darwin

package main

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// takeForeground makes a long-running command (local, simulate) the
// terminal's foreground job when it was started inside another program's
// job, as `make run` starts it (and `go run`): a Ctrl-C then reaches only
// this process, which stops what it started and exits 0, and not make,
// which on an interrupt exits 130 by re-raising it on itself, whatever its
// recipe did. Run directly from a shell the command already is a job of its
// own, and without a terminal (tests, CI, pipes) there is nothing to take:
// both are left alone.
//
// While it holds the terminal, Ctrl-Z is ignored: it would stop this job
// alone, out of reach of the shell's job control, which only sees make's.
// release gives the terminal back to the job it came from; it must run
// before the process exits (if it did not, the shell takes the terminal
// back anyway once make ends).
func takeForeground(command string) (release func()) {
	noop := func() {}
	if command != "local" && command != "simulate" {
		return noop
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return noop // no controlling terminal
	}
	fd := int(tty.Fd())
	job := unix.Getpgrp()
	foreground, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	if err != nil || foreground != job || job == os.Getpid() {
		tty.Close()
		return noop // in the background, or already a job of its own
	}
	// A process outside the foreground job that sets the foreground is
	// stopped by SIGTTOU unless it ignores it.
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	if err := unix.Setpgid(0, 0); err != nil {
		tty.Close()
		return noop
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, os.Getpid()); err != nil {
		_ = unix.Setpgid(0, job)
		tty.Close()
		return noop
	}
	signal.Ignore(syscall.SIGTSTP)
	return func() {
		signal.Ignore(syscall.SIGTTOU)
		_ = unix.IoctlSetPointerInt(fd, unix.TIOCSPGRP, job)
		signal.Reset(syscall.SIGTTOU, syscall.SIGTSTP)
		tty.Close()
	}
}
