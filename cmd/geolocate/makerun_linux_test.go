//go:build linux

package main

// `make run` stopped as a user stops it: Ctrl-C in a terminal, or SIGTERM
// to make. The terminal is a pseudo-terminal this test opens, so the
// kernel delivers Ctrl-C to the terminal's foreground job as it does on a
// desk.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// startMakeRun starts `make run WATCH=1` in the module root with the built
// CLI (make's own deps and build-cli steps skipped: `make test` ran deps,
// and bin/ of the working tree is left alone), with IMAGES=images unless
// it is empty, on tty when it is not nil.
func startMakeRun(t *testing.T, cli, images string, tty *os.File) *cliProcess {
	t.Helper()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make on PATH")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	p := &cliProcess{done: make(chan struct{})}
	args := []string{"-s", "-o", "deps", "-o", "build-cli", "run", "GEOLOCATE=" + cli, "WATCH=1"}
	if images != "" {
		args = append(args, "IMAGES="+images)
	}
	p.cmd = exec.Command("make", args...)
	p.cmd.Dir = root
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envvars.APIURL+"=") && !strings.HasPrefix(kv, envvars.APIKey+"=") && !strings.HasPrefix(kv, "MAKEFLAGS=") {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	if tty != nil {
		p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = tty, tty, tty
		// A session of its own with tty as its controlling terminal: make
		// is then the terminal's foreground job, as when typed in a shell.
		p.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	} else {
		p.cmd.Stdout, p.cmd.Stderr = &p.output, &p.output
	}
	p.start(t)
	return p
}

// openTerminal opens a pseudo-terminal: the side a program runs on (tty)
// and the side this test types into and reads (master).
func openTerminal(t *testing.T) (master, tty *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return master, tty
}

// readTerminal copies what the programs on the terminal print into p's
// output until the last of them closes it, then closes done.
func readTerminal(master *os.File, p *cliProcess, done chan<- struct{}) {
	defer close(done)
	buf := make([]byte, 4096)
	for {
		n, err := master.Read(buf)
		_, _ = p.output.Write(buf[:n])
		if err != nil {
			return // EIO once the terminal has no program left
		}
	}
}

// TestMakeRunCtrlCExitsZero: Ctrl-C stops `make run` cleanly and make
// exits 0. Make receives the Ctrl-C too when it shares the terminal's
// foreground job with the CLI, and then exits 130 whatever the CLI did; the
// CLI makes itself the foreground job so the Ctrl-C reaches it alone.
func TestMakeRunCtrlCExitsZero(t *testing.T) {
	cli := buildCLI(t)
	master, tty := openTerminal(t)
	run := startMakeRun(t, cli, imagesFolder(t), tty)
	tty.Close() // the programs on the terminal hold it now
	read := make(chan struct{})
	go readTerminal(master, run, read)
	run.waitFor(t, "watching  ", 2*time.Minute)
	run.waitFor(t, "done      photo.jpg", time.Minute)
	children := descendantsOf(t, run.cmd.Process.Pid)
	if _, err := master.Write([]byte{0x03}); err != nil { // Ctrl-C, as typed
		t.Fatal(err)
	}
	if code := run.exitCode(t, 2*time.Minute); code != 0 {
		t.Fatalf("make run exited %d after Ctrl-C, want 0:\n%s", code, run.output.String())
	}
	select { // what the run printed last may still be on its way from the terminal
	case <-read:
	case <-time.After(10 * time.Second):
		t.Fatalf("the terminal was still open 10 s after make exited:\n%s", run.output.String())
	}
	if out := run.output.String(); !strings.Contains(out, "1 succeeded") {
		t.Errorf("no report after Ctrl-C:\n%s", out)
	}
	assertGone(t, children)
}

// TestMakeRunSIGTERMStopsTheRun: SIGTERM to make reaches the CLI (make
// passes it to its recipe, which is the CLI itself), which stops the local
// parts and exits 0. Make itself then exits by the signal (143), which no
// recipe can change: GNU make re-raises a fatal signal on itself once its
// recipe has ended. The README says so.
//
// Without IMAGES, `make run WATCH=1` watches a temporary copy of the
// sample images, said on screen and removed at the end: files dropped in
// the repository's testdata/images stayed there as untracked files that
// later runs uploaded and tests read.
func TestMakeRunSIGTERMStopsTheRun(t *testing.T) {
	cli := buildCLI(t)
	run := startMakeRun(t, cli, "", nil)
	run.waitFor(t, "watching  ", 2*time.Minute)
	watched := regexp.MustCompile(`(?m)^watching  (\S+)`).FindStringSubmatch(run.output.String())
	if watched == nil || !strings.HasPrefix(watched[1], os.TempDir()) || !strings.Contains(run.output.String(), "images    "+watched[1]+": a temporary copy of testdata/images") {
		t.Fatalf("make run WATCH=1 does not watch a temporary copy it names:\n%s", run.output.String())
	}
	// Every sample is done before the signal: one still calling would be
	// cut off (outcome_unknown) and the run would rightly end in error.
	// The 10 MB photo, downscaled first, is often the last.
	for _, name := range []string{"harbour at dusk.jpg", "exif-gps-harbour-over-10MB.jpg"} {
		run.waitFor(t, "done      "+name, time.Minute)
	}
	children := descendantsOf(t, run.cmd.Process.Pid)
	if err := run.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code := run.exitCode(t, 2*time.Minute)
	out := run.output.String()
	if !regexp.MustCompile(`(?m)^\d+ upload\(s\): `).MatchString(out) || strings.Contains(out, "Error") {
		t.Errorf("the CLI did not stop cleanly on make's SIGTERM:\n%s", out)
	}
	status, _ := run.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if code != -1 || status.Signal() != syscall.SIGTERM {
		t.Errorf("make ended with %v (code %d); GNU make re-raises SIGTERM on itself: if that changed, update the README and the Makefile's note", run.cmd.ProcessState, code)
	}
	assertGone(t, children)
	if _, err := os.Stat(watched[1]); !os.IsNotExist(err) {
		t.Errorf("the watched copy %s is still there after the run (%v)", watched[1], err)
	}
}

// descendantsOf lists pid's live children, theirs, and so on.
func descendantsOf(t *testing.T, pid int) []int {
	t.Helper()
	var all []int
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		children := childrenOf(t, queue[0])
		all = append(all, children...)
		queue = append(queue, children...)
	}
	return all
}
