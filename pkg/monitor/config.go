package monitor

import (
	"fmt"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// Defaults applied by LoadConfig.
const (
	DefaultPipelineName  = "local"
	DefaultHistoryWindow = 24 * time.Hour
	// DefaultRecordSettle is how old a record must be before the credit
	// estimate counts it: the by-status index is eventually consistent, and
	// a record not yet in it when the tally passes its time would never be
	// counted. A record younger is counted by the next run.
	DefaultRecordSettle = 30 * time.Second
)

// Config is the monitor's configuration, read once at cold start.
type Config struct {
	// TableName is the results table that also holds the credit history.
	// Empty disables the history and therefore the forecast (local runs
	// without DynamoDB); the monitor logs a warning each run.
	TableName string
	// SecretID names the Secrets Manager secret holding the key. It wins
	// over APIKey when both are set.
	SecretID string
	// APIKey is the key itself, for local runs only. Never log it.
	APIKey string
	// APIURL is the service base URL.
	APIURL string
	// KeyHeader is the request header carrying the key.
	KeyHeader string
	// ModelID is the configured model; empty means the service's default
	// model (the recommended path).
	ModelID string
	// CreditsPath is an optional dotted JSON path to "remaining credits" in
	// the credit summary, for layouts the client does not recognise.
	CreditsPath string
	// HistoryTTL is how long a credit reading is kept before DynamoDB
	// expires it.
	HistoryTTL time.Duration
	// HistoryWindow is how far back the forecast looks. It has no
	// environment variable; DefaultHistoryWindow unless set in code.
	HistoryWindow time.Duration
	// RecordSettle is how old a record must be for the credit estimate to
	// count it. No environment variable; DefaultRecordSettle unless set in
	// code (a local run on DynamoDB Local, whose index is consistent, sets 0).
	RecordSettle time.Duration
	// Namespace and PipelineName place the metrics: every metric carries
	// the dimension Pipeline = PipelineName.
	Namespace    string
	PipelineName string
	// LogLevel is debug, info, warn or error.
	LogLevel string
	// EventBus is the bus the Model Available events go to (the stack's
	// result events bus); empty publishes none.
	EventBus string
}

// String describes the configuration without the key, so it is safe to log.
func (c Config) String() string {
	key := "unset"
	switch {
	case c.SecretID != "":
		key = "secret " + c.SecretID
	case c.APIKey != "":
		key = "environment (redacted)"
	}
	return fmt.Sprintf("api=%s key=%s model=%q table=%q pipeline=%q namespace=%q",
		c.APIURL, key, c.ModelID, c.TableName, c.PipelineName, c.Namespace)
}

// LoadConfig reads and validates the configuration. getenv is usually
// os.Getenv; a setting's variable left unset takes the table's default
// (pkg/shared/settings), the stack's. Every error names the variable at fault and never its value
// when that value could be a key.
func LoadConfig(getenv func(string) string) (Config, error) {
	r := settings.FromEnv(getenv)
	secretID, apiKey := r.KeySource()
	c := Config{
		TableName:     r.Str(envvars.TableName),
		SecretID:      secretID,
		APIKey:        apiKey,
		APIURL:        r.URL(settings.APIURL),
		KeyHeader:     r.String(settings.APIKeyHeader),
		ModelID:       r.String(settings.ModelID),
		CreditsPath:   r.String(settings.CreditsPath),
		HistoryTTL:    r.Duration(settings.HistoryTTLDays, 24*time.Hour),
		HistoryWindow: DefaultHistoryWindow,
		RecordSettle:  DefaultRecordSettle,
		Namespace:     r.StrDefault(envvars.MetricNamespace, metricnames.DefaultNamespace),
		PipelineName:  r.StrDefault(envvars.PipelineName, DefaultPipelineName),
		LogLevel:      strings.ToLower(r.String(settings.LogLevel)),
		EventBus:      r.Str(envvars.EventBusName),
	}
	if err := r.Err(); err != nil {
		return Config{}, fmt.Errorf("monitor configuration: %w", err)
	}
	return c, nil
}
