package lambdaruntime

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// BuildFunction builds the main package pkgPath (a path relative to the
// current directory, or an import path of the current module) as outDir/bootstrap
// the way the functions are built for Lambda (-tags lambda.norpc, -trimpath,
// CGO_ENABLED=0), but for the host's GOOS and GOARCH, since it runs here. It
// returns the binary's path.
func BuildFunction(ctx context.Context, pkgPath, outDir string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("lambdaruntime: build %s: %w", pkgPath, err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", fmt.Errorf("lambdaruntime: build %s: %w", pkgPath, err)
	}
	out, err := filepath.Abs(filepath.Join(outDir, "bootstrap"))
	if err != nil {
		return "", fmt.Errorf("lambdaruntime: build %s: %w", pkgPath, err)
	}
	cmd := exec.CommandContext(ctx, goTool, "build", "-tags", "lambda.norpc", "-trimpath", "-o", out, pkgPath)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("lambdaruntime: build %s: %w\n%s", pkgPath, err, b)
	}
	return out, nil
}
