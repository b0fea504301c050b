package monitor

import (
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

const fakeKey = "geo_test_fake_key_1"

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadConfigDefaults(t *testing.T) {
	c, err := LoadConfig(envOf(map[string]string{
		"GEO_API_URL": "http://127.0.0.1:8080",
		"GEO_API_KEY": fakeKey,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.PipelineName != "local" || c.Namespace != metricnames.DefaultNamespace {
		t.Errorf("pipeline=%q namespace=%q", c.PipelineName, c.Namespace)
	}
	// The stack's default (cdk.json historyTtlDays); the monitor's own 14
	// had drifted from it.
	if c.HistoryTTL != 30*24*time.Hour || c.HistoryWindow != 24*time.Hour {
		t.Errorf("ttl=%v window=%v", c.HistoryTTL, c.HistoryWindow)
	}
	if c.TableName != "" || c.ModelID != "" {
		t.Errorf("unexpected table %q model %q", c.TableName, c.ModelID)
	}
	if strings.Contains(c.String(), fakeKey) {
		t.Errorf("String() shows the key: %s", c)
	}
}

func TestLoadConfigAll(t *testing.T) {
	c, err := LoadConfig(envOf(map[string]string{
		"GEO_API_URL":        "https://geo.example.test",
		"GEO_SECRET_ID":      "geolocate/api-key",
		"GEO_API_KEY":        fakeKey,
		"TABLE_NAME":         "results",
		"GEO_MODEL_ID":       "geo-global-v2",
		"GEO_CREDITS_PATH":   "data.summary.total_available",
		"HISTORY_TTL_DAYS":   "3",
		"METRIC_NAMESPACE":   "Geo/Test",
		"PIPELINE_NAME":      "prod",
		"LOG_LEVEL":          "DEBUG",
		"GEO_API_KEY_HEADER": "X-Geo-Api-Key",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		TableName: "results", SecretID: "geolocate/api-key", APIURL: "https://geo.example.test", KeyHeader: "X-Geo-Api-Key",
		ModelID: "geo-global-v2", CreditsPath: "data.summary.total_available",
		HistoryTTL: 3 * 24 * time.Hour, HistoryWindow: 24 * time.Hour, RecordSettle: DefaultRecordSettle,
		Namespace: "Geo/Test", PipelineName: "prod", LogLevel: "debug",
	}
	if c != want {
		t.Errorf("config =\n%+v\nwant\n%+v", c, want)
	}
}

func TestLoadConfigErrorsNameTheVariable(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"nothing set", map[string]string{}, []string{"GEO_API_URL", "GEO_SECRET_ID or GEO_API_KEY"}},
		{"relative url", map[string]string{"GEO_API_URL": "localhost:8080", "GEO_API_KEY": fakeKey}, []string{"GEO_API_URL"}},
		{"bad key prefix", map[string]string{"GEO_API_URL": "http://127.0.0.1:1", "GEO_API_KEY": "sk_test_fake_key"}, []string{"GEO_API_KEY", "geo_"}},
		{"bad ttl", map[string]string{"GEO_API_URL": "http://127.0.0.1:1", "GEO_API_KEY": fakeKey, "HISTORY_TTL_DAYS": "0"}, []string{"HISTORY_TTL_DAYS"}},
		{"ttl not a number", map[string]string{"GEO_API_URL": "http://127.0.0.1:1", "GEO_API_KEY": fakeKey, "HISTORY_TTL_DAYS": "2w"}, []string{"HISTORY_TTL_DAYS"}},
		{"bad log level", map[string]string{"GEO_API_URL": "http://127.0.0.1:1", "GEO_API_KEY": fakeKey, "LOG_LEVEL": "loud"}, []string{"LOG_LEVEL"}},
		{"bad key header", map[string]string{"GEO_API_URL": "http://127.0.0.1:1", "GEO_API_KEY": fakeKey, "GEO_API_KEY_HEADER": "X Key"}, []string{"GEO_API_KEY_HEADER"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadConfig(envOf(tt.env))
			if err == nil {
				t.Fatal("want error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if strings.Contains(err.Error(), fakeKey) || strings.Contains(err.Error(), "sk_test_fake_key") {
				t.Errorf("error shows the key: %v", err)
			}
		})
	}
}
