// Package envvars names the environment variables the functions read. The
// CDK stack sets them and the functions' configuration parses them; one list
// keeps the two from disagreeing.
package envvars

const (
	TableName        = "TABLE_NAME"              // results table
	SecretID         = "GEO_SECRET_ID"           // Secrets Manager id or ARN of the geo_ key
	APIURL           = "GEO_API_URL"             // service base URL
	APIKey           = "GEO_API_KEY"             // local runs only: the key itself, used when GEO_SECRET_ID is unset
	APIKeyHeader     = "GEO_API_KEY_HEADER"      // the request header carrying the key; default the contract's X-Service-Key
	TopN             = "GEO_TOP_N"               // optional, 1..15; unset means the service default
	ModelID          = "GEO_MODEL_ID"            // optional; unset means the service's default model (recommended)
	ModelFallback    = "GEO_MODEL_FALLBACK"      // "true" (default) or "false"
	RatePerMinute    = "GEO_RATE_PER_MINUTE"     // account-wide requests per minute
	MaxConcurrency   = "GEO_MAX_CONCURRENCY"     // the queue event source's maximum concurrency
	Pacing           = "GEO_PACING"              // "shared" (default): one schedule in the table; "instance": R/N each
	DailyBudget      = "GEO_DAILY_CREDIT_BUDGET" // 0 or unset: no budget
	ClaimLease       = "CLAIM_LEASE"             // Go duration, how long an in-progress claim blocks others
	RecordTTLDays    = "RECORD_TTL_DAYS"         // 0 or unset: records never expire
	BucketName       = "BUCKET_NAME"             // optional: events for other buckets are ignored
	MaxImageBytes    = "MAX_IMAGE_BYTES"         // the service's upload limit; default 10,000,000 (the contract's 10 MB)
	MaxReceiveCount  = "MAX_RECEIVE_COUNT"       // the queue's redrive maxReceiveCount; 0 or unset: unknown
	FinishReserve    = "FINISH_RESERVE"          // Go duration kept before Lambda's deadline to record a paid result
	ExifGPS          = "GEO_EXIF_GPS"            // "predict" (default): call and compare with the EXIF position; "skip": no call for a photo with a valid EXIF position; "ignore": EXIF GPS unused
	Oversize         = "GEO_OVERSIZE"            // "downscale" (default): JPEG/PNG/WebP over MAX_IMAGE_BYTES re-encoded under it; "reject": rejected as too_large
	DownscaleMaxSide = "GEO_DOWNSCALE_MAX_SIDE"  // longest side in pixels of a downscaled photo; default 4096
	UploadMetadata   = "GEO_UPLOAD_METADATA"     // "strip" (default): the photo's metadata is blanked before upload; "keep": sent as stored
	ReuseResults     = "GEO_REUSE_RESULTS"       // "content" (default): an answer is reused for objects with the same content and request; "off": paid per object version
	ReuseMaxAgeDays  = "GEO_REUSE_MAX_AGE_DAYS"  // oldest answer reused, in days; 0 or unset: no limit
	CreditsPath      = "GEO_CREDITS_PATH"        // monitor: optional JSON path of "remaining credits"
	HistoryTTLDays   = "HISTORY_TTL_DAYS"        // monitor: how long credit readings are kept
	EventBusName     = "EVENT_BUS_NAME"          // monitor: the bus of its Model Available events; unset: none published
	MapMaxRecords    = "MAP_MAX_RECORDS"         // map widget: most records read per drawing, newest first; default 10,000
	MetricNamespace  = "METRIC_NAMESPACE"
	PipelineName     = "PIPELINE_NAME" // value of the Pipeline metric dimension
	LogLevel         = "LOG_LEVEL"

	// FunctionMemorySize is the function's memory in MB, which Lambda sets
	// itself (the stack cannot: the name is reserved). Locally the rig
	// passes it through; unset means the stack's default
	// (predictor.DefaultMemoryMB, which a test holds to cdk.json's
	// predictorMemoryMb: no figure here to drift from them).
	FunctionMemorySize = "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"
)

// MaxServerDelay caps any delay the service asks for (a 429's or a 503's),
// in whole seconds; default 300.
const MaxServerDelay = "GEO_MAX_SERVER_DELAY_SECONDS"

// What the predictor is told of its own deployment, for the rules of
// pkg/shared/configrules: unset means unknown, and the rule that needs the
// value is skipped.
const (
	BatchSize       = "BATCH_SIZE"       // the queue event source's batch size
	FunctionTimeout = "FUNCTION_TIMEOUT" // Go duration: the function's timeout, which Lambda does not expose
	// The function's memory is FunctionMemorySize, above.
)
