//go:build !linux

package lambdaruntime

import (
	"errors"
	"os/exec"
)

// The strict model relies on Linux process groups, signals and the
// parent-death signal.
func supported() error {
	return errors.New("lambdaruntime: only supported on Linux")
}

func isolate(*exec.Cmd) {}
func killGroup(int)     {}
func stopGroup(int)     {}
func continueGroup(int) {}
