package predictor

import (
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

const fakeKey = "geo_test_fake_key_1"

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func baseEnv() map[string]string {
	return map[string]string{
		envvars.TableName: "results",
		envvars.SecretID:  "geolocate/api-key",
		envvars.APIURL:    "http://127.0.0.1:8080",
	}
}

func TestLoadConfigDefaults(t *testing.T) {
	c, err := LoadConfig(envOf(baseEnv()))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		TableName: "results", SecretID: "geolocate/api-key", APIURL: "http://127.0.0.1:8080", KeyHeader: "X-Service-Key",
		ModelFallback: true, RatePerMinute: 30, MaxConcurrency: 2, Pacing: PacingShared, ClaimLease: 15 * time.Minute,
		MetricNamespace: metricnames.DefaultNamespace, PipelineName: "local", LogLevel: "info",
		MaxImageBytes: 10_000_000, FinishReserve: DefaultFinishReserve,
		ExifGPS: ExifGPSPredict, Oversize: OversizeDownscale, DownscaleMaxSide: 4096, MemoryMB: DefaultMemoryMB,
		UploadMetadata: UploadMetadataStrip, MaxServerDelay: 5 * time.Minute, ReuseResults: ReuseContent,
	}
	if c != want {
		t.Errorf("config = %+v\nwant     %+v", c, want)
	}
	if got := c.PerInstanceRate(); got != 15 {
		t.Errorf("per-instance rate = %v, want 15", got)
	}
	if got := c.ExpectedCost(); got != 1 {
		t.Errorf("expected cost without a model = %d, want 1", got)
	}
}

func TestLoadConfigAllSet(t *testing.T) {
	env := baseEnv()
	for k, v := range map[string]string{
		envvars.TopN: "7", envvars.ModelID: "geo-ha-v2", envvars.ModelFallback: "false",
		envvars.RatePerMinute: "120", envvars.MaxConcurrency: "4", envvars.DailyBudget: "500",
		envvars.ClaimLease: "2m", envvars.RecordTTLDays: "30", envvars.BucketName: "uploads",
		envvars.MetricNamespace: "Geo/Test", envvars.PipelineName: "prod", envvars.LogLevel: "DEBUG",
		envvars.MaxImageBytes: "10485760", envvars.MaxReceiveCount: "5", envvars.FinishReserve: "20s",
		envvars.Pacing: "Instance", envvars.ExifGPS: "Skip", envvars.Oversize: "reject", envvars.DownscaleMaxSide: "2048",
		envvars.MaxServerDelay: "90",
		envvars.UploadMetadata: "Keep", envvars.APIKeyHeader: "X-Geo-Api-Key",
		envvars.ReuseResults: "Off", envvars.ReuseMaxAgeDays: "30",
	} {
		env[k] = v
	}
	c, err := LoadConfig(envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	if c.TopN != 7 || c.ModelID != "geo-ha-v2" || c.ModelFallback || c.RatePerMinute != 120 ||
		c.MaxConcurrency != 4 || c.DailyBudget != 500 || c.ClaimLease != 2*time.Minute ||
		c.RecordTTL != 30*24*time.Hour || c.BucketName != "uploads" || c.MetricNamespace != "Geo/Test" ||
		c.PipelineName != "prod" || c.LogLevel != "debug" || c.MaxImageBytes != 10<<20 ||
		c.MaxReceiveCount != 5 || c.FinishReserve != 20*time.Second || c.Pacing != PacingInstance ||
		c.ExifGPS != ExifGPSSkip || c.Oversize != OversizeReject || c.DownscaleMaxSide != 2048 ||
		c.MaxServerDelay != 90*time.Second || c.UploadMetadata != UploadMetadataKeep || c.KeyHeader != "X-Geo-Api-Key" ||
		c.ReuseResults != ReuseOff || c.ReuseMaxAge != ledger.MaxAge(30*24*time.Hour) {
		t.Errorf("config = %+v", c)
	}
	if c.PerInstanceRate() != 30 || c.ExpectedCost() != 3 {
		t.Errorf("rate %v cost %d", c.PerInstanceRate(), c.ExpectedCost())
	}
}

func TestLoadConfigErrorsNameTheVariable(t *testing.T) {
	tests := []struct {
		name, variable, value string
	}{
		{"missing table", envvars.TableName, ""},
		{"missing url", envvars.APIURL, ""},
		{"relative url", envvars.APIURL, "127.0.0.1:8080/v1"},
		{"ftp url", envvars.APIURL, "ftp://example.com"},
		{"zero image limit", envvars.MaxImageBytes, "0"},
		{"finish reserve too short", envvars.FinishReserve, "500ms"},
		{"negative receive count", envvars.MaxReceiveCount, "-1"},
		{"top_n zero", envvars.TopN, "0"},
		{"top_n too big", envvars.TopN, "16"},
		{"top_n not a number", envvars.TopN, "five"},
		{"fallback not a bool", envvars.ModelFallback, "maybe"},
		{"rate below one", envvars.RatePerMinute, "0.5"},
		{"rate NaN", envvars.RatePerMinute, "NaN"},
		{"concurrency zero", envvars.MaxConcurrency, "0"},
		{"concurrency too big", envvars.MaxConcurrency, "1001"},
		{"negative budget", envvars.DailyBudget, "-1"},
		{"lease too short", envvars.ClaimLease, "10s"},
		{"lease not a duration", envvars.ClaimLease, "15"},
		{"negative ttl", envvars.RecordTTLDays, "-3"},
		{"bad log level", envvars.LogLevel, "verbose"},
		{"unknown exif gps mode", envvars.ExifGPS, "trust"},
		{"unknown oversize mode", envvars.Oversize, "crop"},
		{"downscale side too small", envvars.DownscaleMaxSide, "511"},
		{"downscale side too big", envvars.DownscaleMaxSide, "16385"},
		{"downscale side not a number", envvars.DownscaleMaxSide, "4k"},
		{"server delay cap zero", envvars.MaxServerDelay, "0"},
		{"server delay cap beyond SQS's 12 hours", envvars.MaxServerDelay, "43201"},
		{"unknown upload metadata mode", envvars.UploadMetadata, "ignore"},
		{"unknown reuse mode", envvars.ReuseResults, "object"},
		{"negative reuse age", envvars.ReuseMaxAgeDays, "-1"},
		{"key header with a space", envvars.APIKeyHeader, "X Service Key"},
		{"key header reserved", envvars.APIKeyHeader, "Authorization"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := baseEnv()
			env[tt.variable] = tt.value
			_, err := LoadConfig(envOf(env))
			if err == nil {
				t.Fatalf("%s=%q: want error", tt.variable, tt.value)
			}
			if !strings.Contains(err.Error(), tt.variable) {
				t.Errorf("error %q does not name %s", err, tt.variable)
			}
		})
	}
}

func TestLoadConfigKeySource(t *testing.T) {
	env := baseEnv()
	delete(env, envvars.SecretID)
	if _, err := LoadConfig(envOf(env)); err == nil ||
		!strings.Contains(err.Error(), envvars.SecretID) || !strings.Contains(err.Error(), envvars.APIKey) {
		t.Errorf("no key source: err = %v", err)
	}

	env[envvars.APIKey] = "not_a_geo_key_value"
	_, err := LoadConfig(envOf(env))
	if err == nil || !strings.Contains(err.Error(), envvars.APIKey) {
		t.Fatalf("bad prefix: err = %v", err)
	}
	if strings.Contains(err.Error(), "not_a_geo_key_value") {
		t.Errorf("error echoes the key: %q", err)
	}

	env[envvars.APIKey] = fakeKey
	c, err := LoadConfig(envOf(env))
	if err != nil || c.APIKey != fakeKey || c.SecretID != "" {
		t.Errorf("local key: %+v, %v", c.SecretID, err)
	}
}
