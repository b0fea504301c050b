package ledger

// Attribute names of a record item, as Record's dynamodbav tags spell them
// (TestAttributeNamesMatchRecordTags keeps the two in step). The
// conditional writes name attributes through these, so a renamed field
// cannot leave a condition testing an attribute no write sets.
const (
	attrBucket       = "bucket"
	attrKey          = "key"
	attrVersionID    = "version_id"
	attrETag         = "etag"
	attrSize         = "size"
	attrContentType  = "content_type"
	attrStatus       = "status"
	attrPhase        = "phase"
	attrOwner        = "owner"
	attrLeaseUntil   = "lease_until"
	attrRetryable    = "retryable"
	attrDeadLetter   = "dead_letter"
	attrAttempts     = "attempts"
	attrErrorCode    = "error_code"
	attrErrorMessage = "error_message"
	attrCreatedAt    = "created_at"
	attrSlotAt       = "slot_at"
	attrContentSHA   = "content_sha256"
	attrContentReq   = "content_request"
	attrReusedFrom   = "reused_from"
	attrRun          = "run"
)
