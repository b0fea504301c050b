package predictor

import (
	"fmt"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/photo/downscale"
	"github.com/geolocate-aws/geolocate/pkg/shared/configrules"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// Defaults of what the stack tells the predictor besides its settings.
const (
	DefaultClaimLease   = 15 * time.Minute
	DefaultPipelineName = "local"

	// MinClaimLease keeps a lease longer than any plausible single call, so
	// a slow but healthy attempt is never mistaken for a crashed one.
	MinClaimLease = 30 * time.Second
)

// The defaults of settings other packages name, from the settings table
// (pkg/shared/settings), where every default is written once.
var (
	// DefaultMemoryMB is the stack's predictor memory, for a process
	// Lambda did not start.
	DefaultMemoryMB = settings.PredictorMemoryMB.DefaultInt()
	// DefaultFinishReserve is the time kept before Lambda's deadline to
	// record the outcome of a call: the paid call is cut off when it
	// starts. Lambda freezes the environment at the deadline, so a write
	// that has not finished by then is lost.
	DefaultFinishReserve = time.Duration(settings.FinishReserveSeconds.DefaultInt()) * time.Second
	// DefaultMaxServerDelay is the default cap on a delay the service asks
	// for: long enough for a limiter's whole window (the public backend's
	// is 60 s), short enough that a bogus one parks nothing for long.
	DefaultMaxServerDelay = time.Duration(settings.MaxServerDelaySeconds.DefaultInt()) * time.Second
	// DefaultDownscaleMaxSide is the default longest side of a downscaled
	// photo.
	DefaultDownscaleMaxSide = settings.DownscaleMaxSidePx.DefaultInt()
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
	UploadMetadataStrip = settings.UploadMetadataStrip
	// UploadMetadataKeep sends the object as stored, metadata and all.
	UploadMetadataKeep = settings.UploadMetadataKeep
)

// EXIF GPS modes (GEO_EXIF_GPS).
const (
	// ExifGPSPredict calls the service for every photo and, when the photo
	// carries a valid EXIF position, records both and the distance between
	// them: the accuracy figures.
	ExifGPSPredict = settings.ExifGPSPredict
	// ExifGPSSkip records a photo with a valid EXIF position from EXIF alone
	// (source exif, 0 credits), without a call.
	ExifGPSSkip = settings.ExifGPSSkip
	// ExifGPSIgnore neither records nor uses the EXIF position (capture time
	// and camera are still recorded).
	ExifGPSIgnore = settings.ExifGPSIgnore
)

// keepMetadata reports whether photos are sent with their metadata: only
// when the operator said so; any other value, the zero one included, strips.
func (c Config) keepMetadata() bool { return c.UploadMetadata == UploadMetadataKeep }

// Oversize modes (GEO_OVERSIZE).
const (
	// OversizeDownscale re-encodes a JPEG, PNG or WebP over the limit as a
	// JPEG under it and sends that.
	OversizeDownscale = settings.OversizeDownscale
	// OversizeReject rejects every photo over the limit (too_large).
	OversizeReject = settings.OversizeReject
)

// MinDownscaleMaxSide keeps a downscaled photo useful to a geolocation model.
const MinDownscaleMaxSide = settings.MinDownscaleMaxSide

// Pacing modes (GEO_PACING).
const (
	// PacingShared paces every instance through one schedule in the table.
	PacingShared = settings.PacingShared
	// PacingInstance paces each instance alone at R/N.
	PacingInstance = settings.PacingInstance
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
// in the function); a setting's variable left unset takes the table's
// default (pkg/shared/settings), the stack's. The error names the
// offending variable and what it accepts. It never includes the API key.
func LoadConfig(getenv func(string) string) (Config, error) {
	r := settings.FromEnv(getenv)
	secretID, apiKey := r.KeySource()
	c := Config{
		TableName:       r.Required(envvars.TableName),
		SecretID:        secretID,
		APIKey:          apiKey,
		APIURL:          r.URL(settings.APIURL),
		KeyHeader:       r.String(settings.APIKeyHeader),
		TopN:            r.Int(settings.TopN),
		ModelID:         r.String(settings.ModelID),
		ModelFallback:   r.Bool(settings.ModelFallback),
		RatePerMinute:   r.Float(settings.RatePerMinute),
		MaxConcurrency:  r.Int(settings.MaxConcurrency),
		Pacing:          r.String(settings.Pacing),
		DailyBudget:     r.Int(settings.DailyCreditBudget),
		ClaimLease:      r.DurationMin(envvars.ClaimLease, DefaultClaimLease, MinClaimLease),
		RecordTTL:       r.Duration(settings.RecordTTLDays, 24*time.Hour),
		BucketName:      r.Str(envvars.BucketName),
		MaxImageBytes:   int64(r.Int(settings.MaxImageBytes)),
		MaxReceiveCount: r.Int(settings.DLQMaxReceiveCount),
		FinishReserve:   r.Duration(settings.FinishReserveSeconds, time.Second),
		MetricNamespace: r.StrDefault(envvars.MetricNamespace, metricnames.DefaultNamespace),
		PipelineName:    r.StrDefault(envvars.PipelineName, DefaultPipelineName),
		LogLevel:        strings.ToLower(r.String(settings.LogLevel)),

		ExifGPS:          r.String(settings.ExifGPS),
		Oversize:         r.String(settings.Oversize),
		DownscaleMaxSide: r.Int(settings.DownscaleMaxSidePx),
		MaxServerDelay:   r.Duration(settings.MaxServerDelaySeconds, time.Second),
		MemoryMB:         r.Int(settings.PredictorMemoryMB),
		UploadMetadata:   r.String(settings.UploadMetadata),
		ReuseResults:     r.String(settings.ReuseResults),
		ReuseMaxAge:      ledger.MaxAge(r.Duration(settings.ReuseMaxAgeDays, 24*time.Hour)),
	}
	checkRules(r, c)
	if err := r.Err(); err != nil {
		return Config{}, fmt.Errorf("predictor configuration: %w", err)
	}
	return c, nil
}

// ruleNames are the variables of the settings configrules judges.
var ruleNames = configrules.Names{
	configrules.RatePerMinute:   settings.RatePerMinute.Env,
	configrules.MaxConcurrency:  settings.MaxConcurrency.Env,
	configrules.BatchSize:       settings.BatchSize.Env,
	configrules.FunctionTimeout: settings.PredictorTimeoutSeconds.Env,
	configrules.FinishReserve:   settings.FinishReserveSeconds.Env,
	configrules.Pacing:          settings.Pacing.Env,
	configrules.MemoryMB:        settings.PredictorMemoryMB.Env,
	configrules.Oversize:        settings.Oversize.Env,
	configrules.MaxReceiveCount: settings.DLQMaxReceiveCount.Env,
}

// checkRules refuses the combinations of settings the CDK app refuses too
// (pkg/shared/configrules), when every variable parsed. The batch size and
// timeout are what the stack says of the event source and the function,
// each unset one skipping its rule (settings.Setting.EnvUnknown); the
// memory is Lambda's own variable, unset the stack's default.
func checkRules(r *settings.Reader, c Config) {
	if r.Err() != nil {
		return
	}
	s := configrules.Settings{
		RatePerMinute:   c.RatePerMinute,
		MaxConcurrency:  c.MaxConcurrency,
		BatchSize:       r.Int(settings.BatchSize),
		FunctionTimeout: r.Duration(settings.PredictorTimeoutSeconds, time.Second),
		FinishReserve:   c.FinishReserve,
		Pacing:          c.Pacing,
		MemoryMB:        c.MemoryMB, // read once, in LoadConfig: unset is the stack's default
		Oversize:        c.Oversize,
		MaxReceiveCount: c.MaxReceiveCount,
	}
	if r.Err() != nil {
		return
	}
	for _, v := range configrules.Check(s, ruleNames) {
		r.FailName(ruleNames[v.Settings[0]], "cannot work with the other settings: %s", v.Message)
	}
}
