package main

import (
	"errors"
	"fmt"
	"maps"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/shared/configrules"
	"github.com/geolocate-aws/geolocate/pkg/shared/keyheader"
)

// Context keys. Their defaults live in cdk.json; `cdk synth -c key=value`
// overrides one. Keys listed as optional may be empty.
const (
	keyStackName                     = "stackName"
	keyAPIURL                        = "apiUrl"
	keyAPIKeyHeader                  = "apiKeyHeader"
	keyExistingBucketName            = "existingBucketName"      // optional
	keyUploadPrefix                  = "uploadPrefix"            // optional
	keyUploadSuffix                  = "uploadSuffix"            // optional
	keyExistingSecretName            = "existingSecretName"      // optional
	keyExistingSecretArn             = "existingSecretArn"       // optional
	keyExistingBucketKmsKeyArn       = "existingBucketKmsKeyArn" // optional
	keyExistingSecretKmsKeyArn       = "existingSecretKmsKeyArn" // optional
	keyTopN                          = "topN"                    // optional
	keyModelID                       = "modelId"                 // optional
	keyModelFallback                 = "modelFallback"
	keyRatePerMinute                 = "ratePerMinute"
	keyMaxConcurrency                = "maxConcurrency"
	keyPacing                        = "pacing"
	keyBatchSize                     = "batchSize"
	keyPredictorTimeoutSeconds       = "predictorTimeoutSeconds"
	keyPredictorMemoryMB             = "predictorMemoryMb"
	keyMonitorScheduleMinutes        = "monitorScheduleMinutes"
	keyDLQMaxReceiveCount            = "dlqMaxReceiveCount"
	keyLogRetentionDays              = "logRetentionDays"
	keyLogLevel                      = "logLevel"
	keyCreditsLowThreshold           = "creditsLowThreshold"
	keyCreditsForecastDays           = "creditsForecastDays"
	keyCreditsPath                   = "creditsPath" // optional
	keyHistoryTTLDays                = "historyTtlDays"
	keyFailedPredictionRateThreshold = "failedPredictionRateThreshold"
	keyQueueAgeAlarmSeconds          = "queueAgeAlarmSeconds"
	keyAlarmEmail                    = "alarmEmail" // optional
	keyDailyCreditBudget             = "dailyCreditBudget"
	keyRecordTTLDays                 = "recordTtlDays"
	keyRemoveOnDestroy               = "removeOnDestroy"
	keyNoncurrentVersionDays         = "noncurrentVersionDays"
	keyMaxImageBytes                 = "maxImageBytes"
	keyFinishReserveSeconds          = "finishReserveSeconds"
	keyExifGPS                       = "exifGps"
	keyOversize                      = "oversize"
	keyDownscaleMaxSidePx            = "downscaleMaxSidePx"
	keyMaxServerDelaySeconds         = "maxServerDelaySeconds"
	keyUploadMetadata                = "uploadMetadata"
	keyReuseResults                  = "reuseResults"
	keyReuseMaxAgeDays               = "reuseMaxAgeDays"
	keyAccountConcurrencyLimit       = "accountConcurrencyLimit"
	keyNotifications                 = "notifications" // optional
	keyEvents                        = "events"
	keyEventBusName                  = "eventBusName" // optional
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
	LogRetentionDays   int
	LogLevel           string

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
}

// ContextLookup returns the raw context value of key, or nil when unset.
// In the app it reads the root node's GetAllContext (LoadAppConfig); tests pass a map.
type ContextLookup func(key string) any

var (
	// stackNamePattern follows CloudFormation's stack name rule; the name is
	// also used as a dashboard name, which allows the same characters.
	stackNamePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]{0,127}$`)
	// bucketNamePattern is S3's general purpose bucket naming rule.
	bucketNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	// secretNamePattern is Secrets Manager's allowed name characters.
	secretNamePattern = regexp.MustCompile(`^[A-Za-z0-9/_+=.@-]{1,512}$`)
	// secretArnPattern is a complete Secrets Manager secret ARN (with the
	// six-character suffix Secrets Manager appends).
	secretArnPattern = regexp.MustCompile(`^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$`)
	// kmsKeyArnPattern is a KMS key ARN: a key id (UUID) or a multi-Region
	// key id (mrk-...). Aliases are refused: IAM authorizes kms:Decrypt on the
	// key's ARN, never on an alias of it.
	kmsKeyArnPattern = regexp.MustCompile(`^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/(mrk-[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$`)
	// eventBusNamePattern is EventBridge's bus name rule (a name, not an ARN:
	// the pipe puts events on a bus of its own account and region).
	eventBusNamePattern = regexp.MustCompile(`^[/\.\-_A-Za-z0-9]{1,256}$`)
	// modelIDPattern keeps model ids to characters safe in a query string.
	modelIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:/-]{1,200}$`)
)

const kmsKeyArnWant = "a KMS key ARN, arn:aws:kms:<region>:<account>:key/<key id> (not an alias)"

// LoadConfig reads and validates every context key. It reports all bad keys
// at once, each message naming the key and what it accepts.
func LoadConfig(lookup ContextLookup) (Config, error) {
	return loadConfig(lookup, nil)
}

// LoadAppConfig is LoadConfig over the app's whole context (the root
// node's GetAllContext: cdk.json, cdk.context.json and every -c), which
// also refuses a key that no setting reads, with the closest setting: a
// misspelled -c alarmEmial=... would otherwise be ignored without a word,
// and the alarms would page nobody. The app refuses, so make synth, make
// deploy and a bare cdk deploy all do.
func LoadAppConfig(all map[string]any) (Config, error) {
	return loadConfig(func(key string) any { return all[key] }, slices.Sorted(maps.Keys(all)))
}

// cdkContextKeys are the CDK's own context keys without a ":" or a
// leading "@": the notices acknowledged (cdk acknowledge) and the CLI's
// telemetry choice, which the CLI writes into cdk.json.
var cdkContextKeys = map[string]bool{"acknowledged-issue-numbers": true, "cli-telemetry": true}

// isCDKContextKey reports a key the CDK itself puts in the context: feature
// flags (@aws-cdk/...), its own settings (aws:cdk:...) and the lookups it
// caches in cdk.context.json (availability-zones:account=...:region=...),
// all of which hold a ":" or start with "@".
func isCDKContextKey(key string) bool {
	return strings.HasPrefix(key, "@") || strings.Contains(key, ":") || cdkContextKeys[key]
}

// loadConfig reads every setting through lookup; keys, when given, are
// all the keys the context holds, each of which a setting must have read.
func loadConfig(lookup ContextLookup, keys []string) (Config, error) {
	r := &contextReader{lookup: lookup, read: map[string]bool{}}
	cfg := Config{
		StackName:               r.matching(keyStackName, stackNamePattern, "letters, digits and hyphens, starting with a letter, at most 128"),
		APIURL:                  r.apiURL(keyAPIURL),
		APIKeyHeader:            r.keyHeader(keyAPIKeyHeader),
		ExistingBucketName:      r.optionalMatching(keyExistingBucketName, bucketNamePattern, "an S3 bucket name: 3-63 lowercase letters, digits, dots or hyphens"),
		UploadPrefix:            r.keyFilter(keyUploadPrefix),
		UploadSuffix:            r.keyFilter(keyUploadSuffix),
		ExistingSecretName:      r.optionalMatching(keyExistingSecretName, secretNamePattern, "a Secrets Manager secret name"),
		ExistingSecretArn:       r.optionalMatching(keyExistingSecretArn, secretArnPattern, "a complete secret ARN, arn:aws:secretsmanager:<region>:<account>:secret:<name>-<6 characters>"),
		ExistingBucketKmsKeyArn: r.optionalMatching(keyExistingBucketKmsKeyArn, kmsKeyArnPattern, kmsKeyArnWant),
		ExistingSecretKmsKeyArn: r.optionalMatching(keyExistingSecretKmsKeyArn, kmsKeyArnPattern, kmsKeyArnWant),
		TopN:                    r.optionalInt(keyTopN, 1, 15),
		ModelID:                 r.optionalMatching(keyModelID, modelIDPattern, "a model id from GET /v1/prediction/models"),
		ModelFallback:           r.boolean(keyModelFallback),
		RatePerMinute:           r.intIn(keyRatePerMinute, 1, 1_000_000),
		// Lambda's SQS event source accepts a maximum concurrency of 2 to 1000.
		MaxConcurrency: r.intIn(keyMaxConcurrency, 2, 1000),
		Pacing:         r.pacing(keyPacing),
		// Above 10 Lambda requires a batching window, which would delay images.
		BatchSize:          r.intIn(keyBatchSize, 1, 10),
		PredictorTimeout:   time.Duration(r.intIn(keyPredictorTimeoutSeconds, 30, 900)) * time.Second,
		PredictorMemoryMB:  r.intIn(keyPredictorMemoryMB, 128, 10240),
		MonitorSchedule:    time.Duration(r.intIn(keyMonitorScheduleMinutes, 1, 1440)) * time.Minute,
		DLQMaxReceiveCount: r.intIn(keyDLQMaxReceiveCount, 1, 1000),
		LogRetentionDays:   r.oneOf(keyLogRetentionDays, slices.Sorted(maps.Keys(logRetentions))),
		LogLevel:           r.logLevel(keyLogLevel),

		CreditsLowThreshold:           r.floatIn(keyCreditsLowThreshold, 0, 1e12),
		CreditsForecastDays:           r.floatIn(keyCreditsForecastDays, 1, 365),
		CreditsPath:                   r.str(keyCreditsPath),
		HistoryTTLDays:                r.intIn(keyHistoryTTLDays, 1, 3650),
		FailedPredictionRateThreshold: r.floatIn(keyFailedPredictionRateThreshold, 0, 100),
		// Up to the upload queue's retention: an older message is gone.
		QueueAgeAlarm: time.Duration(r.intIn(keyQueueAgeAlarmSeconds, 60, uploadQueueRetentionDays*24*3600)) * time.Second,
		AlarmEmail:    r.email(keyAlarmEmail),

		DailyCreditBudget: r.intIn(keyDailyCreditBudget, 0, 1_000_000_000),
		RecordTTLDays:     r.intIn(keyRecordTTLDays, 0, 36500),
		RemoveOnDestroy:   r.boolean(keyRemoveOnDestroy),

		NoncurrentVersionDays: r.intIn(keyNoncurrentVersionDays, 1, 3650),
		// Up to 100 MiB; the service's own limit is the cdk.json default.
		MaxImageBytes: r.intIn(keyMaxImageBytes, 1, 100<<20),
		FinishReserve: time.Duration(r.intIn(keyFinishReserveSeconds, 2, 300)) * time.Second,

		ExifGPS:            r.choice(keyExifGPS, exifGPSPredict, exifGPSSkip, exifGPSIgnore),
		Oversize:           r.choice(keyOversize, oversizeDownscale, oversizeReject),
		DownscaleMaxSidePx: r.intIn(keyDownscaleMaxSidePx, minDownscaleMaxSidePx, maxDownscaleMaxSidePx),
		// Up to SQS's 12 hours, the longest a message can wait.
		MaxServerDelay: time.Duration(r.intIn(keyMaxServerDelaySeconds, 1, 43200)) * time.Second,
		UploadMetadata: r.choice(keyUploadMetadata, uploadMetadataStrip, uploadMetadataKeep),
		ReuseResults:   r.choice(keyReuseResults, reuseContent, reuseOff),
		// 0 is no limit; else up to the records' own lifetime's bound.
		ReuseMaxAgeDays: r.intIn(keyReuseMaxAgeDays, 0, 36500),

		// New accounts may start at 10; Service Quotas raises it.
		AccountConcurrencyLimit: r.intIn(keyAccountConcurrencyLimit, 10, 1_000_000),

		Events:       r.boolean(keyEvents),
		EventBusName: r.optionalMatching(keyEventBusName, eventBusNamePattern, "the name of an existing event bus of the stack's account and region (not an ARN)"),
	}
	cfg.Notifications = r.notifications(keyNotifications, cfg.ExistingBucketName != "")
	// A reserve of half the timeout or more would leave the prediction itself
	// less time than the bookkeeping after it. Checked only when both parsed.
	if cfg.FinishReserve > 0 && cfg.PredictorTimeout > 0 && 2*cfg.FinishReserve >= cfg.PredictorTimeout {
		timeout := int(cfg.PredictorTimeout.Seconds())
		r.fail(keyFinishReserveSeconds, "%q is not allowed; want less than half of %s (%d), so at most %d",
			strconv.Itoa(int(cfg.FinishReserve.Seconds())), keyPredictorTimeoutSeconds, timeout, (timeout-1)/2)
	}
	if cfg.ExistingSecretName != "" && cfg.ExistingSecretArn != "" {
		r.fail(keyExistingSecretArn, "set either %s or %s, not both", keyExistingSecretName, keyExistingSecretArn)
	}
	// A key is only used for existing data: the stack's own bucket and secret
	// use keys that need no grant.
	if cfg.ExistingBucketKmsKeyArn != "" && cfg.ExistingBucketName == "" {
		r.fail(keyExistingBucketKmsKeyArn, "is set but %s is empty; the key is only for an existing bucket's objects", keyExistingBucketName)
	}
	if cfg.ExistingSecretKmsKeyArn != "" && cfg.ExistingSecretName == "" && cfg.ExistingSecretArn == "" {
		r.fail(keyExistingSecretKmsKeyArn, "is set but %s and %s are empty; the key is only for an existing secret", keyExistingSecretName, keyExistingSecretArn)
	}
	if cfg.EventBusName != "" && !cfg.Events {
		r.fail(keyEventBusName, "is set but %s is false; the bus is only for the result events", keyEvents)
	}
	r.checkRules(cfg)
	r.refuseUnknown(keys)
	if len(r.errs) > 0 {
		return Config{}, fmt.Errorf("invalid CDK context (fix cdk.json or the -c overrides):\n%w", errors.Join(r.errs...))
	}
	return cfg, nil
}

// ruleNames are the context keys of the settings configrules judges.
var ruleNames = configrules.Names{
	configrules.RatePerMinute:      keyRatePerMinute,
	configrules.MaxConcurrency:     keyMaxConcurrency,
	configrules.BatchSize:          keyBatchSize,
	configrules.FunctionTimeout:    keyPredictorTimeoutSeconds,
	configrules.FinishReserve:      keyFinishReserveSeconds,
	configrules.Pacing:             keyPacing,
	configrules.MemoryMB:           keyPredictorMemoryMB,
	configrules.Oversize:           keyOversize,
	configrules.MaxReceiveCount:    keyDLQMaxReceiveCount,
	configrules.AccountConcurrency: keyAccountConcurrencyLimit,
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
func (r *contextReader) checkRules(cfg Config) {
	for _, key := range ruleNames {
		if r.failed[key] {
			return
		}
	}
	for _, v := range configrules.Check(cfg.ruleSettings(), ruleNames) {
		r.fail(ruleNames[v.Settings[0]], "%s", v.Message)
	}
}

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

// contextReader parses context values, collecting one error per bad key.
type contextReader struct {
	lookup ContextLookup
	errs   []error
	failed map[string]bool // keys with an error
	// read holds every key a setting looked up: the known settings, by
	// construction, so no second list can drift from the parsers.
	read map[string]bool
}

// refuseUnknown fails each key that no setting read and the CDK does not
// own, naming the closest setting when one is near.
func (r *contextReader) refuseUnknown(keys []string) {
	known := slices.Sorted(maps.Keys(r.read))
	for _, key := range keys {
		if r.read[key] || isCDKContextKey(key) {
			continue
		}
		if near := closestKey(key, known); near != "" {
			r.errs = append(r.errs, fmt.Errorf("unknown setting %s; did you mean %s?", key, near))
		} else {
			r.errs = append(r.errs, fmt.Errorf("unknown setting %s; the settings are listed in docs/configuration.md", key))
		}
	}
}

// closestKey is the known key nearest to key by edit distance (case
// ignored, a swap of two letters counting as one edit), if it is within a
// third of key's length: a typo, not a different word.
func closestKey(key string, known []string) string {
	best, bestDist := "", len(key)/3+1
	for _, k := range known {
		if d := editDistance(strings.ToLower(key), strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of adjacent bytes.
func editDistance(a, b string) int {
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

func (r *contextReader) fail(key, format string, args ...any) {
	if r.failed == nil {
		r.failed = map[string]bool{}
	}
	r.failed[key] = true
	r.errs = append(r.errs, fmt.Errorf("context key %q: %s", key, fmt.Sprintf(format, args...)))
}

// raw returns the value as text. cdk.json gives JSON numbers and booleans,
// while -c overrides always arrive as strings; both are accepted.
func (r *contextReader) raw(key string) (string, bool) {
	r.read[key] = true
	switch v := r.lookup(key).(type) {
	case nil:
		return "", false
	case string:
		return strings.TrimSpace(v), true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(v), true
	default:
		return fmt.Sprint(v), true
	}
}

// required returns the value of a key that must be set and non-empty.
func (r *contextReader) required(key, want string) (string, bool) {
	s, ok := r.raw(key)
	if !ok || s == "" {
		r.fail(key, "is missing; want %s (set it in cdk.json or pass -c %s=<value>)", want, key)
		return "", false
	}
	return s, true
}

func (r *contextReader) str(key string) string {
	s, _ := r.raw(key)
	return s
}

func (r *contextReader) intIn(key string, lo, hi int) int {
	want := fmt.Sprintf("a whole number from %d to %d", lo, hi)
	s, ok := r.required(key, want)
	if !ok {
		return 0
	}
	return r.parseInt(key, s, lo, hi, want)
}

// optionalInt returns 0 for an empty value.
func (r *contextReader) optionalInt(key string, lo, hi int) int {
	s := r.str(key)
	if s == "" {
		return 0
	}
	return r.parseInt(key, s, lo, hi, fmt.Sprintf("empty or a whole number from %d to %d", lo, hi))
}

func (r *contextReader) parseInt(key, s string, lo, hi int, want string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		r.fail(key, "%q is not allowed; want %s", s, want)
		return 0
	}
	return n
}

func (r *contextReader) floatIn(key string, lo, hi float64) float64 {
	want := fmt.Sprintf("a number from %g to %g", lo, hi)
	s, ok := r.required(key, want)
	if !ok {
		return 0
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < lo || f > hi {
		r.fail(key, "%q is not allowed; want %s", s, want)
		return 0
	}
	return f
}

func (r *contextReader) oneOf(key string, allowed []int) int {
	list := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(allowed)), ", "), "[]")
	want := "one of " + list
	s, ok := r.required(key, want)
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err == nil {
		for _, a := range allowed {
			if n == a {
				return n
			}
		}
	}
	r.fail(key, "%q is not allowed; want %s", s, want)
	return 0
}

func (r *contextReader) boolean(key string) bool {
	s, ok := r.required(key, "true or false")
	if !ok {
		return false
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		r.fail(key, "%q is not allowed; want true or false", s)
	}
	return b
}

func (r *contextReader) matching(key string, pattern *regexp.Regexp, want string) string {
	s, ok := r.required(key, want)
	if ok && !pattern.MatchString(s) {
		r.fail(key, "%q is not allowed; want %s", s, want)
		return ""
	}
	return s
}

func (r *contextReader) optionalMatching(key string, pattern *regexp.Regexp, want string) string {
	s := r.str(key)
	if s != "" && !pattern.MatchString(s) {
		r.fail(key, "%q is not allowed; want empty or %s", s, want)
		return ""
	}
	return s
}

// keyFilter checks an S3 notification prefix or suffix. S3 keys have no
// leading slash, so a filter starting with one would never match anything.
func (r *contextReader) keyFilter(key string) string {
	s := r.str(key)
	const want = "empty or an S3 key fragment of at most 1024 characters, not starting with /"
	if strings.HasPrefix(s, "/") || len(s) > 1024 {
		r.fail(key, "%q is not allowed; want %s", s, want)
		return ""
	}
	return s
}

// apiURL requires an absolute https URL without credentials, query or
// fragment: the key travels in a header, never in the URL.
func (r *contextReader) apiURL(key string) string {
	const want = "the service base URL, https://host[/path], e.g. -c apiUrl=https://api.example.com"
	s, ok := r.required(key, want)
	if !ok {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s, "?") {
		r.fail(key, "%q is not allowed; want %s", s, want)
		return ""
	}
	return strings.TrimSuffix(s, "/")
}

// keyHeader accepts a header name the client can send the key in (the
// rule the functions apply to GEO_API_KEY_HEADER); empty means the
// contract's header.
func (r *contextReader) keyHeader(key string) string {
	s := r.str(key)
	if s == "" {
		return keyheader.Default
	}
	if err := keyheader.Check(s); err != nil {
		r.fail(key, "%q is not allowed: %v", s, err)
		return ""
	}
	return s
}

func (r *contextReader) email(key string) string {
	s := r.str(key)
	if s == "" {
		return ""
	}
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Address != s {
		r.fail(key, "%q is not allowed; want empty or a plain e-mail address such as ops@example.com", s)
		return ""
	}
	return s
}

// The predictor's pacing modes (predictor.PacingShared and PacingInstance;
// config_test.go checks they agree).
const (
	pacingShared   = "shared"
	pacingInstance = "instance"
)

// pacing accepts the predictor's pacing modes; unset means shared.
func (r *contextReader) pacing(key string) string {
	s := strings.ToLower(r.str(key))
	switch s {
	case "":
		return pacingShared
	case pacingShared, pacingInstance:
		return s
	}
	r.fail(key, "%q is not allowed; want %s or %s", s, pacingShared, pacingInstance)
	return ""
}

// The predictor's EXIF GPS, oversize and upload metadata modes and
// downscale bounds (predictor.ExifGPS*, Oversize*, UploadMetadata*,
// MinDownscaleMaxSide; config_test.go checks they agree), kept here so the
// CDK app does not link the predictor.
const (
	uploadMetadataStrip   = "strip"
	uploadMetadataKeep    = "keep"
	reuseContent          = "content"
	reuseOff              = "off"
	exifGPSPredict        = "predict"
	exifGPSSkip           = "skip"
	exifGPSIgnore         = "ignore"
	oversizeDownscale     = "downscale"
	oversizeReject        = "reject"
	minDownscaleMaxSidePx = 512
	maxDownscaleMaxSidePx = 16384
)

// How uploads reach the queue (Config.Notifications).
const (
	notificationsS3          = configrules.NotificationsS3
	notificationsEventBridge = configrules.NotificationsEventBridge
)

// notifications accepts s3 or eventbridge; unset, the mode for the bucket
// (configrules.Notifications: EventBridge for an existing bucket).
func (r *contextReader) notifications(key string, existingBucket bool) string {
	s := strings.ToLower(r.str(key))
	mode, ok := configrules.Notifications(s, existingBucket)
	if !ok {
		r.fail(key, "%q is not allowed; want empty (eventbridge for an existing bucket, s3 for the stack's own), s3 or eventbridge", s)
	}
	return mode
}

// choice accepts one of allowed (case-insensitive); the first is the
// default when the key is unset or empty.
func (r *contextReader) choice(key string, allowed ...string) string {
	s := strings.ToLower(r.str(key))
	if s == "" {
		return allowed[0]
	}
	if slices.Contains(allowed, s) {
		return s
	}
	r.fail(key, "%q is not allowed; want one of %s", s, strings.Join(allowed, ", "))
	return ""
}

// logLevel accepts slog's level names, which the functions parse.
func (r *contextReader) logLevel(key string) string {
	const want = "DEBUG, INFO, WARN or ERROR"
	s, ok := r.required(key, want)
	if !ok {
		return ""
	}
	switch u := strings.ToUpper(s); u {
	case "DEBUG", "INFO", "WARN", "ERROR":
		return u
	}
	r.fail(key, "%q is not allowed; want %s", s, want)
	return ""
}
