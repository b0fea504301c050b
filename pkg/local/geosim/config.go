package geosim

import (
	"fmt"
	"log/slog"
	"time"
)

// MaxImageBytes is the contract's 10 MB upload limit, read as SI megabytes
// (nothing in the contract says MiB): a file of exactly 10,000,000 bytes is
// accepted, one byte more is refused.
const MaxImageBytes int64 = 10_000_000

// BackendMaxImageBytes is the public backend's limit: 10 MiB.
const BackendMaxImageBytes int64 = 10 << 20

// Defaults used by New when the Config leaves a field at its zero value.
const (
	DefaultOrg       = "demo"
	DefaultAllowance = 1000
	DefaultKeyName   = "demo"
)

// Profile picks the answers to what the contract leaves unshown.
type Profile string

const (
	// ProfileContract (the default) answers as the contract says where it
	// says something, and as the public backend does where it is silent:
	// upper-case error codes in {"message_code","message","details"}, 400
	// for a file's size or type, the sliding-log limiter and its 429,
	// clusters with points, vehicle and property results, dotted model ids.
	// Keys are accepted on every endpoint and the success code is the
	// contract's "success".
	ProfileContract Profile = "contract"
	// ProfileBackend mirrors the public backend in full: it also refuses API
	// keys on every endpoint but predict (so the credit summary cannot be
	// read with a key), reads the key from BackendKeyHeader, answers
	// "SUCCESS", limits predictions to 30 per 60 s per key, counted only for
	// valid requests, accepts 10 MiB, and lists models in its own layout.
	ProfileBackend Profile = "backend"
)

// Profiles lists the profiles, for flags.
var Profiles = []Profile{ProfileContract, ProfileBackend}

// ParseProfile reads a profile name; "" is ProfileContract.
func ParseProfile(s string) (Profile, error) {
	switch Profile(s) {
	case "", ProfileContract:
		return ProfileContract, nil
	case ProfileBackend:
		return ProfileBackend, nil
	}
	return "", fmt.Errorf("unknown simulator profile %q: want %s or %s", s, ProfileContract, ProfileBackend)
}

// BackendKeyHeader is the key header of ProfileBackend. The public backend
// reads a product-specific name rather than the contract's X-Service-Key;
// this name stands for it, so that a client that cannot be configured
// fails against the profile as it would against the backend.
const BackendKeyHeader = "X-Geo-Api-Key"

// The public backend's rate limit: 30 predictions per 60 s per key.
const (
	BackendRateLimit  = 30
	BackendRateWindow = 60 * time.Second
)

// Limiter is the kind of rate limiter.
type Limiter string

const (
	// LimiterSlidingLog (the default) counts the calls of the last window
	// by their whole-second timestamps, as the public backend does with a
	// Redis sorted set: entries with a score at or below now-window are
	// dropped, the call is counted, and a refused call is removed again.
	LimiterSlidingLog Limiter = "sliding-log"
	// LimiterTokenBucket is a token bucket (golang.org/x/time/rate) of
	// RatePerMinute with RateBurst.
	LimiterTokenBucket Limiter = "token-bucket"
)

// ParseLimiter reads a limiter name; "" is LimiterSlidingLog.
func ParseLimiter(s string) (Limiter, error) {
	switch Limiter(s) {
	case "", LimiterSlidingLog:
		return LimiterSlidingLog, nil
	case LimiterTokenBucket:
		return LimiterTokenBucket, nil
	}
	return "", fmt.Errorf("unknown rate limiter %q: want %s or %s", s, LimiterSlidingLog, LimiterTokenBucket)
}

// Config configures a Server. Pass functions that edit it to New.
type Config struct {
	// Profile chooses the defaults below; ProfileContract when empty. An
	// option set explicitly wins over its profile's default.
	Profile Profile

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
	// KeyHeader is the request header the key is read from. Default the
	// contract's X-Service-Key; BackendKeyHeader in ProfileBackend.
	KeyHeader string
	// KeysOnlyOnPredict refuses a key on every endpoint but predict with
	// 401 UNAUTHORIZED "API keys not allowed for this endpoint", as the
	// public backend does. Default off; on in ProfileBackend.
	KeysOnlyOnPredict *bool

	// Limiter is the rate limiter's kind; LimiterSlidingLog when empty.
	Limiter Limiter
	// RatePerMinute is the request rate; 0 disables the limiter. The
	// sliding log allows floor(RatePerMinute) calls (at least 1) per window
	// of that many minutes' share, 60 s for a whole rate. ProfileBackend
	// defaults to 30.
	RatePerMinute float64
	// RateBurst is the token bucket's burst; default 1. The sliding log has
	// no burst setting: it lets a whole window's calls through at once.
	RateBurst int

	// Latency is added to every prediction (the model's "processing time"),
	// mainly to make the standalone server feel real.
	Latency time.Duration

	// Seed seeds the random source of fault injection. The same seed and the
	// same sequence of calls give the same faults.
	Seed uint64

	// MaxImageBytes overrides the upload limit. Default MaxImageBytes;
	// BackendMaxImageBytes in ProfileBackend.
	MaxImageBytes int64
	// KeepFiles keeps each uploaded file's bytes in its Call (tests only:
	// what the service received, for a metadata reader to inspect).
	KeepFiles bool

	// Now is the clock (rate limiter, storms, call records, the Date
	// header). Default time.Now.
	Now func() time.Time
	// ClockOffset moves the service's clock (Now) by this much: a service
	// whose clock is not the caller's. Everything that reads the clock
	// follows it, the Date header and the limiter's whole seconds included,
	// as they would on a real backend.
	ClockOffset time.Duration
	// Logger receives one structured line per call. Default discards.
	Logger *slog.Logger
}

// WithProfile selects a profile.
func WithProfile(p Profile) func(*Config) {
	return func(c *Config) { c.Profile = p }
}

// WithRateLimit sets a token bucket limit: perMinute with burst.
func WithRateLimit(perMinute float64, burst int) func(*Config) {
	return func(c *Config) { c.Limiter, c.RatePerMinute, c.RateBurst = LimiterTokenBucket, perMinute, burst }
}

// WithSlidingLog sets the sliding-log limit: perMinute calls a minute,
// counted over a window of whole seconds.
func WithSlidingLog(perMinute float64) func(*Config) {
	return func(c *Config) { c.Limiter, c.RatePerMinute = LimiterSlidingLog, perMinute }
}

// WithKeysOnlyOnPredict sets whether keys are refused off predict.
func WithKeysOnlyOnPredict(on bool) func(*Config) {
	return func(c *Config) { c.KeysOnlyOnPredict = &on }
}

// WithKeyHeader sets the header the key is read from.
func WithKeyHeader(name string) func(*Config) {
	return func(c *Config) { c.KeyHeader = name }
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

// WithClockOffset sets the service's clock offset from its Now.
func WithClockOffset(d time.Duration) func(*Config) {
	return func(c *Config) { c.ClockOffset = d }
}

func (c *Config) backend() bool { return c.Profile == ProfileBackend }

func (c *Config) setDefaults() {
	if c.Profile == "" {
		c.Profile = ProfileContract
	}
	if c.Org == "" {
		c.Org = DefaultOrg
	}
	if c.NoCredits {
		c.Allowance = 0
	} else if c.Allowance == 0 {
		c.Allowance = DefaultAllowance
	}
	if c.KeyHeader == "" {
		c.KeyHeader = KeyHeader
		if c.backend() {
			c.KeyHeader = BackendKeyHeader
		}
	}
	if c.KeysOnlyOnPredict == nil {
		on := c.backend()
		c.KeysOnlyOnPredict = &on
	}
	if c.Limiter == "" {
		c.Limiter = LimiterSlidingLog
		if c.RatePerMinute == 0 && c.backend() {
			c.RatePerMinute = BackendRateLimit * float64(time.Minute) / float64(BackendRateWindow)
		}
	}
	if c.RatePerMinute > 0 && c.RateBurst <= 0 {
		c.RateBurst = 1
	}
	if c.MaxImageBytes <= 0 {
		c.MaxImageBytes = MaxImageBytes
		if c.backend() {
			c.MaxImageBytes = BackendMaxImageBytes
		}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if off := c.ClockOffset; off != 0 {
		now := c.Now
		c.Now = func() time.Time { return now().Add(off) }
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}
