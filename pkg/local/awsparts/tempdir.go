package awsparts

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// TempDir makes a temporary folder of this process in parent (default
// os.TempDir()), named prefix-<pid>-<random>, after removing the folders of
// the same prefix whose process is gone. A run killed outright (SIGKILL, a
// test binary's timeout, a closed pipe) never removes its own, so the next
// run does: nothing a run leaves in it outlives the next start.
func TempDir(parent, prefix string) (string, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	stale, _ := filepath.Glob(filepath.Join(parent, prefix+"-*-*"))
	for _, d := range stale {
		owner, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), prefix+"-"), "-")
		if pid, err := strconv.Atoi(owner); err == nil && pid > 0 && processGone(pid) {
			_ = os.RemoveAll(d)
		}
	}
	return os.MkdirTemp(parent, fmt.Sprintf("%s-%d-", prefix, os.Getpid()))
}
