package lambdaruntime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// AWS's official Lambda Runtime Interface Emulator, pinned. It runs a
// bootstrap behind the real Runtime API implementation (rapid) and answers
// invokes on POST /2015-03-31/functions/function/invocations. Unlike
// Runtime, it does not freeze the process between invocations and reads the
// timeout in whole seconds, so the strict checks stay with Runtime; RIE
// checks that the functions speak the Runtime API as AWS implements it.
const (
	RIEPackage = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie"
	RIEVersion = "v0.0.0-20261030222936-bef5c4ba774d"
)

// BuildRIE builds the pinned emulator with the host's Go into dir and
// returns the binary's path. It is `go install RIEPackage@RIEVersion`: the
// emulator's own module graph, not this module's, from the module proxy
// and the build cache. An error means RIE cannot be built here (no Go, no
// proxy): tests skip with it.
func BuildRIE(ctx context.Context, dir string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("lambdaruntime: build RIE: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("lambdaruntime: build RIE: %w", err)
	}
	cmd := exec.CommandContext(ctx, goTool, "install", RIEPackage+"@"+RIEVersion)
	// GOFLAGS=-mod=mod would not apply to pkg@version; the module's own
	// go.sum is checked against the checksum database as for any module.
	cmd.Env = append(os.Environ(), "GOBIN="+abs, "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("lambdaruntime: build RIE %s: %w\n%s", RIEVersion, err, out)
	}
	return filepath.Join(abs, "aws-lambda-rie"), nil
}

// RIEConfig configures StartRIE.
type RIEConfig struct {
	RIE       string            // the emulator's binary (BuildRIE)
	Bootstrap string            // the function's bootstrap (BuildFunction)
	Env       map[string]string // the function's environment variables
	// Timeout is the function timeout, rounded up to whole seconds
	// (AWS_LAMBDA_FUNCTION_TIMEOUT); DefaultTimeout when zero.
	Timeout time.Duration
	Stderr  io.Writer // the emulator's and the function's output; default discarded
}

// RIEProcess is a bootstrap running under the emulator.
type RIEProcess struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{}
	once sync.Once
}

// StartRIE starts the emulator on two free ports of 127.0.0.1 with the
// bootstrap. The function's init runs at the first invoke, as on Lambda.
func StartRIE(ctx context.Context, cfg RIEConfig) (*RIEProcess, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	seconds := int((timeout + time.Second - 1) / time.Second)
	invokeAddr := "127.0.0.1:" + strconv.Itoa(ports[0])
	cmd := exec.Command(cfg.RIE,
		"--runtime-interface-emulator-address", invokeAddr,
		"--runtime-api-address", "127.0.0.1:"+strconv.Itoa(ports[1]),
		cfg.Bootstrap)
	cmd.Dir = filepath.Dir(cfg.Bootstrap)
	// Only what the function is given, as on Lambda: not the test's own
	// environment (credentials, endpoints).
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "AWS_LAMBDA_FUNCTION_TIMEOUT=" + strconv.Itoa(seconds)}
	for k, v := range cfg.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if cfg.Stderr != nil {
		cmd.Stdout, cmd.Stderr = cfg.Stderr, cfg.Stderr
	}
	// The emulator and the bootstrap it starts in one process group, so
	// Close stops both.
	isolate(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("lambdaruntime: start RIE: %w", err)
	}
	p := &RIEProcess{cmd: cmd, url: "http://" + invokeAddr + "/2015-03-31/functions/function/invocations", done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	if err := p.waitListening(ctx, invokeAddr); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// waitListening waits until the emulator accepts connections.
func (p *RIEProcess) waitListening(ctx context.Context, addr string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-p.done:
			return errors.New("lambdaruntime: RIE exited before listening")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("lambdaruntime: RIE not listening on %s after 10s", addr)
		}
	}
}

// Invoke sends payload as an invoke and returns the HTTP status and body:
// 200 and the response, or an error document ({"errorMessage",
// "errorType"}) with 200 for a function error or 502 for an init failure.
func (p *RIEProcess) Invoke(ctx context.Context, payload []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(payload))
	if err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("lambdaruntime: invoke through RIE: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// Close stops the emulator and the function.
func (p *RIEProcess) Close() {
	p.once.Do(func() {
		killGroup(p.cmd.Process.Pid)
		_ = p.cmd.Process.Kill() // where groups are not supported
		<-p.done
	})
}

// freePorts reserves n ports on 127.0.0.1 and releases them for the caller.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("lambdaruntime: free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// BuildForTest builds the function pkgPath as it ships, for this host, into
// a directory of t's, or skips t in -short mode (it builds and runs a
// binary).
func BuildForTest(t testing.TB, pkgPath string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the function binary")
	}
	bin, err := BuildFunction(t.Context(), pkgPath, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// RIEForTest builds AWS's emulator into a directory of t's, or skips t
// saying why it cannot be built here.
func RIEForTest(t testing.TB) string {
	t.Helper()
	rie, err := BuildRIE(t.Context(), t.TempDir())
	if err != nil {
		t.Skipf("AWS's Runtime Interface Emulator cannot be built here: %v", err)
	}
	return rie
}
