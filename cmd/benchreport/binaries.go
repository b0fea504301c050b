package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// buildFunction builds ./functions/<name> with the flags of `make build`
// (no RPC, trimmed, stripped) for goos/goarch into dir, and returns the
// binary's path.
func buildFunction(ctx context.Context, root, dir, name, goos, goarch string) (string, error) {
	out := filepath.Join(dir, name+"-"+goos+"-"+goarch)
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "lambda.norpc", "-trimpath",
		"-ldflags=-s -w", "-o", out, "./functions/"+name)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s for %s/%s: %w\n%s", name, goos, goarch, err, b)
	}
	return out, nil
}

// bootstrapSizes returns the size of each function's Lambda bootstrap:
// build/<fn>/bootstrap from `make build`, or a fresh linux/arm64 build with
// the same flags when that is missing.
func bootstrapSizes(ctx context.Context, root, tmp string) (map[string]int64, string, error) {
	sizes := map[string]int64{}
	source := "build/<function>/bootstrap (make build: linux/arm64, -tags lambda.norpc, -trimpath, -ldflags '-s -w')"
	for _, fn := range []string{"predictor", "monitor"} {
		path := filepath.Join(root, "build", fn, "bootstrap")
		if _, err := os.Stat(path); err != nil {
			source = "built by the driver: linux/arm64, -tags lambda.norpc, -trimpath, -ldflags '-s -w' (build/ was missing)"
			if path, err = buildFunction(ctx, root, tmp, fn, "linux", "arm64"); err != nil {
				return nil, "", err
			}
		}
		fi, err := os.Stat(path)
		if err != nil {
			return nil, "", err
		}
		sizes[fn] = fi.Size()
	}
	return sizes, source, nil
}

// hostPlatform is the GOOS/GOARCH the measured binaries run on here.
func hostPlatform() (string, string) { return runtime.GOOS, runtime.GOARCH }
