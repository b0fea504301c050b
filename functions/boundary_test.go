// Package functions holds no code: only the test that keeps the local rig out
// of the Lambda functions.
package functions

import (
	"os/exec"
	"strings"
	"testing"
)

// forbidden are import-path prefixes that must never be linked into a
// function: the local rig, and the libraries only the rig uses.
var forbidden = []string{
	"github.com/geolocate-aws/geolocate/pkg/local/",
	"github.com/johannesboyne/gofakes3",
	"github.com/go-echarts/go-echarts",
}

// TestFunctionsShipNoLocalRig fails when any function depends, directly or
// through another package, on code that must never ship.
func TestFunctionsShipNoLocalRig(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./functions/...: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps printed %d packages; expected the functions' dependencies:\n%s", len(deps), out)
	}
	for _, dep := range deps {
		for _, prefix := range forbidden {
			if strings.HasPrefix(dep, prefix) || dep == strings.TrimSuffix(prefix, "/") {
				t.Errorf("a function depends on %s, which must never ship (rule: %s)", dep, prefix)
			}
		}
	}
}
