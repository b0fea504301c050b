// Package metricnames is the one list of CloudWatch metric names and
// dimensions. The functions emit them (as Embedded Metric Format) and the CDK
// stack alarms and graphs on them; sharing the constants keeps both in step.
package metricnames

// DefaultNamespace is used when METRIC_NAMESPACE is not set.
const DefaultNamespace = "Geolocation"

// Dimensions. Every metric carries DimPipeline (the stack name), so two stacks
// in one account never mix their figures.
const (
	DimPipeline = "Pipeline"
	DimModelID  = "ModelId"
	DimReason   = "Reason"
	// DimThreshold names an accuracy level of geodist.Thresholds
	// ("street", "city", "region", "country", "continent").
	DimThreshold = "Threshold"
)

// Predictor metrics.
const (
	ImagesSucceeded    = "ImagesSucceeded"    // Count
	ImagesRejected     = "ImagesRejected"     // Count; also by DimReason
	ImagesFailed       = "ImagesFailed"       // Count; also by DimReason
	CreditsConsumed    = "CreditsConsumed"    // Count
	ServiceLatency     = "ServiceLatency"     // Milliseconds, round trip of the successful call
	RateLimited        = "RateLimited"        // Count of 429 responses seen
	DuplicatesSkipped  = "DuplicatesSkipped"  // Count of deliveries that found the object already claimed or done
	ModelFallbacks     = "ModelFallbacks"     // Count of retired-model fallbacks to the default model
	OutOfCredits       = "OutOfCredits"       // Count of 402 responses
	BudgetDeferred     = "BudgetDeferred"     // Count of messages held back by the daily credit budget
	ImagesRetried      = "ImagesRetried"      // Count of messages returned to the queue for a later attempt
	ImagesDeadLettered = "ImagesDeadLettered" // Count, by Reason, of objects whose message was returned on its last receive (now in the dead-letter queue)
	// PredictionErrorKm is the great-circle distance, in km, from the top
	// prediction to the photo's EXIF position, one value per photo that has
	// both (Unit None: CloudWatch has no km). Also by DimModelID, so each
	// model's accuracy can be followed over time. Its SampleCount is the
	// number of photos the shares below are taken of.
	PredictionErrorKm = "PredictionErrorKm"
	// PredictionsWithin counts, by DimThreshold (and by DimThreshold and
	// DimModelID), the photos whose error is within that threshold: the
	// share is PredictionsWithin / SampleCount(PredictionErrorKm).
	PredictionsWithin = "PredictionsWithin"
	ImagesFromEXIF    = "ImagesFromEXIF"   // Count of photos recorded from their EXIF position without a call (exifGps=skip)
	ImagesDownscaled  = "ImagesDownscaled" // Count of photos over the size limit sent downscaled
	// ImagesReused counts objects recorded with the answer paid for by
	// another object with the same content and request, without a call;
	// CreditsSaved adds the credits those answers cost their payer.
	ImagesReused = "ImagesReused" // Count
	CreditsSaved = "CreditsSaved" // Count

	// CreditFiguresInvalid counts paid answers whose credits_consumed
	// could not be a charge (negative, fractional, not a JSON number,
	// absurdly large): each is counted as the credits its call reserved.
	CreditFiguresInvalid = "CreditFiguresInvalid" // Count
)

// Monitor metrics.
const (
	CreditsRemaining = "CreditsRemaining" // Count, read from the service's credit summary
	// CreditsEstimated is the balance the monitor estimates when the credit
	// summary takes no API keys: the last balance read or declared, minus
	// the credits the pipeline's records show consumed since. Count.
	CreditsEstimated = "CreditsEstimated"
	// CreditSummaryReadable is 1 when the credit summary was read with the
	// key, 0 when the service refuses API keys on it (a known state: the
	// credit watch then rests on CreditsEstimated).
	CreditSummaryReadable    = "CreditSummaryReadable"
	SubscriptionCredits      = "SubscriptionCredits"      // Count, remaining subscription allowance when shown
	TopUpCredits             = "TopUpCredits"             // Count, top-up balance when shown
	CreditBurnPerDay         = "CreditBurnPerDay"         // Count per day, from the reading history
	CreditDaysRemaining      = "CreditDaysRemaining"      // days until credits run out at the current burn rate
	ModelsReady              = "ModelsReady"              // Count
	ModelsDown               = "ModelsDown"               // Count
	ModelsUnknown            = "ModelsUnknown"            // Count
	ModelReady               = "ModelReady"               // 1 or 0, with DimModelID
	ConfiguredModelAvailable = "ConfiguredModelAvailable" // 1 when the configured model (or the default path) is listed and ready
	// NewModelsAvailable counts the models that became available since the
	// monitor's last run: a new id in the model list, or a new default
	// model (one Model Available event each). 0 on other runs; absent
	// without the results table, which keeps the last run's list.
	NewModelsAvailable = "NewModelsAvailable" // Count
	MonitorHealthy     = "MonitorHealthy"     // 1 on a full success, 0 otherwise

	// ModelIdsLeftOut counts the model list's ids not published as ModelId
	// dimensions nor watched one by one: all but the ones the pipeline uses
	// when the list holds more than monitor.MaxModelsPublished, and the
	// entries the client refused (an id over geoapi.MaxModelIDBytes). 0 on
	// an ordinary list.
	ModelIdsLeftOut = "ModelIdsLeftOut" // Count
)

// Job metrics (issue 47), published by the monitor from the jobs in the
// results table (pkg/jobs). The pipeline-wide figures carry only
// DimPipeline; the per-job ones also DimJob, for at most
// monitor.MaxJobsPublished jobs, the newest running ones.
const (
	// DimJob is a job's id (j-<yyyymmdd>-<6 base32>).
	DimJob = "Job"

	// JobsRunning counts the jobs that are listing or feeding (paused
	// jobs included, cancelled and done ones not). Count; DimPipeline only.
	JobsRunning = "JobsRunning"
	// JobObjectsRemaining is what a job has yet to settle: listed or still
	// to list, not done, failed or skipped. Count; with DimJob.
	JobObjectsRemaining = "JobObjectsRemaining"
	// JobObjectsDone counts a job's objects that ended (done, failed or
	// skipped). Count; with DimJob.
	JobObjectsDone = "JobObjectsDone"
	// JobCreditsSpent is the credits a job's calls have cost so far.
	// Count; with DimJob.
	JobCreditsSpent = "JobCreditsSpent"
	// JobEtaHours is the hours until the job finishes at its rate, from
	// what remains. None; with DimJob.
	JobEtaHours = "JobEtaHours"
	// JobMinutesSinceProgress is how long a running, unpaused job has gone
	// without listing, sending or settling anything. With DimJob for each
	// job; with DimPipeline alone, the largest over the running, unpaused
	// jobs, 0 when there is none: the series JobStalled alarms on, present
	// on every monitor run so that the alarm clears when the job ends.
	JobMinutesSinceProgress = "JobMinutesSinceProgress"
)
