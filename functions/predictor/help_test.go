package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/local/lambdaruntime"
)

// TestHelpNeedsNoConfiguration: -h answers with the usage and exits 0 in an
// empty environment, instead of reporting the configuration it lacks.
func TestHelpNeedsNoConfiguration(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the function")
	}
	bin, err := lambdaruntime.BuildFunction(t.Context(), "github.com/geolocate-aws/geolocate/functions/predictor", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"-h", "--help", "-help"} {
		cmd := exec.Command(bin, flag)
		cmd.Env = []string{} // no TABLE_NAME, GEO_API_URL or key
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", flag, err, out)
		}
		text := string(out)
		if !strings.HasPrefix(text, "usage: predictor") || !strings.Contains(text, "-event") || !strings.Contains(text, "TABLE_NAME") {
			t.Errorf("%s: not the usage:\n%s", flag, text)
		}
		if strings.Contains(text, "predictor: ") {
			t.Errorf("%s: an error instead of or besides the usage:\n%s", flag, text)
		}
	}
	if out, err := exec.Command(bin).CombinedOutput(); err == nil {
		t.Errorf("no flag outside Lambda: exit 0, want a usage error:\n%s", out)
	}
}
