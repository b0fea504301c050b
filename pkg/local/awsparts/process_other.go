//go:build !linux

package awsparts

import "os/exec"

// isolate has no portable equivalent of Linux's parent-death signal; the
// process is killed by Stop.
func isolate(cmd *exec.Cmd) {}

func killGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }

// processGone cannot tell here: no folder is taken for stale.
func processGone(int) bool { return false }
