package geosim

import (
	"log/slog"
	"time"
)

// MaxImageBytes is the contract's 10 MB upload limit, read as SI megabytes
// (nothing in the contract says MiB): a file of exactly 10,000,000 bytes is
// accepted, one byte more is rejected with 413.
const MaxImageBytes int64 = 10_000_000

// Defaults used by New when the Config leaves a field at its zero value.
const (
	DefaultOrg       = "demo"
	DefaultAllowance = 1000
	DefaultKeyName   = "demo"
)

// Config configures a Server. Pass functions that edit it to New.
type Config struct {
	// Org is the organisation created at start, with a key named
	// DefaultKeyName (see Server.DemoKey). Default "demo".
	Org string
	// Allowance is Org's monthly subscription allowance. Default 1000; set
	// NoCredits to start with none.
	Allowance int
	// TopUp is Org's starting top-up balance.
	TopUp int
	// NoCredits starts Org with a zero allowance (Allowance is ignored).
	NoCredits bool
	// DemoKey, if set, is used as the value of Org's key instead of a random
	// one. It must start with "geo_" and should read as obviously fake.
	DemoKey string

	// RatePerMinute is the per-account request rate; 0 disables the limiter.
	RatePerMinute float64
	// RateBurst is the limiter's burst; default 1 when RatePerMinute > 0.
	RateBurst int

	// Latency is added to every prediction (the model's "processing time"),
	// mainly to make the standalone server feel real.
	Latency time.Duration

	// Seed seeds the random source of fault injection. The same seed and the
	// same sequence of calls give the same faults.
	Seed uint64

	// MaxImageBytes overrides the upload limit (tests only). Default
	// MaxImageBytes.
	MaxImageBytes int64
	// KeepFiles keeps each uploaded file's bytes in its Call (tests only:
	// what the service received, for a metadata reader to inspect).
	KeepFiles bool

	// Now is the clock (rate limiter, storms, call records). Default time.Now.
	Now func() time.Time
	// Logger receives one structured line per call. Default discards.
	Logger *slog.Logger
}

// WithRateLimit sets the per-account rate limit.
func WithRateLimit(perMinute float64, burst int) func(*Config) {
	return func(c *Config) { c.RatePerMinute, c.RateBurst = perMinute, burst }
}

// WithLatency sets the latency added to every prediction.
func WithLatency(d time.Duration) func(*Config) {
	return func(c *Config) { c.Latency = d }
}

// WithSeed seeds the fault injection random source.
func WithSeed(seed uint64) func(*Config) {
	return func(c *Config) { c.Seed = seed }
}

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) func(*Config) {
	return func(c *Config) { c.Logger = l }
}

// WithClock sets the clock.
func WithClock(now func() time.Time) func(*Config) {
	return func(c *Config) { c.Now = now }
}

func (c *Config) setDefaults() {
	if c.Org == "" {
		c.Org = DefaultOrg
	}
	if c.NoCredits {
		c.Allowance = 0
	} else if c.Allowance == 0 {
		c.Allowance = DefaultAllowance
	}
	if c.RatePerMinute > 0 && c.RateBurst <= 0 {
		c.RateBurst = 1
	}
	if c.MaxImageBytes <= 0 {
		c.MaxImageBytes = MaxImageBytes
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}
