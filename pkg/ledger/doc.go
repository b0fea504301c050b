// Package ledger is the exactly-once record store of the pipeline: one
// DynamoDB item per S3 object version, moved through a small state machine
// with conditional writes so that, whatever SQS redelivers or runs
// concurrently, at most one paid prediction call is made per object version.
//
// The life of a record:
//
//	(absent) --Claim--> in_progress --Complete--> succeeded
//	                        |        --Fail(retryable)--> waiting --Claim--> in_progress ...
//	                        |        --Fail(final)------> failed
//	                        |        --RejectClaimed----> rejected (unfit, found before any call)
//	                        `--lease expired, MarkOutcomeUnknown--> failed (outcome_unknown)
//	(absent or waiting) --Reject--> rejected
//	(absent or waiting) --MarkWaiting--> waiting (cause; dead_letter on the last receive)
//
// Claim is the only way to start a paid call and is a single conditional
// write. It succeeds only for an absent item or a claimable one (waiting,
// or an ETag-keyed object_not_found, see ReasonObjectNotFound), so
// a redelivery of a finished object is a no-op (ClaimDone), a concurrent
// delivery backs off (ClaimBusy), and an attempt that crashed after claiming
// (ClaimExpired: it may have been charged) is never called again but
// finalised with MarkOutcomeUnknown.
//
// Complete, Fail and RejectClaimed are conditional on the claim's owner
// token, so a stale attempt can never overwrite the record of a newer one
// (ErrClaimLost).
//
// The package also keeps an atomic daily credit counter (ReserveCredits,
// ReleaseCredits) and lists records by status through the table's by-status
// index (Query).
package ledger
