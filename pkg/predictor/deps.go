package predictor

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// The Handler depends on narrow interfaces, each satisfied by the real
// client (*s3.Client, *ledger.Store, *geoapi.Client, secretkey.Provider), so
// tests can run it against local parts.

// ObjectStore is the part of *s3.Client the Handler uses: HEAD for sizes
// missing from the event, and one GET that both sniffs the format and
// streams the upload.
type ObjectStore interface {
	HeadObject(ctx context.Context, params *s3.HeadObjectInput, optFns ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
	GetObject(ctx context.Context, params *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

// Ledger is the part of *ledger.Store the Handler uses.
type Ledger interface {
	Claim(ctx context.Context, ref ledger.ObjectRef, lease time.Duration) (*ledger.Claim, ledger.ClaimOutcome, error)
	Complete(ctx context.Context, claim *ledger.Claim, result ledger.Record) error
	Fail(ctx context.Context, claim *ledger.Claim, code, message string, retryable bool) error
	FailCharged(ctx context.Context, claim *ledger.Claim, code, message string, result ledger.Record) error
	Reject(ctx context.Context, ref ledger.ObjectRef, reason, detail string, info ledger.ObjectInfo) error
	RejectClaimed(ctx context.Context, claim *ledger.Claim, reason, detail string, info ledger.ObjectInfo) error
	MarkOutcomeUnknown(ctx context.Context, rec *ledger.Record) error
	MarkWaiting(ctx context.Context, ref ledger.ObjectRef, code, detail string, deadLetter bool) error
	ReserveCredits(ctx context.Context, day string, credits, budget int) (bool, error)
	Release(ctx context.Context, claim *ledger.Claim, code, detail string, slot time.Time) error
	ReleaseCredits(ctx context.Context, day string, credits int) error
	RecordOverspend(ctx context.Context, day string, credits int) error
	ClaimContent(ctx context.Context, c ledger.ContentRef, ref ledger.ObjectRef, lease time.Duration, maxAge ledger.MaxAge) (*ledger.ContentClaim, ledger.ContentOutcome, error)
	EndContent(ctx context.Context, claim *ledger.ContentClaim) error
	// A reprocess run's cap, and the result its answer replaces (read by
	// its key: the predictor's role has no Query on the table).
	ReserveRunCredits(ctx context.Context, run string, credits int) (bool, error)
	ReleaseRunCredits(ctx context.Context, run string, credits int) error
	RecordRunOverspend(ctx context.Context, run string, credits int) error
	Lookup(ctx context.Context, ref ledger.ObjectRef) (*ledger.Record, error)
}

// Jobs is the part of *jobs.Store the Handler uses for a job's messages:
// the job's state (read through a short cache: a paused or cancelled job's
// messages are dropped), a paused job's dropped message (sent again on
// resume), and each object's end added to the job's counters.
type Jobs interface {
	jobs.StateReader
	AddEnd(ctx context.Context, id string, o jobs.Outcome, credits int, now time.Time) error
	Drop(ctx context.Context, id, pos string) error
}

// Service is the paid geolocation service (*geoapi.Client).
type Service interface {
	Predict(ctx context.Context, in *geoapi.PredictInput, optFns ...func(*geoapi.Options)) (*geoapi.PredictOutput, error)
}

// KeyProvider supplies the API key (secretkey.Provider): Key may be cached,
// Refresh fetches the current value after the service refused the key.
type KeyProvider interface {
	Key(ctx context.Context) (string, error)
	Refresh(ctx context.Context) (string, error)
}

// Pacer grants call slots within the account's rate limit (pacer.Shared or
// pacer.Instance). Reserve takes the next slot starting within the given
// time and returns how long until it starts, or an error when none is free
// by then; Throttled reports a 429 and its retry delay; Valid tells whether
// a slot held since an earlier delivery may still be used.
type Pacer interface {
	Reserve(ctx context.Context, within time.Duration) (time.Duration, error)
	Throttled(ctx context.Context, retryAfter time.Duration)
	Valid(ctx context.Context, slot time.Time) (bool, error)
}

// lateAllowancer is a Pacer that tells how late a slot it granted may
// still be used without crowding the next slot's call (pacer.Shared
// against a token bucket); ok false when it cannot tell.
type lateAllowancer interface {
	LateAllowance() (allowance time.Duration, ok bool)
}

// serviceClockLearner is a Pacer that learns where the service's seconds
// begin from the Date of its answers (pacer.Shared): every answer to a
// prediction call is reported to it.
type serviceClockLearner interface {
	Answered(date string, roundTrip time.Duration)
}

// VisibilityChanger delays the redelivery of an SQS message (for example by
// ChangeMessageVisibility), so a message that waits (for its call slot, the
// budget's next day, credits or the key) does not spin through its receive
// count. Optional.
type VisibilityChanger interface {
	ChangeVisibility(ctx context.Context, msg events.SQSMessage, timeout time.Duration) error
}
