package predictor

import (
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/photo/downscale"
	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// TestDefaultsAreTheLibraries: the predictor's defaults are the settings
// table's (which pkg/shared/settings holds to cdk.json), and the libraries
// it configures keep defaults of their own for callers without a
// configuration; those must be the table's too. The memory default once
// drifted (cdk.json 512; envvars and a test said 1024): with one default
// per setting it cannot, and this test catches a library's drifting.
func TestDefaultsAreTheLibraries(t *testing.T) {
	for _, tt := range []struct {
		setting *settings.Setting
		library int
	}{
		{settings.MaxImageBytes, int(imageformat.DefaultMaxImageBytes)},
		{settings.DownscaleMaxSidePx, downscale.DefaultMaxSide},
		{settings.MaxServerDelaySeconds, int(geoapi.DefaultMaxServerDelay / time.Second)},
	} {
		if got := tt.setting.DefaultInt(); got != tt.library {
			t.Errorf("settings %s default %d, the library's %d", tt.setting.Key, got, tt.library)
		}
	}
	c, err := LoadConfig(envOf(baseEnv()))
	if err != nil {
		t.Fatal(err)
	}
	if c.MemoryMB != settings.PredictorMemoryMB.DefaultInt() || c.RatePerMinute != float64(settings.RatePerMinute.DefaultInt()) ||
		c.MaxConcurrency != settings.MaxConcurrency.DefaultInt() || c.FinishReserve != DefaultFinishReserve {
		t.Errorf("unset variables did not take the table's defaults: %+v", c)
	}
}
