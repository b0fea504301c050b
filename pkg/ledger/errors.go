package ledger

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

var (
	// ErrClaimLost means the record is no longer held by the caller's claim:
	// a newer claim took it over, or it was finalised meanwhile. The caller
	// must not retry the write; the record already tells the truth.
	ErrClaimLost = errors.New("ledger: claim lost")

	// ErrNotAcquired is returned when Complete or Fail is given a claim whose
	// outcome was not ClaimAcquired.
	ErrNotAcquired = errors.New("ledger: claim was not acquired")

	// ErrInProgress means Reject found the object claimed by a running
	// attempt; the caller should retry the message later.
	ErrInProgress = errors.New("ledger: object is being processed")

	// ErrReleaseExceedsReserved means ReleaseCredits was asked to give back
	// more credits than the day's counter holds.
	ErrReleaseExceedsReserved = errors.New("ledger: release exceeds reserved credits")

	// ErrResultReduced means Complete's record was refused by DynamoDB as
	// invalid (ValidationException: an item over 400 KB, a number out of
	// range) and was written again reduced: failed with
	// ErrorCodeResultNotStorable, its credits and prediction id kept, the
	// result dropped. The record is final; the write must not be retried.
	ErrResultReduced = errors.New("ledger: result not storable, recorded without it")

	// ErrNotReopenable means Reopen found no final failure with the given
	// error code (absent, succeeded, rejected, in progress, or another code).
	ErrNotReopenable = errors.New("ledger: record is not a final failure with that code")
)

// conditionFailed reports whether err is a failed condition and returns the
// item DynamoDB sent back with it (ReturnValuesOnConditionCheckFailure).
func conditionFailed(err error) (map[string]types.AttributeValue, bool) {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return ccf.Item, true
	}
	return nil, false
}
