package predictor

import (
	"fmt"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/photo/downscale"
	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
	"github.com/geolocate-aws/geolocate/pkg/shared/configrules"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// Defaults of the optional settings.
const (
	// DefaultRatePerMinute is the rate a public implementation of the
	// service allows per key; the contract gives no figure.
	DefaultRatePerMinute  = 30
	DefaultMaxConcurrency = 2
	DefaultClaimLease     = 15 * time.Minute
	DefaultPipelineName   = "local"

	// MinClaimLease keeps a lease longer than any plausible single call, so
	// a slow but healthy attempt is never mistaken for a crashed one.
	MinClaimLease = 30 * time.Second

	// DefaultMaxServerDelay is the default cap on a delay the service asks
	// for: long enough for a limiter's whole window (the public backend's
	// is 60 s), short enough that a bogus one parks nothing for long.
	DefaultMaxServerDelay = 5 * time.Minute
	// MaxMaxServerDelay is SQS's 12 hours: no message can wait longer.
	MaxMaxServerDelay = 12 * time.Hour

	// DefaultFinishReserve is the time kept before Lambda's deadline to
	// record the outcome of a call: the paid call is cut off when it starts.
	// Lambda freezes the environment at the deadline, so a write that has not
	// finished by then is lost.
	DefaultFinishReserve = 10 * time.Second
	// MinFinishReserve leaves room for one ledger write and its retries.
	MinFinishReserve = 2 * time.Second
)

// Config is the predictor's configuration, read from the environment at cold
// start by LoadConfig.
type Config struct {
	TableName string // results table
	SecretID  string // Secrets Manager id of the key; empty when APIKey is used
	APIKey    string // local runs only: the key itself (never logged)
	APIURL    string // service base URL
	KeyHeader string // the request header carrying the key (GEO_API_KEY_HEADER)

	TopN          int    // 0: not sent (service default); else 1..15
	ModelID       string // "": not sent (the default model, recommended)
	ModelFallback bool   // fall back to the default model when ModelID is retired

	RatePerMinute  float64 // account-wide requests per minute
	MaxConcurrency int     // the queue event source's maximum concurrency
	Pacing         string  // PacingShared or PacingInstance

	DailyBudget int           // credits per UTC day; 0: no budget
	ClaimLease  time.Duration // how long an in-progress claim blocks others
	RecordTTL   time.Duration // 0: records never expire

	BucketName      string // "": accept every bucket
	MaxImageBytes   int64  // the service's upload limit (imageformat.DefaultMaxImageBytes)
	MaxReceiveCount int    // the queue's redrive maxReceiveCount; 0: unknown
	// FinishReserve is kept before the invocation's deadline to record the
	// outcome: every call and retry ends by deadline - FinishReserve.
	FinishReserve   time.Duration
	MetricNamespace string
	PipelineName    string
	LogLevel        string

	// ExifGPS says what a valid EXIF GPS position is used for: ExifGPSPredict,
	// ExifGPSSkip or ExifGPSIgnore.
	ExifGPS string
	// Oversize says what becomes of a photo over MaxImageBytes:
	// OversizeDownscale or OversizeReject.
	Oversize string
	// DownscaleMaxSide is the longest side, in pixels, of a downscaled photo.
	DownscaleMaxSide int
	// MaxServerDelay caps every delay the service asks for (a 429's or a
	// 503's, in any form): the client, the shared schedule and the
	// returned messages wait at most this long for it.
	MaxServerDelay time.Duration
	// MemoryMB is the function's memory (AWS_LAMBDA_FUNCTION_MEMORY_SIZE):
	// a photo whose downscale would not fit in it with headroom is refused
	// from its header (see downscale.MemoryBudget).
	MemoryMB int
	// UploadMetadata says what of a photo's metadata reaches the service:
	// UploadMetadataStrip or UploadMetadataKeep.
	UploadMetadata string
	// ReuseResults says whether an answer is reused for every object with
	// the same content and request: ReuseContent or ReuseOff.
	ReuseResults string
	// ReuseMaxAge is the oldest answer reused; ledger.NoMaxAge (0, the
	// default) reuses an answer whatever its age.
	ReuseMaxAge ledger.MaxAge
}

// DefaultMemoryMB is the stack's default predictor memory (cdk.json
// predictorMemoryMb), for a process Lambda did not start.
const DefaultMemoryMB = 512

// DownscaleOptions are the downscaler's limits under this configuration
// (a zero MemoryMB is DefaultMemoryMB).
func (c Config) DownscaleOptions() downscale.Options {
	mb := c.MemoryMB
	if mb <= 0 {
		mb = DefaultMemoryMB
	}
	return downscale.Options{
		MaxSide:      c.DownscaleMaxSide,
		MaxBytes:     c.MaxImageBytes,
		MemoryBudget: downscale.MemoryBudget(int64(mb) << 20),
	}
}

// Upload metadata modes (GEO_UPLOAD_METADATA).
const (
	// UploadMetadataStrip blanks the photo's metadata (EXIF but its
	// orientation, XMP, IPTC, comments, trailers) in the stream to the
	// service, without re-encoding; a photo it cannot strip is rejected
	// (cannot_strip_metadata) before any credit is spent.
	UploadMetadataStrip = "strip"
	// UploadMetadataKeep sends the object as stored, metadata and all.
	UploadMetadataKeep = "keep"
)

// EXIF GPS modes (GEO_EXIF_GPS).
const (
	// ExifGPSPredict calls the service for every photo and, when the photo
	// carries a valid EXIF position, records both and the distance between
	// them: the accuracy figures.
	ExifGPSPredict = "predict"
	// ExifGPSSkip records a photo with a valid EXIF position from EXIF alone
	// (source exif, 0 credits), without a call.
	ExifGPSSkip = "skip"
	// ExifGPSIgnore neither records nor uses the EXIF position (capture time
	// and camera are still recorded).
	ExifGPSIgnore = "ignore"
)

// keepMetadata reports whether photos are sent with their metadata: only
// when the operator said so; any other value, the zero one included, strips.
func (c Config) keepMetadata() bool { return c.UploadMetadata == UploadMetadataKeep }

// Oversize modes (GEO_OVERSIZE).
const (
	// OversizeDownscale re-encodes a JPEG, PNG or WebP over the limit as a
	// JPEG under it and sends that.
	OversizeDownscale = "downscale"
	// OversizeReject rejects every photo over the limit (too_large).
	OversizeReject = "reject"
)

// DefaultDownscaleMaxSide is the default longest side of a downscaled photo.
const DefaultDownscaleMaxSide = downscale.DefaultMaxSide

// MinDownscaleMaxSide keeps a downscaled photo useful to a geolocation model:
// below 512 px the signs and skyline details it reads are gone.
const MinDownscaleMaxSide = 512

// Pacing modes (GEO_PACING).
const (
	// PacingShared paces every instance through one schedule in the table.
	PacingShared = "shared"
	// PacingInstance paces each instance alone at R/N.
	PacingInstance = "instance"
)

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
	p := envvars.NewParser(getenv)
	secretID, apiKey := p.KeySource()
	c := Config{
		TableName:       p.Required(envvars.TableName),
		SecretID:        secretID,
		APIKey:          apiKey,
		APIURL:          p.URL(envvars.APIURL),
		KeyHeader:       p.KeyHeader(envvars.APIKeyHeader),
		TopN:            p.IntRange(envvars.TopN, 0, 1, 15),
		ModelID:         p.Str(envvars.ModelID),
		ModelFallback:   p.Bool(envvars.ModelFallback, true),
		RatePerMinute:   p.FloatMin(envvars.RatePerMinute, DefaultRatePerMinute, 1),
		MaxConcurrency:  p.IntRange(envvars.MaxConcurrency, DefaultMaxConcurrency, 1, 1000),
		Pacing:          p.OneOf(envvars.Pacing, PacingShared, PacingShared, PacingInstance),
		DailyBudget:     p.IntRange(envvars.DailyBudget, 0, 0, 1_000_000_000),
		ClaimLease:      p.DurationMin(envvars.ClaimLease, DefaultClaimLease, MinClaimLease),
		RecordTTL:       time.Duration(p.IntRange(envvars.RecordTTLDays, 0, 0, 36500)) * 24 * time.Hour,
		BucketName:      p.Str(envvars.BucketName),
		MaxImageBytes:   int64(p.IntRange(envvars.MaxImageBytes, int(imageformat.DefaultMaxImageBytes), 1, 100<<20)),
		MaxReceiveCount: p.IntRange(envvars.MaxReceiveCount, 0, 0, 1000),
		FinishReserve:   p.DurationMin(envvars.FinishReserve, DefaultFinishReserve, MinFinishReserve),
		MetricNamespace: p.StrDefault(envvars.MetricNamespace, metricnames.DefaultNamespace),
		PipelineName:    p.StrDefault(envvars.PipelineName, DefaultPipelineName),
		LogLevel:        p.LogLevel(envvars.LogLevel),

		ExifGPS:          p.OneOf(envvars.ExifGPS, ExifGPSPredict, ExifGPSPredict, ExifGPSSkip, ExifGPSIgnore),
		Oversize:         p.OneOf(envvars.Oversize, OversizeDownscale, OversizeDownscale, OversizeReject),
		DownscaleMaxSide: p.IntRange(envvars.DownscaleMaxSide, DefaultDownscaleMaxSide, MinDownscaleMaxSide, 16384),
		MaxServerDelay: time.Duration(p.IntRange(envvars.MaxServerDelay,
			int(DefaultMaxServerDelay/time.Second), 1, int(MaxMaxServerDelay/time.Second))) * time.Second,
		MemoryMB:       p.IntRange(envvars.FunctionMemorySize, DefaultMemoryMB, 128, 10240),
		UploadMetadata: p.OneOf(envvars.UploadMetadata, UploadMetadataStrip, UploadMetadataStrip, UploadMetadataKeep),
		ReuseResults:   p.OneOf(envvars.ReuseResults, ReuseContent, ReuseContent, ReuseOff),
		ReuseMaxAge:    ledger.MaxAge(time.Duration(p.IntRange(envvars.ReuseMaxAgeDays, 0, 0, 36500)) * 24 * time.Hour),
	}
	checkRules(p, c)
	if err := p.Err(); err != nil {
		return Config{}, fmt.Errorf("predictor configuration: %w", err)
	}
	return c, nil
}

// ruleNames are the variables of the settings configrules judges.
var ruleNames = configrules.Names{
	configrules.RatePerMinute:   envvars.RatePerMinute,
	configrules.MaxConcurrency:  envvars.MaxConcurrency,
	configrules.BatchSize:       envvars.BatchSize,
	configrules.FunctionTimeout: envvars.FunctionTimeout,
	configrules.FinishReserve:   envvars.FinishReserve,
	configrules.Pacing:          envvars.Pacing,
	configrules.MemoryMB:        envvars.FunctionMemorySize,
	configrules.Oversize:        envvars.Oversize,
	configrules.MaxReceiveCount: envvars.MaxReceiveCount,
}

// checkRules refuses the combinations of settings the CDK app refuses too
// (pkg/shared/configrules), when every variable parsed. The batch size and
// timeout are what the stack says of the event source and the function,
// each unset one skipping its rule; the memory is Lambda's own variable,
// unset the stack's default.
func checkRules(p *envvars.Parser, c Config) {
	if p.Err() != nil {
		return
	}
	s := configrules.Settings{
		RatePerMinute:   c.RatePerMinute,
		MaxConcurrency:  c.MaxConcurrency,
		BatchSize:       p.IntRange(envvars.BatchSize, 0, 1, 10_000),
		FunctionTimeout: p.DurationMin(envvars.FunctionTimeout, 0, time.Second),
		FinishReserve:   c.FinishReserve,
		Pacing:          c.Pacing,
		MemoryMB:        c.MemoryMB, // read once, in LoadConfig: unset is the stack's default
		Oversize:        c.Oversize,
		MaxReceiveCount: c.MaxReceiveCount,
	}
	if p.Err() != nil {
		return
	}
	for _, v := range configrules.Check(s, ruleNames) {
		p.Fail(ruleNames[v.Settings[0]], "cannot work with the other settings: %s", v.Message)
	}
}
