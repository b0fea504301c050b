package lambdarun

import (
	"errors"
	"strings"
	"testing"
)

// Issue 46 point 15: the predictor run by hand without local --serve's
// export line listed three missing variables, one a line, and no word of
// where they come from.
func TestLocalInitErrorIsOneLinePointingAtServe(t *testing.T) {
	err := errors.Join(errors.New("predictor configuration: GEO_SECRET_ID or GEO_API_KEY is required"),
		errors.New("TABLE_NAME is required"), errors.New("GEO_API_URL is required"))
	got := LocalInitError("predictor", err)
	if strings.Contains(got, "\n") {
		t.Errorf("%q: want one line", got)
	}
	for _, want := range []string{"predictor: predictor configuration: GEO_SECRET_ID or GEO_API_KEY is required; TABLE_NAME is required; GEO_API_URL is required",
		"`bin/geolocate local --serve`", "export line"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
}
