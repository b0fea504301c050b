// Package envvars names the environment variables the functions read: the
// one spelling of each name. The settings table (pkg/shared/settings) says
// which context key, type, default and bounds each setting's variable has;
// the others here are what the stack or the local rig tells a function of
// itself (its table, its bucket, its lease).
package envvars

const (
	TableName        = "TABLE_NAME"              // results table
	QueueURL         = "QUEUE_URL"               // job feeder: the upload queue it feeds
	QueueVisibility  = "QUEUE_VISIBILITY"        // job feeder: Go duration, the upload queue's visibility timeout (the stack's, not a setting)
	JobWindowMinutes = "GEO_JOB_WINDOW_MINUTES"  // setting: see pkg/shared/settings
	SecretID         = "GEO_SECRET_ID"           // Secrets Manager id or ARN of the geo_ key
	APIURL           = "GEO_API_URL"             // setting: see pkg/shared/settings
	APIKey           = "GEO_API_KEY"             // local runs only: the key itself, used when GEO_SECRET_ID is unset
	APIKeyHeader     = "GEO_API_KEY_HEADER"      // setting: see pkg/shared/settings
	TopN             = "GEO_TOP_N"               // setting: see pkg/shared/settings
	ModelID          = "GEO_MODEL_ID"            // setting: see pkg/shared/settings
	ModelFallback    = "GEO_MODEL_FALLBACK"      // setting: see pkg/shared/settings
	RatePerMinute    = "GEO_RATE_PER_MINUTE"     // setting: see pkg/shared/settings
	MaxConcurrency   = "GEO_MAX_CONCURRENCY"     // setting: see pkg/shared/settings
	Pacing           = "GEO_PACING"              // setting: see pkg/shared/settings
	DailyBudget      = "GEO_DAILY_CREDIT_BUDGET" // setting: see pkg/shared/settings
	ClaimLease       = "CLAIM_LEASE"             // Go duration, how long an in-progress claim blocks others
	RecordTTLDays    = "RECORD_TTL_DAYS"         // setting: see pkg/shared/settings
	BucketName       = "BUCKET_NAME"             // optional: events for other buckets are ignored
	MaxImageBytes    = "MAX_IMAGE_BYTES"         // setting: see pkg/shared/settings
	MaxReceiveCount  = "MAX_RECEIVE_COUNT"       // setting: see pkg/shared/settings
	FinishReserve    = "FINISH_RESERVE"          // setting: see pkg/shared/settings
	ExifGPS          = "GEO_EXIF_GPS"            // setting: see pkg/shared/settings
	Oversize         = "GEO_OVERSIZE"            // setting: see pkg/shared/settings
	DownscaleMaxSide = "GEO_DOWNSCALE_MAX_SIDE"  // setting: see pkg/shared/settings
	UploadMetadata   = "GEO_UPLOAD_METADATA"     // setting: see pkg/shared/settings
	ReuseResults     = "GEO_REUSE_RESULTS"       // setting: see pkg/shared/settings
	ReuseMaxAgeDays  = "GEO_REUSE_MAX_AGE_DAYS"  // setting: see pkg/shared/settings
	CreditsPath      = "GEO_CREDITS_PATH"        // setting: see pkg/shared/settings
	HistoryTTLDays   = "HISTORY_TTL_DAYS"        // setting: see pkg/shared/settings
	EventBusName     = "EVENT_BUS_NAME"          // monitor: the bus of its Model Available events (the stack's, not a setting); unset: none published
	MapMaxRecords    = "MAP_MAX_RECORDS"         // map widget: most records read per drawing, newest first; default 10,000
	MetricNamespace  = "METRIC_NAMESPACE"
	PipelineName     = "PIPELINE_NAME" // value of the Pipeline metric dimension
	LogLevel         = "LOG_LEVEL"     // setting: see pkg/shared/settings

	// FunctionMemorySize is the function's memory in MB, which Lambda sets
	// itself (the stack cannot: the name is reserved). Locally the rig
	// passes it through; unset means the stack's default
	// (settings.PredictorMemoryMB: no figure here to drift from it).
	FunctionMemorySize = "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"
)

// MaxServerDelay caps any delay the service asks for (a 429's or a 503's),
// in whole seconds: a setting (pkg/shared/settings).
const MaxServerDelay = "GEO_MAX_SERVER_DELAY_SECONDS"

// What the predictor is told of its own deployment, for the rules of
// pkg/shared/configrules: unset means unknown, and the rule that needs the
// value is skipped.
const (
	BatchSize       = "BATCH_SIZE"       // the queue event source's batch size
	FunctionTimeout = "FUNCTION_TIMEOUT" // Go duration: the function's timeout, which Lambda does not expose
	// The function's memory is FunctionMemorySize, above.
)
