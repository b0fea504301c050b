package settings

import (
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"strings"

	"github.com/geolocate-aws/geolocate/pkg/shared/configrules"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/keyheader"
	"github.com/geolocate-aws/geolocate/pkg/shared/s3keyfilter"
)

// The modes of the Choice settings, written once: the predictor, the CDK
// app and the CLI all name these. Those the configuration rules depend on
// are configrules' own.
const (
	PacingShared   = configrules.PacingShared // one schedule in the table for every instance
	PacingInstance = "instance"               // each instance alone at R/N

	ExifGPSPredict = "predict"
	ExifGPSSkip    = "skip"
	ExifGPSIgnore  = "ignore"

	OversizeDownscale = configrules.OversizeDownscale
	OversizeReject    = "reject"

	UploadMetadataStrip = "strip"
	UploadMetadataKeep  = "keep"

	ReuseContent = "content"
	ReuseOff     = "off"

	NotificationsS3          = configrules.NotificationsS3
	NotificationsEventBridge = configrules.NotificationsEventBridge
)

// MinDownscaleMaxSide keeps a downscaled photo useful to a geolocation
// model: below 512 px the signs and skyline details it reads are gone.
const MinDownscaleMaxSide = 512

// UploadQueueRetentionSeconds is the upload queue's retention (10 days,
// infra's uploadQueueRetentionDays; a test there holds them equal): an
// older message is gone, so no queue-age alarm can wait longer.
const UploadQueueRetentionSeconds = 10 * 24 * 3600

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

const kmsKeyArnWant = "empty or a KMS key ARN, arn:aws:kms:<region>:<account>:key/<key id> (not an alias)"

// logRetentionDays are the retentions CloudWatch Logs accepts (infra maps
// each to CDK's enum; a test there holds the two lists equal).
var logRetentionDays = strings.Fields("1 3 5 7 14 30 60 90 120 150 180 365 400 545 731 1096 1827 2192 2557 2922 3288 3653")

// The table. Order is cdk.json's and docs/configuration.md's.
var (
	StackName = add(Setting{Key: "stackName", Kind: Text, Default: "Geolocation", Pattern: stackNamePattern,
		Want: "letters, digits and hyphens, starting with a letter, at most 128",
		Doc:  "the stack's name; also the Pipeline metric dimension"})
	APIURL = add(Setting{Key: "apiUrl", Env: envvars.APIURL, Functions: Predictor | Monitor, Kind: Text, Check: checkAPIURL,
		Want: "the service base URL, https://host[/path], e.g. -c apiUrl=https://api.example.com",
		Doc:  "the service's base URL (https, no query, no credentials)"})
	APIKeyHeader = add(Setting{Key: "apiKeyHeader", Env: envvars.APIKeyHeader, Functions: Predictor | Monitor, Kind: Text,
		Default: keyheader.Default, Optional: true, Check: keyheader.Check,
		Doc: "the request header the key is sent in"})
	ExistingBucketName = add(Setting{Key: "existingBucketName", Kind: Text, Optional: true, Pattern: bucketNamePattern,
		Want: "empty or an S3 bucket name: 3-63 lowercase letters, digits, dots or hyphens",
		Doc:  "use an existing bucket by name instead of creating one"})
	UploadPrefix = add(Setting{Key: "uploadPrefix", Kind: Text, Optional: true, Check: checkKeyFilter, Want: keyFilterWant,
		Doc: "only keys starting with this are predicted"})
	UploadSuffix = add(Setting{Key: "uploadSuffix", Kind: Text, Optional: true, Check: checkKeyFilter, Want: keyFilterWant,
		Doc: "only keys ending with this are predicted"})
	ExistingSecretName = add(Setting{Key: "existingSecretName", Kind: Text, Optional: true, Pattern: secretNamePattern,
		Want: "empty or a Secrets Manager secret name",
		Doc:  "an existing secret holding the geo_ key, by name"})
	ExistingSecretArn = add(Setting{Key: "existingSecretArn", Kind: Text, Optional: true, Pattern: secretArnPattern,
		Want: "empty or a complete secret ARN, arn:aws:secretsmanager:<region>:<account>:secret:<name>-<6 characters>",
		Doc:  "an existing secret holding the geo_ key, by ARN"})
	ExistingBucketKmsKeyArn = add(Setting{Key: "existingBucketKmsKeyArn", Kind: Text, Optional: true, Pattern: kmsKeyArnPattern,
		Want: kmsKeyArnWant, Doc: "the customer managed KMS key of an existing SSE-KMS bucket"})
	ExistingSecretKmsKeyArn = add(Setting{Key: "existingSecretKmsKeyArn", Kind: Text, Optional: true, Pattern: kmsKeyArnPattern,
		Want: kmsKeyArnWant, Doc: "the customer managed KMS key of an existing secret"})
	TopN = add(Setting{Key: "topN", Env: envvars.TopN, Functions: Predictor, Kind: Int, Optional: true, Min: 1, Max: 15,
		Doc: "clusters requested; empty leaves the service's default"})
	ModelID = add(Setting{Key: "modelId", Env: envvars.ModelID, Functions: Predictor | Monitor, Kind: Text, Optional: true,
		Pattern: modelIDPattern, Want: "empty or a model id from GET /v1/prediction/models",
		Doc: "pin a model; empty follows the service's default model"})
	ModelFallback = add(Setting{Key: "modelFallback", Env: envvars.ModelFallback, Functions: Predictor, Kind: Bool, Default: "true",
		Doc: "fall back to the default model when the pinned one is retired"})
	// Bounded by what the pacing was proven to keep (configrules.MaxRatePerMinute).
	RatePerMinute = add(Setting{Key: "ratePerMinute", Env: envvars.RatePerMinute, Functions: Predictor | JobFeeder, Kind: Int, Default: "30",
		Min: 1, Max: configrules.MaxRatePerMinute, Want: configrules.RateWant, Doc: "the account's request rate per minute"})
	// Lambda's SQS event source accepts a maximum concurrency of 2 to 1000;
	// the local rig runs one poller, hence EnvMin 1.
	MaxConcurrency = add(Setting{Key: "maxConcurrency", Env: envvars.MaxConcurrency, Functions: Predictor | JobFeeder, Kind: Int, Default: "2",
		Min: 2, Max: 1000, EnvMin: 1, Doc: "the queue event source's maximum concurrency"})
	Pacing = add(Setting{Key: "pacing", Env: envvars.Pacing, Functions: Predictor, Kind: Choice, Default: PacingShared, Optional: true,
		Allowed: []string{PacingShared, PacingInstance}, Want: "shared or instance",
		Doc: "shared: one call schedule for every instance; instance: each at rate/concurrency"})
	// Above 10 Lambda requires a batching window, which would delay images.
	BatchSize = add(Setting{Key: "batchSize", Env: envvars.BatchSize, Functions: Predictor, EnvUnknown: true, Kind: Int, Default: "5",
		Min: 1, Max: 10, Doc: "messages per invocation"})
	PredictorTimeoutSeconds = add(Setting{Key: "predictorTimeoutSeconds", Env: envvars.FunctionTimeout, Functions: Predictor,
		EnvUnknown: true, EnvDuration: true, Kind: Int, Default: "120", Min: 30, Max: 900,
		Doc: "the predictor's timeout; the queue's visibility timeout is six times it"})
	// Lambda sets AWS_LAMBDA_FUNCTION_MEMORY_SIZE itself (the name is
	// reserved): no Functions, but the predictor reads it.
	PredictorMemoryMB = add(Setting{Key: "predictorMemoryMb", Env: envvars.FunctionMemorySize, Kind: Int, Default: "512",
		Min: 128, Max: 10240, Doc: "the predictor's memory; GOMEMLIMIT is 90% of it"})
	MonitorScheduleMinutes = add(Setting{Key: "monitorScheduleMinutes", Kind: Int, Default: "5", Min: 1, Max: 1440,
		Doc: "how often the monitor runs"})
	// The stack writes MAX_RECEIVE_COUNT from the queue's own redrive policy.
	DLQMaxReceiveCount = add(Setting{Key: "dlqMaxReceiveCount", Env: envvars.MaxReceiveCount, Functions: Predictor | JobFeeder, EnvUnknown: true,
		Kind: Int, Default: "20", Min: 1, Max: 1000, Doc: "receives before a message moves to the dead-letter queue"})
	// A job keeps at most this many minutes of calls in the upload queue,
	// each sent with a DelaySeconds inside it: SQS delays a message at
	// most 15 minutes (900 s), hence the bound.
	JobWindowMinutes = add(Setting{Key: "jobWindowMinutes", Env: envvars.JobWindowMinutes, Functions: JobFeeder, Kind: Int,
		Default: "15", Min: 1, Max: 15, Want: "a whole number from 1 to 15 (SQS delays a message at most 900 s)",
		Doc: "minutes of a job's calls kept in the upload queue"})
	LogRetentionDays = add(Setting{Key: "logRetentionDays", Kind: Int, Default: "90", Allowed: logRetentionDays,
		Doc: "how long the functions' logs are kept"})
	LogLevel = add(Setting{Key: "logLevel", Env: envvars.LogLevel, Functions: Predictor | Monitor | JobFeeder, Kind: Choice, Default: "INFO",
		Allowed: []string{"DEBUG", "INFO", "WARN", "ERROR"}, Want: "DEBUG, INFO, WARN or ERROR",
		Doc: "the functions' log level"})
	CreditsLowThreshold = add(Setting{Key: "creditsLowThreshold", Kind: Number, Default: "100", Min: 0, Max: 1e12,
		Doc: "the CreditsLow alarm's threshold"})
	CreditsForecastDays = add(Setting{Key: "creditsForecastDays", Kind: Number, Default: "7", Min: 1, Max: 365,
		Doc: "CreditsRunningOut: credits forecast to run out within this many days"})
	CreditsPath = add(Setting{Key: "creditsPath", Env: envvars.CreditsPath, Functions: Monitor, Kind: Text, Optional: true,
		Doc: "JSON path of remaining credits in the credit summary"})
	HistoryTTLDays = add(Setting{Key: "historyTtlDays", Env: envvars.HistoryTTLDays, Functions: Monitor, Kind: Int, Default: "30",
		Min: 1, Max: 3650, Doc: "how long credit readings are kept for the forecast"})
	FailedPredictionRateThreshold = add(Setting{Key: "failedPredictionRateThreshold", Kind: Number, Default: "10", Min: 0, Max: 100,
		Doc: "percent of images failing that raises the alarm"})
	QueueAgeAlarmSeconds = add(Setting{Key: "queueAgeAlarmSeconds", Kind: Int, Default: "3600", Min: 60, Max: UploadQueueRetentionSeconds,
		Doc: "age of the oldest queued upload that raises the alarm"})
	AlarmEmail = add(Setting{Key: "alarmEmail", Kind: Text, Optional: true, Check: checkEmail,
		Want: "empty or a plain e-mail address such as ops@example.com", Doc: "subscribes an address to the alarm topic"})
	DailyCreditBudget = add(Setting{Key: "dailyCreditBudget", Env: envvars.DailyBudget, Functions: Predictor | JobFeeder, Kind: Int, Default: "0",
		Min: 0, Max: 1_000_000_000, Doc: "credits per UTC day; 0 is no budget"})
	RecordTTLDays = add(Setting{Key: "recordTtlDays", Env: envvars.RecordTTLDays, Functions: Predictor, Kind: Int, Default: "0",
		Min: 0, Max: 36500, Doc: "expire records after this many days; 0 keeps them"})
	RemoveOnDestroy = add(Setting{Key: "removeOnDestroy", Kind: Bool, Default: "false",
		Doc: "delete stored data with the stack (development stacks only)"})
	NoncurrentVersionDays = add(Setting{Key: "noncurrentVersionDays", Kind: Int, Default: "30", Min: 1, Max: 3650,
		Doc: "days the own bucket keeps an overwritten or deleted version"})
	// Up to 100 MiB; the service's own limit is the default.
	MaxImageBytes = add(Setting{Key: "maxImageBytes", Env: envvars.MaxImageBytes, Functions: Predictor, Kind: Int, Default: "10000000",
		Min: 1, Max: 100 << 20, Doc: "the largest image sent to the service"})
	FinishReserveSeconds = add(Setting{Key: "finishReserveSeconds", Env: envvars.FinishReserve, Functions: Predictor, EnvDuration: true,
		Kind: Int, Default: "10", Min: 2, Max: 300, Doc: "kept before Lambda's deadline to record a call's outcome"})
	ExifGPS = add(Setting{Key: "exifGps", Env: envvars.ExifGPS, Functions: Predictor, Kind: Choice, Default: ExifGPSPredict, Optional: true,
		Allowed: []string{ExifGPSPredict, ExifGPSSkip, ExifGPSIgnore}, Doc: "what a valid EXIF GPS position is used for"})
	Oversize = add(Setting{Key: "oversize", Env: envvars.Oversize, Functions: Predictor, Kind: Choice, Default: OversizeDownscale, Optional: true,
		Allowed: []string{OversizeDownscale, OversizeReject}, Doc: "what becomes of a photo over maxImageBytes"})
	DownscaleMaxSidePx = add(Setting{Key: "downscaleMaxSidePx", Env: envvars.DownscaleMaxSide, Functions: Predictor, Kind: Int,
		Default: "4096", Min: MinDownscaleMaxSide, Max: 16384, Doc: "longest side of a downscaled photo"})
	// Up to SQS's 12 hours, the longest a message can wait.
	MaxServerDelaySeconds = add(Setting{Key: "maxServerDelaySeconds", Env: envvars.MaxServerDelay, Functions: Predictor, Kind: Int,
		Default: "300", Min: 1, Max: 43200, Doc: "the longest wait for any delay the service asks for"})
	UploadMetadata = add(Setting{Key: "uploadMetadata", Env: envvars.UploadMetadata, Functions: Predictor, Kind: Choice,
		Default: UploadMetadataStrip, Optional: true, Allowed: []string{UploadMetadataStrip, UploadMetadataKeep},
		Doc: "what of a photo's metadata the service receives"})
	ReuseResults = add(Setting{Key: "reuseResults", Env: envvars.ReuseResults, Functions: Predictor, Kind: Choice,
		Default: ReuseContent, Optional: true, Allowed: []string{ReuseContent, ReuseOff},
		Doc: "content: pay once per photo; off: once per object version"})
	ReuseMaxAgeDays = add(Setting{Key: "reuseMaxAgeDays", Env: envvars.ReuseMaxAgeDays, Functions: Predictor, Kind: Int, Default: "0",
		Min: 0, Max: 36500, Doc: "the oldest answer reused, in days; 0 is no limit"})
	// New accounts may start at 10; Service Quotas raises it.
	AccountConcurrencyLimit = add(Setting{Key: "accountConcurrencyLimit", Kind: Int, Default: "1000", Min: 10, Max: 1_000_000,
		Doc: "the account's Lambda concurrency quota in the region"})
	Notifications = add(Setting{Key: "notifications", Kind: Choice, Optional: true,
		Allowed: []string{NotificationsS3, NotificationsEventBridge},
		Want:    "empty (eventbridge for an existing bucket, s3 for the stack's own), s3 or eventbridge",
		Doc:     "how uploads reach the queue: s3 or eventbridge"})
	Events = add(Setting{Key: "events", Kind: Bool, Default: "true",
		Doc: "publish every final record as an EventBridge event"})
	EventBusName = add(Setting{Key: "eventBusName", Kind: Text, Optional: true, Pattern: eventBusNamePattern,
		Want: "empty or the name of an existing event bus of the stack's account and region (not an ARN)",
		Doc:  "an existing bus for the result events; empty: the default bus"})
)

// checkAPIURL requires an absolute https URL without credentials, query or
// fragment: the key travels in a header, never in the URL.
func checkAPIURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s, "?") {
		return fmt.Errorf("not an https base URL")
	}
	return nil
}

// keyFilterWant: what s3keyfilter.Check takes (its error says which rule a
// value breaks, quoting S3's). A constant: the table is built in the
// order of its declarations.
const keyFilterWant = "empty or an S3 key fragment of at most 1024 characters once URL-encoded, not starting with /, with none of the characters S3 says to avoid in keys (" + s3keyfilter.Avoid + ") and no non-printable one"

// checkKeyFilter: the bucket's notification filter gets the encoded form,
// so what S3 would not match (or not take) is refused before synth.
func checkKeyFilter(s string) error { return s3keyfilter.Check(s) }

func checkEmail(s string) error {
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Address != s {
		return fmt.Errorf("not a plain address")
	}
	return nil
}
