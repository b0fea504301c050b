//go:build linux

package main

// These tests run the CLI as a user does: built, as its own process, stopped
// by a signal. They look for the processes it started in /proc, which is
// why they are Linux only.

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/syncbuf"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// buildCLI builds this command into a temporary directory, as
// `make build-cli` does into bin/.
func buildCLI(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the CLI and runs it as a process")
	}
	bin := filepath.Join(t.TempDir(), "geolocate")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// cliProcess is a running geolocate.
type cliProcess struct {
	cmd    *exec.Cmd
	output syncbuf.Buffer // stdout and stderr, interleaved
	done   chan struct{}
	err    error // cmd.Wait's, set before done closes
}

// startCLI starts bin with args, with the simulator (no GEO_API_URL or
// GEO_API_KEY), in this package's directory so that DynamoDB Local is found
// under the module root.
func startCLI(t *testing.T, bin string, args ...string) *cliProcess {
	t.Helper()
	p := &cliProcess{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envvars.APIURL+"=") && !strings.HasPrefix(kv, envvars.APIKey+"=") {
			p.cmd.Env = append(p.cmd.Env, kv)
		}
	}
	p.cmd.Stdout, p.cmd.Stderr = &p.output, &p.output
	p.start(t)
	return p
}

// start starts p.cmd, waits for it in the background (done closes when it
// has exited) and kills it at the end of the test if it is still running.
func (p *cliProcess) start(t *testing.T) {
	t.Helper()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
}

// waitFor waits until the output holds text, failing if the process exits
// first or timeout passes.
func (p *cliProcess) waitFor(t *testing.T, text string, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for !strings.Contains(p.output.String(), text) {
		select {
		case <-p.done:
			t.Fatalf("exited (%v) before printing %q:\n%s", p.err, text, p.output.String())
		case <-deadline:
			t.Fatalf("no %q within %s:\n%s", text, timeout, p.output.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// exitCode waits for the process to end and returns its exit code (-1 when
// a signal killed it).
func (p *cliProcess) exitCode(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		t.Fatalf("still running %s after the signal:\n%s", timeout, p.output.String())
	}
	var exit *exec.ExitError
	if p.err != nil && !errors.As(p.err, &exit) {
		t.Fatalf("wait: %v", p.err)
	}
	return p.cmd.ProcessState.ExitCode()
}

// childrenOf lists the live processes whose parent is pid.
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var children []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, state, ok := procStat(child); ok && ppid == pid && state != "Z" {
			children = append(children, child)
		}
	}
	return children
}

// procStat reads a process's parent and state from /proc/PID/stat.
func procStat(pid int) (ppid int, state string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, "", false
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 2 {
		return 0, "", false
	}
	ppid, err = strconv.Atoi(fields[1])
	return ppid, fields[0], err == nil
}

// alive reports whether pid is a process that has not exited. A zombie
// (exited, waiting for a parent that may never reap it in a container) has
// exited: it holds no port and runs nothing.
func alive(pid int) bool {
	_, state, ok := procStat(pid)
	return ok && state != "Z"
}

// assertGone waits a few seconds for every pid to exit.
func assertGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
				_ = syscall.Kill(pid, syscall.SIGKILL) // do not leave it to the next test
				t.Fatalf("process %d (%s) outlived the CLI", pid, strings.ReplaceAll(string(b), "\x00", " "))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

var portPattern = regexp.MustCompile(`http://127\.0\.0\.1:(\d+)`)

// listenedPorts are the ports of every local endpoint the output names:
// the simulator, S3 and DynamoDB Local.
func listenedPorts(output string) []string {
	seen := map[string]bool{}
	var ports []string
	for _, m := range portPattern.FindAllStringSubmatch(output, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			ports = append(ports, m[1])
		}
	}
	return ports
}

// assertPortsFree checks nothing listens on the ports any more, on any
// interface (DynamoDB Local binds them all).
func assertPortsFree(t *testing.T, ports []string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, port := range ports {
		for {
			l, err := net.Listen("tcp", ":"+port)
			if err == nil {
				l.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("port %s still in use after the CLI ended: %v", port, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// imagesFolder is a folder with one sample image.
func imagesFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	b, err := os.ReadFile(imgJPEG)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "photo.jpg"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// serving starts `geolocate local --serve` and waits until every local part
// is up, returning the process, its children (the JVM of DynamoDB Local)
// and the ports it listens on.
func serving(t *testing.T, bin string) (*cliProcess, []int, []string) {
	t.Helper()
	p := startCLI(t, bin, "local", "--serve", "--images", imagesFolder(t))
	p.waitFor(t, "serving ", 2*time.Minute)
	children := childrenOf(t, p.cmd.Process.Pid)
	if len(children) == 0 {
		t.Fatalf("no child process found while serving (DynamoDB Local should be one):\n%s", p.output.String())
	}
	ports := listenedPorts(p.output.String())
	if len(ports) < 3 {
		t.Fatalf("want the simulator, S3 and DynamoDB Local ports in the output, found %v:\n%s", ports, p.output.String())
	}
	return p, children, ports
}

func TestLocalKilledLeavesNoProcessOrPort(t *testing.T) {
	bin := buildCLI(t)
	p, children, ports := serving(t, bin)

	// SIGKILL cannot be handled: only the kernel's parent-death signal on
	// DynamoDB Local can stop it now.
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := p.exitCode(t, 10*time.Second); code != -1 {
		t.Errorf("exit code %d, want death by SIGKILL", code)
	}
	assertGone(t, children)
	assertPortsFree(t, ports)
}

func TestLocalStopsOnSIGTERMAndSIGHUP(t *testing.T) {
	bin := buildCLI(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			p, children, ports := serving(t, bin)
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := p.exitCode(t, 30*time.Second); code != 0 {
				t.Errorf("exit code %d after %v, want 0 (a requested stop):\n%s", code, sig, p.output.String())
			}
			// Issue 46 point 15: it stopped without a word.
			if out := p.output.String(); !strings.Contains(out, "stopped   after ") || !strings.Contains(out, "the simulator, S3 and DynamoDB Local stopped") {
				t.Errorf("--serve does not say what stopped:\n%s", out)
			}
			assertGone(t, children)
			assertPortsFree(t, ports)
		})
	}
}

func TestLocalWatchInterruptExitsZero(t *testing.T) {
	bin := buildCLI(t)
	p := startCLI(t, bin, "local", "--watch", "--images", imagesFolder(t))
	p.waitFor(t, "watching  ", 2*time.Minute)
	p.waitFor(t, "done      photo.jpg", time.Minute)
	children := childrenOf(t, p.cmd.Process.Pid)
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := p.exitCode(t, 2*time.Minute); code != 0 {
		t.Fatalf("exit code %d after Ctrl-C in watch mode, want 0:\n%s", code, p.output.String())
	}
	if out := p.output.String(); !strings.Contains(out, "photo.jpg") || !strings.Contains(out, "1 succeeded") {
		t.Errorf("no report after Ctrl-C:\n%s", out)
	}
	assertGone(t, children)
}

func TestSimulateStopsOnSIGTERM(t *testing.T) {
	bin := buildCLI(t)
	p := startCLI(t, bin, "simulate", "--addr", "127.0.0.1:0")
	p.waitFor(t, "export "+envvars.APIKey+"=", 30*time.Second)
	ports := listenedPorts(p.output.String())
	if len(ports) != 1 {
		t.Fatalf("ports %v:\n%s", ports, p.output.String())
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.exitCode(t, 10*time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0:\n%s", code, p.output.String())
	}
	if !strings.Contains(p.output.String(), "stopped after") {
		t.Errorf("no closing line:\n%s", p.output.String())
	}
	assertPortsFree(t, ports)
}

// TestLocalWatchStoppedWhileStartingExitsZero: a stop that comes while the
// local parts start is still a requested stop, and leaves nothing behind.
func TestLocalWatchStoppedWhileStartingExitsZero(t *testing.T) {
	bin := buildCLI(t)
	p := startCLI(t, bin, "local", "--watch", "--images", imagesFolder(t))
	p.waitFor(t, "starting  S3", time.Minute)
	time.Sleep(200 * time.Millisecond) // DynamoDB Local is being started
	children := childrenOf(t, p.cmd.Process.Pid)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.exitCode(t, time.Minute); code != 0 {
		t.Fatalf("exit code %d after SIGTERM during start-up, want 0:\n%s", code, p.output.String())
	}
	assertGone(t, children)
}

// TestLocalOnePassCtrlCExitsZero: Ctrl-C at any moment of a one-pass run
// (make run without WATCH) is a requested stop, status 0 as the README
// says; while DynamoDB Local starts it is said as a stop, not as a start
// timeout, and once uploads are in flight the report is still printed.
func TestLocalOnePassCtrlCExitsZero(t *testing.T) {
	bin := buildCLI(t)
	for _, tt := range []struct{ name, after, wantOut string }{
		{"while starting", "starting  S3", "stopped   on request"},
		{"while uploading", "uploaded  ", "upload(s): "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := startCLI(t, bin, "local", "--images", imagesFolder(t))
			p.waitFor(t, tt.after, 2*time.Minute)
			time.Sleep(200 * time.Millisecond) // into the step: the JVM starting, the call in flight
			children := childrenOf(t, p.cmd.Process.Pid)
			// A one-pass run over a few photos can end in the 200 ms: then
			// the stop came too late to matter, and the run's own end must
			// hold the same (status 0, the report printed).
			if err := p.cmd.Process.Signal(os.Interrupt); err != nil && !errors.Is(err, os.ErrProcessDone) {
				t.Fatal(err)
			}
			code := p.exitCode(t, 2*time.Minute)
			out := p.output.String()
			if code != 0 {
				t.Fatalf("exit code %d after Ctrl-C %s, want 0:\n%s", code, tt.name, out)
			}
			if !strings.Contains(out, tt.wantOut) || strings.Contains(out, "did not answer") {
				t.Errorf("after Ctrl-C %s: want %q and no start timeout:\n%s", tt.name, tt.wantOut, out)
			}
			assertGone(t, children)
		})
	}
}
