package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/aws/jsii-runtime-go"

	"github.com/geolocate-aws/geolocate/pkg/shared/configrules"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// Config is the validated deployment configuration read from CDK context.
type Config struct {
	// StackName names the stack and is the Pipeline dimension of every metric.
	StackName string
	// APIURL is the service's base URL (https, no query, no credentials).
	APIURL string
	// APIKeyHeader is the request header the key is sent in (the contract's
	// X-Service-Key by default; a deployment may read another name).
	APIKeyHeader string

	// ExistingBucketName, when set, uses that bucket instead of creating one.
	ExistingBucketName string
	// UploadPrefix and UploadSuffix filter which new objects are predicted.
	UploadPrefix string
	UploadSuffix string

	// ExistingSecretName or ExistingSecretArn (at most one) names a secret that
	// already holds the geo_ key; when both are empty a new secret is created.
	ExistingSecretName string
	ExistingSecretArn  string

	// ExistingBucketKmsKeyArn and ExistingSecretKmsKeyArn name the customer
	// managed KMS key that encrypts the existing bucket's objects or the
	// existing secret; the functions that read them get kms:Decrypt on it,
	// through that service only. Empty when the data uses an AWS managed key.
	ExistingBucketKmsKeyArn string
	ExistingSecretKmsKeyArn string

	// TopN is the number of clusters requested; 0 leaves the service default.
	TopN int
	// ModelID pins a model; empty follows the service's default global model.
	ModelID string
	// ModelFallback retries with the default model when ModelID is retired.
	ModelFallback bool

	RatePerMinute  int
	MaxConcurrency int
	// Pacing is "shared" (one schedule in the table for every instance) or
	// "instance" (each instance at RatePerMinute/MaxConcurrency).
	Pacing             string
	BatchSize          int
	PredictorTimeout   time.Duration
	PredictorMemoryMB  int
	MonitorSchedule    time.Duration
	DLQMaxReceiveCount int
	// JobWindow is how many minutes of a job's calls the feeder keeps in
	// the upload queue (jobWindowMinutes, 1 to 15: SQS delays a message at
	// most 900 s).
	JobWindow        time.Duration
	LogRetentionDays int
	LogLevel         string

	CreditsLowThreshold float64
	CreditsForecastDays float64
	// CreditsPath is the monitor's optional JSON path to "remaining credits".
	CreditsPath    string
	HistoryTTLDays int
	// FailedPredictionRateThreshold is a percentage of the images handled.
	FailedPredictionRateThreshold float64
	QueueAgeAlarm                 time.Duration
	AlarmEmail                    string

	// DailyCreditBudget caps credits spent per UTC day; 0 means no cap.
	DailyCreditBudget int
	// RecordTTLDays expires prediction records; 0 keeps them forever.
	RecordTTLDays int
	// RemoveOnDestroy deletes stored data with the stack (development only).
	RemoveOnDestroy bool

	// NoncurrentVersionDays is how long the created upload bucket keeps an
	// object version after it was overwritten or deleted.
	NoncurrentVersionDays int
	// MaxImageBytes is the largest image the predictor sends to the service.
	MaxImageBytes int
	// FinishReserve is the time the predictor keeps before Lambda's deadline
	// to record a result it has paid for; less than half the timeout.
	FinishReserve time.Duration

	// ExifGPS is what a photo's valid EXIF position is used for: "predict"
	// (call anyway, record both and the error), "skip" (record it without
	// a call) or "ignore".
	ExifGPS string
	// Oversize is what becomes of a photo over MaxImageBytes: "downscale"
	// (re-encode JPEG/PNG/WebP under the limit) or "reject".
	Oversize string
	// DownscaleMaxSidePx is the longest side of a downscaled photo.
	DownscaleMaxSidePx int
	// MaxServerDelay caps every delay the service asks for (a 429's or a
	// 503's): the client, the shared schedule and a returned message wait
	// at most this long for it.
	MaxServerDelay time.Duration
	// UploadMetadata is what of a photo's metadata the service receives:
	// "strip" (blanked on the way, without re-encoding) or "keep" (sent as
	// stored). Only the predictor gets it: the monitor sends no image.
	UploadMetadata string
	// ReuseResults is "content" (an answer is reused for every object whose
	// upload would send the same bytes with the same request: pay once
	// per photo) or "off" (pay once per object version).
	ReuseResults string
	// ReuseMaxAgeDays is the oldest answer reused, in days; 0 is no limit.
	ReuseMaxAgeDays int

	// AccountConcurrencyLimit is the account's Lambda concurrency quota in
	// the stack's region; maxConcurrency must leave the rest of the
	// account its share (configrules.MaxConcurrencyFor).
	AccountConcurrencyLimit int

	// Notifications is how uploads reach the queue: notificationsS3 (the
	// bucket's own notification configuration) or notificationsEventBridge
	// (the bucket sends every event to EventBridge; a rule picks the
	// uploads). Unset: EventBridge for an existing bucket, S3 for the
	// stack's own.
	Notifications string

	// Events publishes every record that becomes final as one EventBridge
	// event, through the table's stream and a pipe (events.go).
	Events bool
	// EventBusName names an existing bus of the account and region for the
	// events; empty: the default bus.
	EventBusName string

	// settingsEnv is each function's share of the settings, as the table
	// says (settings.Setting.Functions) and the context gave them: what
	// functions.go writes into their environment.
	settingsEnv func(settings.Function) map[string]string
}

// functionEnv is the environment of fn's settings, for the stack to extend
// with what it knows of itself (table name, bucket, ...).
func (c Config) functionEnv(fn settings.Function) map[string]*string {
	env := map[string]*string{}
	if c.settingsEnv == nil {
		return env
	}
	for name, v := range c.settingsEnv(fn) {
		env[name] = jsii.String(v)
	}
	return env
}

// How uploads reach the queue (Config.Notifications).
const (
	notificationsS3          = settings.NotificationsS3
	notificationsEventBridge = settings.NotificationsEventBridge
)

// ContextLookup returns the raw context value of key, or nil when unset.
// In the app it reads the root node's GetAllContext (LoadAppConfig); tests pass a map.
type ContextLookup func(key string) any

// LoadConfig reads and validates every context key. It reports all bad keys
// at once, each message naming the key and what it accepts.
func LoadConfig(lookup ContextLookup) (Config, error) {
	return loadConfig(lookup, nil)
}

// LoadAppConfig is LoadConfig over the app's whole context (the root
// node's GetAllContext: cdk.json, cdk.context.json and every -c), which
// also refuses a key that no setting declares, with the closest setting
// (settings.Unknown): a misspelled -c alarmEmial=... would otherwise be
// ignored without a word, and the alarms would page nobody. The app
// refuses, so make synth, make deploy and a bare cdk deploy all do.
func LoadAppConfig(all map[string]any) (Config, error) {
	return loadConfig(func(key string) any { return all[key] }, slices.Sorted(maps.Keys(all)))
}

// loadConfig reads every setting of the table through lookup; keys, when
// given, are all the keys the context holds, each of which the table must
// declare.
func loadConfig(lookup ContextLookup, keys []string) (Config, error) {
	r := settings.FromContext(lookup)
	cfg := Config{
		StackName:               r.String(settings.StackName),
		APIURL:                  r.URL(settings.APIURL),
		APIKeyHeader:            r.String(settings.APIKeyHeader),
		ExistingBucketName:      r.String(settings.ExistingBucketName),
		UploadPrefix:            r.String(settings.UploadPrefix),
		UploadSuffix:            r.String(settings.UploadSuffix),
		ExistingSecretName:      r.String(settings.ExistingSecretName),
		ExistingSecretArn:       r.String(settings.ExistingSecretArn),
		ExistingBucketKmsKeyArn: r.String(settings.ExistingBucketKmsKeyArn),
		ExistingSecretKmsKeyArn: r.String(settings.ExistingSecretKmsKeyArn),
		TopN:                    r.Int(settings.TopN),
		ModelID:                 r.String(settings.ModelID),
		ModelFallback:           r.Bool(settings.ModelFallback),
		RatePerMinute:           r.Int(settings.RatePerMinute),
		MaxConcurrency:          r.Int(settings.MaxConcurrency),
		Pacing:                  r.String(settings.Pacing),
		BatchSize:               r.Int(settings.BatchSize),
		PredictorTimeout:        r.Duration(settings.PredictorTimeoutSeconds, time.Second),
		PredictorMemoryMB:       r.Int(settings.PredictorMemoryMB),
		MonitorSchedule:         r.Duration(settings.MonitorScheduleMinutes, time.Minute),
		DLQMaxReceiveCount:      r.Int(settings.DLQMaxReceiveCount),
		JobWindow:               r.Duration(settings.JobWindowMinutes, time.Minute),
		LogRetentionDays:        r.Int(settings.LogRetentionDays),
		LogLevel:                r.String(settings.LogLevel),

		CreditsLowThreshold:           r.Float(settings.CreditsLowThreshold),
		CreditsForecastDays:           r.Float(settings.CreditsForecastDays),
		CreditsPath:                   r.String(settings.CreditsPath),
		HistoryTTLDays:                r.Int(settings.HistoryTTLDays),
		FailedPredictionRateThreshold: r.Float(settings.FailedPredictionRateThreshold),
		QueueAgeAlarm:                 r.Duration(settings.QueueAgeAlarmSeconds, time.Second),
		AlarmEmail:                    r.String(settings.AlarmEmail),

		DailyCreditBudget: r.Int(settings.DailyCreditBudget),
		RecordTTLDays:     r.Int(settings.RecordTTLDays),
		RemoveOnDestroy:   r.Bool(settings.RemoveOnDestroy),

		NoncurrentVersionDays: r.Int(settings.NoncurrentVersionDays),
		MaxImageBytes:         r.Int(settings.MaxImageBytes),
		FinishReserve:         r.Duration(settings.FinishReserveSeconds, time.Second),

		ExifGPS:            r.String(settings.ExifGPS),
		Oversize:           r.String(settings.Oversize),
		DownscaleMaxSidePx: r.Int(settings.DownscaleMaxSidePx),
		MaxServerDelay:     r.Duration(settings.MaxServerDelaySeconds, time.Second),
		UploadMetadata:     r.String(settings.UploadMetadata),
		ReuseResults:       r.String(settings.ReuseResults),
		ReuseMaxAgeDays:    r.Int(settings.ReuseMaxAgeDays),

		AccountConcurrencyLimit: r.Int(settings.AccountConcurrencyLimit),

		Events:       r.Bool(settings.Events),
		EventBusName: r.String(settings.EventBusName),
	}
	// Unset, the mode for the bucket (EventBridge for an existing one).
	if notify := r.String(settings.Notifications); !r.Failed(settings.Notifications) {
		cfg.Notifications, _ = configrules.Notifications(notify, cfg.ExistingBucketName != "")
	}
	// A reserve of half the timeout or more would leave the prediction itself
	// less time than the bookkeeping after it. Checked only when both parsed.
	if cfg.FinishReserve > 0 && cfg.PredictorTimeout > 0 && 2*cfg.FinishReserve >= cfg.PredictorTimeout {
		timeout := int(cfg.PredictorTimeout.Seconds())
		r.Fail(settings.FinishReserveSeconds, "%q is not allowed; want less than half of %s (%d), so at most %d",
			strconv.Itoa(int(cfg.FinishReserve.Seconds())), settings.PredictorTimeoutSeconds.Key, timeout, (timeout-1)/2)
	}
	// A job's planned backlog must not page as QueueBacklogAge (checked
	// only when both parsed).
	if cfg.QueueAgeAlarm > 0 && cfg.JobWindow > 0 && cfg.QueueAgeAlarm <= jobBacklogAge(cfg.JobWindow) {
		planned := int(jobBacklogAge(cfg.JobWindow).Seconds())
		r.Fail(settings.QueueAgeAlarmSeconds, "%q is not allowed; want more than %d, the seconds a job's message waits in the queue as planned "+
			"(%s=%d minutes of calls, plus up to %d s of DelaySeconds), so at least %d, or a smaller %s",
			strconv.Itoa(int(cfg.QueueAgeAlarm.Seconds())), planned, settings.JobWindowMinutes.Key, int(cfg.JobWindow.Minutes()),
			int(jobFeedSpread.Seconds()), planned+1, settings.JobWindowMinutes.Key)
	}
	if cfg.ExistingSecretName != "" && cfg.ExistingSecretArn != "" {
		r.Fail(settings.ExistingSecretArn, "set either %s or %s, not both", settings.ExistingSecretName.Key, settings.ExistingSecretArn.Key)
	}
	// A key is only used for existing data: the stack's own bucket and secret
	// use keys that need no grant.
	if cfg.ExistingBucketKmsKeyArn != "" && cfg.ExistingBucketName == "" {
		r.Fail(settings.ExistingBucketKmsKeyArn, "is set but %s is empty; the key is only for an existing bucket's objects", settings.ExistingBucketName.Key)
	}
	if cfg.ExistingSecretKmsKeyArn != "" && cfg.ExistingSecretName == "" && cfg.ExistingSecretArn == "" {
		r.Fail(settings.ExistingSecretKmsKeyArn, "is set but %s and %s are empty; the key is only for an existing secret",
			settings.ExistingSecretName.Key, settings.ExistingSecretArn.Key)
	}
	if cfg.EventBusName != "" && !cfg.Events {
		r.Fail(settings.EventBusName, "is set but %s is false; the bus is only for the result events", settings.Events.Key)
	}
	cfg.settingsEnv = r.Env
	checkRules(r, cfg)
	err := errors.Join(r.Err(), errors.Join(settings.Unknown(keys)...))
	if err != nil {
		return Config{}, fmt.Errorf("invalid CDK context (fix cdk.json or the -c overrides):\n%w", err)
	}
	return cfg, nil
}

// ruleNames are the context keys of the settings configrules judges.
var ruleNames = configrules.Names{
	configrules.RatePerMinute:      settings.RatePerMinute.Key,
	configrules.MaxConcurrency:     settings.MaxConcurrency.Key,
	configrules.BatchSize:          settings.BatchSize.Key,
	configrules.FunctionTimeout:    settings.PredictorTimeoutSeconds.Key,
	configrules.FinishReserve:      settings.FinishReserveSeconds.Key,
	configrules.Pacing:             settings.Pacing.Key,
	configrules.MemoryMB:           settings.PredictorMemoryMB.Key,
	configrules.Oversize:           settings.Oversize.Key,
	configrules.MaxReceiveCount:    settings.DLQMaxReceiveCount.Key,
	configrules.AccountConcurrency: settings.AccountConcurrencyLimit.Key,
}

// ruleSettings is what configrules judges of this configuration: every
// setting it reads is known to the CDK app.
func (c Config) ruleSettings() configrules.Settings {
	return configrules.Settings{
		RatePerMinute:      float64(c.RatePerMinute),
		MaxConcurrency:     c.MaxConcurrency,
		BatchSize:          c.BatchSize,
		FunctionTimeout:    c.PredictorTimeout,
		FinishReserve:      c.FinishReserve,
		Pacing:             c.Pacing,
		MemoryMB:           c.PredictorMemoryMB,
		Oversize:           c.Oversize,
		MaxReceiveCount:    c.DLQMaxReceiveCount,
		AccountConcurrency: c.AccountConcurrencyLimit,
	}
}

// checkRules refuses the combinations that cannot work (configrules), each
// reported on the key to change first. Only when every key it reads
// parsed: a key already reported bad would be judged as zero.
func checkRules(r *settings.Reader, cfg Config) {
	for _, key := range ruleNames {
		if s, _ := settings.ByKey(key); r.Failed(s) {
			return
		}
	}
	for _, v := range configrules.Check(cfg.ruleSettings(), ruleNames) {
		s, _ := settings.ByKey(ruleNames[v.Settings[0]])
		r.Fail(s, "%s", v.Message)
	}
}

// jobFeedSpread is how far ahead the feeder plans a message: each run sends
// the next minute's share of a job's window with DelaySeconds spread over
// that minute (the feeder runs every jobFeederPeriod).
const jobFeedSpread = jobFeederPeriod

// jobBacklogAge is the oldest a job's message gets in the upload queue as
// planned: SQS counts a message's age from its send, so its delay counts
// (at most jobFeedSpread), and it waits behind at most a window of calls
// (the feeder keeps at most window minutes of calls at the job's rate in
// flight, and the pacer serves them at least that fast: the job's rate is
// under the pacer's, jobs.Rate). QueueBacklogAge's threshold must exceed
// it, or every job's steady state pages.
func jobBacklogAge(window time.Duration) time.Duration { return window + jobFeedSpread }

// ClaimLease is how long the predictor's claim on an object blocks other
// deliveries: longer than any invocation can run, so a live call is never
// overtaken, yet short enough that a crashed one is retried.
func (c Config) ClaimLease() time.Duration {
	return c.PredictorTimeout + time.Minute
}

// QueueVisibilityTimeout follows Lambda's guidance for SQS event sources:
// six times the function timeout, so a batch is not redelivered while a
// (retried) invocation still holds it.
func (c Config) QueueVisibilityTimeout() time.Duration {
	return 6 * c.PredictorTimeout
}
