package predictor

import (
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// outcomeKind is what became of one object in this delivery.
type outcomeKind int

const (
	outcomeSucceeded outcomeKind = iota + 1 // a prediction was recorded
	outcomeRejected                         // a rejected record was written, no call
	outcomeFailed                           // a final failed record was written
	outcomeDuplicate                        // already recorded or handled elsewhere: nothing to do
	outcomeIgnored                          // not ours to process (other bucket)
	outcomeRetry                            // must be delivered again later
)

func (k outcomeKind) String() string {
	switch k {
	case outcomeSucceeded:
		return "succeeded"
	case outcomeRejected:
		return "rejected"
	case outcomeFailed:
		return "failed"
	case outcomeDuplicate:
		return "duplicate"
	case outcomeIgnored:
		return "ignored"
	case outcomeRetry:
		return "retry"
	}
	return "unknown"
}

// outcome is the result of processing one object, with a short reason code.
type outcome struct {
	kind   outcomeKind
	reason string
	// delay, when delayed, is how long a retry's message stays hidden
	// before its next delivery (0: visible again at once); otherwise it
	// comes back after the queue's visibility timeout.
	delay   time.Duration
	delayed bool
	// credits is what the object's call charged (a job's CreditsSpent).
	credits int
}

func retryLater(reason string) outcome { return outcome{kind: outcomeRetry, reason: reason} }

// after sets how long the retry's message waits before its next delivery.
func (o outcome) after(d time.Duration) outcome {
	o.delay, o.delayed = max(d, 0), true
	return o
}

// Reasons of rejections, written to the record's error_code and used as the
// Reason metric dimension.
const (
	ReasonFolderMarker = "folder_marker"
	ReasonEmptyObject  = "empty_object"
	ReasonTooLarge     = "too_large"
	ReasonNotAnImage   = "not_an_image"
	// ReasonUnsupportedFormat: the service refused the file's type (the
	// public backend's 400 INVALID_FILE_TYPE); the same bytes would be
	// refused again.
	ReasonUnsupportedFormat = "unsupported_format"
	ReasonObjectNotFound    = ledger.ReasonObjectNotFound
	// ReasonProcessingPanic: processing the object panicked before any
	// call could have charged. The same bytes would panic again, so it is
	// final: retrying would only spend the message's receives.
	ReasonProcessingPanic = "processing_panic"
)

// Reasons of retries (logged, never recorded as final).
const (
	retryBusy           = "claimed_elsewhere"
	retryOutOfCredits   = "out_of_credits"
	retryBudget         = "budget_exhausted"
	retryRateWait       = "rate_wait_timeout"
	retryStorage        = "storage_error"
	retryLedger         = "ledger_error"
	retryKeyUnavailable = CodeKeyUnavailable
	retryDeadline       = "deadline_near"
)
