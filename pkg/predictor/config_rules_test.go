package predictor

import (
	"strconv"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// LoadConfig refuses each combination the CDK app refuses
// (pkg/shared/configrules), naming the variables and the limit, and accepts
// the nearest one that works.
func TestLoadConfigRefusesCombinationsThatCannotWork(t *testing.T) {
	deployed := func() map[string]string {
		env := baseEnv()
		for k, v := range map[string]string{
			envvars.RatePerMinute: "30", envvars.MaxConcurrency: "2", envvars.BatchSize: "5",
			envvars.FunctionTimeout: "2m0s", envvars.FinishReserve: "10s", envvars.MaxReceiveCount: "10",
			envvars.FunctionMemorySize: strconv.Itoa(DefaultMemoryMB),
		} {
			env[k] = v
		}
		return env
	}
	if _, err := LoadConfig(envOf(deployed())); err != nil {
		t.Fatalf("the stack's defaults are refused: %v", err)
	}
	tests := []struct {
		name              string
		refused, accepted map[string]string
		mentions          []string
	}{
		{"slots of a round beyond the usable timeout",
			map[string]string{envvars.MaxConcurrency: "20"}, map[string]string{envvars.MaxConcurrency: "10"},
			[]string{"GEO_MAX_CONCURRENCY x BATCH_SIZE x 60 / GEO_RATE_PER_MINUTE", "200 s", "105 s"}},
		{"a rate above what the pacing was proven to keep, with either pacing",
			map[string]string{envvars.RatePerMinute: "30001", envvars.BatchSize: "1", envvars.Pacing: "instance"},
			map[string]string{envvars.RatePerMinute: "30000", envvars.BatchSize: "1", envvars.Pacing: "instance"},
			[]string{"GEO_RATE_PER_MINUTE", "from 1 to 30000", "proven"}},
		{"memory too small for downscaling",
			map[string]string{envvars.FunctionMemorySize: "128"}, map[string]string{envvars.FunctionMemorySize: "128", envvars.Oversize: "reject"},
			[]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE 128", "GEO_OVERSIZE"}},
		{"fewer than five receives",
			map[string]string{envvars.MaxReceiveCount: "1"}, map[string]string{envvars.MaxReceiveCount: "5"},
			[]string{"MAX_RECEIVE_COUNT 1", "at least 5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := deployed()
			for k, v := range tt.refused {
				env[k] = v
			}
			_, err := LoadConfig(envOf(env))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, m := range tt.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
			env = deployed()
			for k, v := range tt.accepted {
				env[k] = v
			}
			if _, err := LoadConfig(envOf(env)); err != nil {
				t.Errorf("the nearest working configuration is refused: %v", err)
			}
		})
	}
}

// Outside Lambda, or from a stack that does not say, the batch size,
// timeout and memory are unknown: their rules are skipped, not guessed.
func TestLoadConfigSkipsRulesOfUnknownSettings(t *testing.T) {
	env := baseEnv()
	env[envvars.MaxConcurrency] = "1000"
	if _, err := LoadConfig(envOf(env)); err != nil {
		t.Errorf("refused without the settings the rule needs: %v", err)
	}
}
