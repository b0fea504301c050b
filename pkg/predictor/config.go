package predictor

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/envvars"
	"github.com/geolocate-aws/geolocate/pkg/metricnames"
)

// Defaults of the optional settings.
const (
	DefaultRatePerMinute  = 60
	DefaultMaxConcurrency = 2
	DefaultClaimLease     = 15 * time.Minute
	DefaultPipelineName   = "local"
	DefaultLogLevel       = "info"

	// MinClaimLease keeps a lease longer than any plausible single call, so
	// a slow but healthy attempt is never mistaken for a crashed one.
	MinClaimLease = 30 * time.Second
)

// Config is the predictor's configuration, read from the environment at cold
// start by LoadConfig.
type Config struct {
	TableName string // results table
	SecretID  string // Secrets Manager id of the key; empty when APIKey is used
	APIKey    string // local runs only: the key itself (never logged)
	APIURL    string // service base URL

	TopN          int    // 0: not sent (service default); else 1..15
	ModelID       string // "": not sent (the default model, recommended)
	ModelFallback bool   // fall back to the default model when ModelID is retired

	RatePerMinute  float64 // account-wide requests per minute
	MaxConcurrency int     // the queue event source's maximum concurrency

	DailyBudget int           // credits per UTC day; 0: no budget
	ClaimLease  time.Duration // how long an in-progress claim blocks others
	RecordTTL   time.Duration // 0: records never expire

	BucketName      string // "": accept every bucket
	MetricNamespace string
	PipelineName    string
	LogLevel        string
}

// PerInstanceRate is the rate, in requests per minute, one function instance
// may use: the account's rate shared among the queue's concurrent instances.
func (c Config) PerInstanceRate() float64 {
	return c.RatePerMinute / float64(c.MaxConcurrency)
}

// ExpectedCost is the credits one call is assumed to cost before it is made,
// for the daily budget: the default model is a global one (1 credit); a
// configured model may be any type, so the dearest (3) is reserved and the
// unused part released after the call.
func (c Config) ExpectedCost() int {
	if c.ModelID == "" {
		return 1
	}
	return 3
}

// LoadConfig reads and validates the configuration through getenv (os.Getenv
// in the function). The error names the offending variable and what it
// accepts. It never includes the API key.
func LoadConfig(getenv func(string) string) (Config, error) {
	p := envParser{getenv: getenv}
	c := Config{
		TableName:       p.required(envvars.TableName),
		SecretID:        p.str(envvars.SecretID),
		APIKey:          strings.TrimSpace(getenv(envvars.APIKey)),
		APIURL:          p.url(envvars.APIURL),
		TopN:            p.intRange(envvars.TopN, 0, 1, 15),
		ModelID:         p.str(envvars.ModelID),
		ModelFallback:   p.boolean(envvars.ModelFallback, true),
		RatePerMinute:   p.floatMin(envvars.RatePerMinute, DefaultRatePerMinute, 1),
		MaxConcurrency:  p.intRange(envvars.MaxConcurrency, DefaultMaxConcurrency, 1, 1000),
		DailyBudget:     p.intRange(envvars.DailyBudget, 0, 0, 1_000_000_000),
		ClaimLease:      p.durationMin(envvars.ClaimLease, DefaultClaimLease, MinClaimLease),
		RecordTTL:       time.Duration(p.intRange(envvars.RecordTTLDays, 0, 0, 36500)) * 24 * time.Hour,
		BucketName:      p.str(envvars.BucketName),
		MetricNamespace: p.strDefault(envvars.MetricNamespace, metricnames.DefaultNamespace),
		PipelineName:    p.strDefault(envvars.PipelineName, DefaultPipelineName),
		LogLevel:        p.logLevel(envvars.LogLevel),
	}
	if p.err != nil {
		return Config{}, p.err
	}
	if c.SecretID == "" && c.APIKey == "" {
		return Config{}, fmt.Errorf("config: set %s (Secrets Manager id of the API key) or, for local runs, %s",
			envvars.SecretID, envvars.APIKey)
	}
	if c.SecretID == "" && !strings.HasPrefix(c.APIKey, "geo_") {
		// The value itself is never echoed: it is a secret.
		return Config{}, fmt.Errorf("config: %s must start with \"geo_\"", envvars.APIKey)
	}
	return c, nil
}

// envParser collects the first error while reading variables, so LoadConfig
// reads like a list of fields.
type envParser struct {
	getenv func(string) string
	err    error
}

func (p *envParser) fail(name, format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("config: %s %s", name, fmt.Sprintf(format, args...))
	}
}

func (p *envParser) str(name string) string { return strings.TrimSpace(p.getenv(name)) }

func (p *envParser) strDefault(name, def string) string {
	if v := p.str(name); v != "" {
		return v
	}
	return def
}

func (p *envParser) required(name string) string {
	v := p.str(name)
	if v == "" {
		p.fail(name, "is required")
	}
	return v
}

func (p *envParser) url(name string) string {
	v := p.required(name)
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil {
		p.fail(name, "must be an absolute http or https URL: %v", err)
	} else if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.fail(name, "must be an absolute http or https URL, got %q", u.Redacted())
	}
	return v
}

func (p *envParser) intRange(name string, def, lo, hi int) int {
	v := p.str(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		p.fail(name, "must be an integer from %d to %d, got %q", lo, hi, v)
		return def
	}
	return n
}

func (p *envParser) floatMin(name string, def, lo float64) float64 {
	v := p.str(name)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < lo || f != f || f > 1e9 {
		p.fail(name, "must be a number of at least %g, got %q", lo, v)
		return def
	}
	return f
}

func (p *envParser) boolean(name string, def bool) bool {
	v := p.str(name)
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.fail(name, "must be true or false, got %q", v)
		return def
	}
	return b
}

func (p *envParser) durationMin(name string, def, lo time.Duration) time.Duration {
	v := p.str(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < lo {
		p.fail(name, "must be a Go duration of at least %s (e.g. 15m), got %q", lo, v)
		return def
	}
	return d
}

func (p *envParser) logLevel(name string) string {
	v := strings.ToLower(p.str(name))
	switch v {
	case "":
		return DefaultLogLevel
	case "debug", "info", "warn", "warning", "error":
		return v
	}
	p.fail(name, "must be one of debug, info, warn, error, got %q", v)
	return DefaultLogLevel
}
