package predictor

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
)

// TestDefaultsAreTheStacks: a variable the predictor finds unset takes
// the stack's default, so each default here must be cdk.json's. The memory
// default drifted (cdk.json 512; envvars and a test said 1024), which this
// test would have caught.
func TestDefaultsAreTheStacks(t *testing.T) {
	raw, err := os.ReadFile("../../cdk.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for key, code := range map[string]float64{
		"predictorMemoryMb":     DefaultMemoryMB,
		"ratePerMinute":         DefaultRatePerMinute,
		"maxConcurrency":        DefaultMaxConcurrency,
		"finishReserveSeconds":  DefaultFinishReserve.Seconds(),
		"maxServerDelaySeconds": DefaultMaxServerDelay.Seconds(),
		"downscaleMaxSidePx":    DefaultDownscaleMaxSide,
		"maxImageBytes":         float64(imageformat.DefaultMaxImageBytes),
	} {
		if got, ok := doc.Context[key].(float64); !ok || got != code {
			t.Errorf("cdk.json %s = %v, the predictor's default %v", key, doc.Context[key], code)
		}
	}
}
