package pipeline

import (
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// TestFunctionEnvPassesTheSettingsThrough: every setting a function reads
// is taken from the shell, as -c tunes the stack, except what the rig
// decides: the service it started and its one poller's concurrency.
func TestFunctionEnvPassesTheSettingsThrough(t *testing.T) {
	shell := map[string]string{}
	for _, name := range settings.Passed() {
		shell[name] = "from-shell"
	}
	shell[envvars.APIURL] = "https://paid.example.invalid"
	shell[envvars.MaxConcurrency] = "9"
	opts := Options{Getenv: func(name string) string { return shell[name] }}
	opts.setDefaults()
	env := functionEnv(opts, &service{url: "http://127.0.0.1:1"})
	for _, name := range []string{envvars.ReuseResults, envvars.UploadMetadata, envvars.FinishReserve,
		envvars.HistoryTTLDays, envvars.FunctionMemorySize, envvars.TopN} {
		if env[name] != "from-shell" {
			t.Errorf("%s = %q, want the shell's value", name, env[name])
		}
	}
	if env[envvars.APIURL] != "http://127.0.0.1:1" || env[envvars.MaxConcurrency] != "1" {
		t.Errorf("the rig's own: %s = %q, %s = %q", envvars.APIURL, env[envvars.APIURL], envvars.MaxConcurrency, env[envvars.MaxConcurrency])
	}
	if _, ok := env[envvars.BatchSize]; ok {
		t.Error("a fact of the deployment (BATCH_SIZE) passed through from the shell")
	}
}
