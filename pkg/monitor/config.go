package monitor

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/envvars"
	"github.com/geolocate-aws/geolocate/pkg/metricnames"
)

// Defaults applied by ConfigFromEnv.
const (
	DefaultPipelineName   = "local"
	DefaultHistoryTTLDays = 14
	DefaultHistoryWindow  = 24 * time.Hour
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
	// Namespace and PipelineName place the metrics: every metric carries
	// the dimension Pipeline = PipelineName.
	Namespace    string
	PipelineName string
	// LogLevel is debug, info, warn or error.
	LogLevel string
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

// ConfigFromEnv reads and validates the configuration. getenv is usually
// os.Getenv. Every error names the variable at fault and never its value
// when that value could be a key.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	get := func(name string) string { return strings.TrimSpace(getenv(name)) }
	c := Config{
		TableName:     get(envvars.TableName),
		SecretID:      get(envvars.SecretID),
		APIKey:        get(envvars.APIKey),
		APIURL:        get(envvars.APIURL),
		ModelID:       get(envvars.ModelID),
		CreditsPath:   get(envvars.CreditsPath),
		HistoryTTL:    DefaultHistoryTTLDays * 24 * time.Hour,
		HistoryWindow: DefaultHistoryWindow,
		Namespace:     get(envvars.MetricNamespace),
		PipelineName:  get(envvars.PipelineName),
		LogLevel:      strings.ToLower(get(envvars.LogLevel)),
	}
	if c.Namespace == "" {
		c.Namespace = metricnames.DefaultNamespace
	}
	if c.PipelineName == "" {
		c.PipelineName = DefaultPipelineName
	}

	var errs []error
	if err := validateURL(c.APIURL); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", envvars.APIURL, err))
	}
	switch {
	case c.SecretID != "":
		c.APIKey = "" // the secret wins; never keep a second key around
	case c.APIKey == "":
		errs = append(errs, fmt.Errorf("%s or %s: one is required (the secret in AWS, the key itself locally)", envvars.SecretID, envvars.APIKey))
	case !strings.HasPrefix(c.APIKey, "geo_"):
		errs = append(errs, fmt.Errorf("%s: not a service key (must start with geo_)", envvars.APIKey))
	}
	if raw := get(envvars.HistoryTTLDays); raw != "" {
		days, err := strconv.Atoi(raw)
		if err != nil || days <= 0 {
			errs = append(errs, fmt.Errorf("%s: %q is not a positive whole number of days", envvars.HistoryTTLDays, raw))
		} else {
			c.HistoryTTL = time.Duration(days) * 24 * time.Hour
		}
	}
	switch c.LogLevel {
	case "", "debug", "info", "warn", "warning", "error":
	default:
		errs = append(errs, fmt.Errorf("%s: %q is not one of debug, info, warn, error", envvars.LogLevel, c.LogLevel))
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, fmt.Errorf("monitor configuration: %w", err)
	}
	return c, nil
}

func validateURL(raw string) error {
	if raw == "" {
		return errors.New("required (the service base URL)")
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("must be an absolute http or https URL")
	}
	return nil
}
