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
)

// Monitor metrics.
const (
	CreditsRemaining         = "CreditsRemaining"         // Count
	SubscriptionCredits      = "SubscriptionCredits"      // Count, remaining subscription allowance when shown
	TopUpCredits             = "TopUpCredits"             // Count, top-up balance when shown
	CreditBurnPerDay         = "CreditBurnPerDay"         // Count per day, from the reading history
	CreditDaysRemaining      = "CreditDaysRemaining"      // days until credits run out at the current burn rate
	ModelsReady              = "ModelsReady"              // Count
	ModelsDown               = "ModelsDown"               // Count
	ModelsUnknown            = "ModelsUnknown"            // Count
	ModelReady               = "ModelReady"               // 1 or 0, with DimModelID
	ConfiguredModelAvailable = "ConfiguredModelAvailable" // 1 when the configured model (or the default path) is listed and ready
	MonitorHealthy           = "MonitorHealthy"           // 1 on a full success, 0 otherwise
)
