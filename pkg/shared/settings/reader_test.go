package settings

import (
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

func envReader(env map[string]string) *Reader {
	return FromEnv(func(name string) string { return env[name] })
}

func TestEnvUnsetTakesTheTablesDefault(t *testing.T) {
	r := envReader(map[string]string{envvars.SecretID: "prod/geo"})
	if got := r.Int(RatePerMinute); got != 30 {
		t.Errorf("RatePerMinute = %d, want the table's 30", got)
	}
	if got := r.Bool(ModelFallback); !got {
		t.Error("ModelFallback default lost")
	}
	if got := r.String(Pacing); got != PacingShared {
		t.Errorf("Pacing = %q", got)
	}
	if got := r.Duration(FinishReserveSeconds, time.Second); got != 10*time.Second {
		t.Errorf("FinishReserve = %v, want 10s", got)
	}
	// An unset fact of the deployment is unknown, not the stack's default.
	if got := r.Int(BatchSize); got != 0 {
		t.Errorf("BatchSize = %d, want 0 (unknown)", got)
	}
	if got := r.Duration(PredictorTimeoutSeconds, time.Second); got != 0 {
		t.Errorf("FunctionTimeout = %v, want 0 (unknown)", got)
	}
	if got := r.Int(TopN); got != 0 {
		t.Errorf("TopN = %d, want 0 (the service's default)", got)
	}
	if got := r.StrDefault("X", "d"); got != "d" {
		t.Errorf("StrDefault = %q", got)
	}
	if got := r.DurationMin("X", time.Minute, time.Second); got != time.Minute {
		t.Errorf("DurationMin = %v", got)
	}
	if id, key := r.KeySource(); id != "prod/geo" || key != "" {
		t.Errorf("KeySource = %q, %q", id, key)
	}
	if err := r.Err(); err != nil {
		t.Errorf("Err = %v", err)
	}
}

func TestEnvReportsEveryBadVariable(t *testing.T) {
	const fakeKey = "not_a_geo_key_fake_1"
	r := envReader(map[string]string{
		envvars.TopN: "0", envvars.RatePerMinute: "NaN", envvars.ModelFallback: "maybe", envvars.FinishReserve: "1s",
		envvars.LogLevel: "loud", envvars.APIURL: "ftp://x", envvars.Pacing: "both", envvars.APIKey: fakeKey,
		envvars.FunctionTimeout: "15", envvars.MaxConcurrency: "0",
	})
	if got := r.String(Pacing); got != "" {
		t.Errorf("Pacing with a bad value = %q, want empty", got)
	}
	r.Int(TopN)
	r.Float(RatePerMinute)
	r.Bool(ModelFallback)
	r.Duration(FinishReserveSeconds, time.Second)
	r.Duration(PredictorTimeoutSeconds, time.Second)
	r.Int(MaxConcurrency)
	r.String(LogLevel)
	r.URL(APIURL)
	r.Required("R")
	r.KeySource()
	err := r.Err()
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		`GEO_TOP_N "0" is not allowed; want a whole number from 1 to 15`, `GEO_RATE_PER_MINUTE "NaN"`,
		"GEO_MODEL_FALLBACK \"maybe\" is not allowed; want true or false",
		"FINISH_RESERVE \"1s\" is not allowed; want a Go duration from 2s to 5m0s",
		"FUNCTION_TIMEOUT \"15\"", `GEO_MAX_CONCURRENCY "0" is not allowed; want a whole number from 1 to 1000`,
		"LOG_LEVEL \"loud\"", "GEO_API_URL must be an absolute http or https URL",
		"R is required", `GEO_PACING "both" is not allowed; want shared or instance`, envvars.APIKey + ` must start with "geo_"`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, fakeKey) {
		t.Errorf("error shows the key: %s", msg)
	}
}

func TestKeySourceNeedsOne(t *testing.T) {
	r := envReader(nil)
	r.KeySource()
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), envvars.SecretID+" or "+envvars.APIKey) {
		t.Errorf("Err = %v", err)
	}
	r = envReader(map[string]string{envvars.APIKey: "geo_test_fake_key_1"})
	if id, key := r.KeySource(); id != "" || key != "geo_test_fake_key_1" || r.Err() != nil {
		t.Errorf("local key: %q %q %v", id, key, r.Err())
	}
}

// TestContextNeedsWhatIsNotOptional: cdk.json holds every key, so a
// missing one is a mistake said as such; an optional one takes its default.
func TestContextNeedsWhatIsNotOptional(t *testing.T) {
	r := FromContext(func(string) any { return nil })
	r.Int(BatchSize)
	if got := r.String(ExifGPS); got != ExifGPSPredict {
		t.Errorf("unset exifGps = %q, want the default", got)
	}
	if got := r.String(APIKeyHeader); got == "" {
		t.Error("unset apiKeyHeader has no default")
	}
	want := `context key "batchSize": is missing; want a whole number from 1 to 10 (set it in cdk.json or pass -c batchSize=<value>)`
	if err := r.Err(); err == nil || err.Error() != want {
		t.Errorf("Err = %v\nwant %s", err, want)
	}
}

// TestEnvIsWhatTheFunctionsRead: the environment the stack writes from a
// context reads back, through FromEnv, as the same values.
func TestEnvIsWhatTheFunctionsRead(t *testing.T) {
	ctx := map[string]any{}
	for _, s := range All() {
		if s.Default != "" {
			ctx[s.Key] = s.Default
		}
	}
	ctx[APIURL.Key] = "https://geo.test.invalid/"
	ctx[TopN.Key] = 7.0 // as cdk.json gives numbers
	ctx[PredictorTimeoutSeconds.Key] = "300"
	r := FromContext(func(key string) any { return ctx[key] })
	for _, s := range All() {
		switch s {
		case APIURL:
			r.URL(s)
		case PredictorTimeoutSeconds, FinishReserveSeconds:
			r.Duration(s, time.Second)
		default:
			readByKind(r, s)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	predictor, monitor := r.Env(Predictor), r.Env(Monitor)
	for name, want := range map[string]string{
		envvars.APIURL: "https://geo.test.invalid", envvars.TopN: "7", envvars.FunctionTimeout: "5m0s",
		envvars.FinishReserve: "10s", envvars.LogLevel: "INFO", envvars.APIKeyHeader: "X-Service-Key",
	} {
		if predictor[name] != want {
			t.Errorf("predictor %s = %q, want %q", name, predictor[name], want)
		}
	}
	if _, ok := predictor[envvars.ModelID]; ok {
		t.Error("an empty modelId is written: unset must mean the service's default")
	}
	if _, ok := predictor[envvars.FunctionMemorySize]; ok {
		t.Error("the stack writes Lambda's reserved memory variable")
	}
	if _, ok := monitor[envvars.RatePerMinute]; ok || monitor[envvars.HistoryTTLDays] != "30" {
		t.Errorf("monitor env %v: a predictor setting, or no history TTL", monitor)
	}
	back := envReader(predictor)
	if got := back.Duration(PredictorTimeoutSeconds, time.Second); got != 5*time.Minute {
		t.Errorf("FUNCTION_TIMEOUT reads back as %v", got)
	}
	if got := back.Int(TopN); got != 7 {
		t.Errorf("GEO_TOP_N reads back as %d", got)
	}
	if err := back.Err(); err != nil {
		t.Error(err)
	}
}
