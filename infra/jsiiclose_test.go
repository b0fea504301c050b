package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestJSIICloseIsSilent runs a small jsii program that ends as main does
// (defer jsii.Close()) many times and requires that the runtime prints
// nothing on the way out. jsii-runtime-go before v1.142.0 waited for the
// node process from two goroutines, and the one that lost the race printed
// "Runtime process exited abnormally: waitid: no child processes" after a
// good synth (about one run in five here): `make synth` and `cdk deploy`
// seemed to fail when they had not.
func TestJSIICloseIsSilent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a jsii program")
	}
	bin := filepath.Join(t.TempDir(), "jsiiclose")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/jsiiclose").CombinedOutput(); err != nil {
		t.Fatalf("go build ./testdata/jsiiclose: %v\n%s", err, out)
	}
	const runs, parallel = 24, 3
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		noisy []string
	)
	slots := make(chan struct{}, parallel)
	for range runs {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			cmd := exec.Command(bin)
			// Node 20's end-of-life banner is silenced as the Makefile does:
			// this test is about what Close prints.
			cmd.Env = append(os.Environ(), "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				noisy = append(noisy, "exit: "+err.Error()+": "+stderr.String())
			case strings.TrimSpace(stdout.String()) != "root 1":
				noisy = append(noisy, "stdout "+stdout.String())
			case stderr.Len() > 0:
				noisy = append(noisy, stderr.String())
			}
		}()
	}
	wg.Wait()
	if len(noisy) > 0 {
		t.Errorf("%d of %d runs printed on exit, e.g. %q", len(noisy), runs, noisy[0])
	}
}
