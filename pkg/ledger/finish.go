package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/geolocate-aws/geolocate/pkg/shared/resultevents"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// Complete records a successful call: the record becomes succeeded with the
// result fields of result (model, prediction, location, clusters or
// predictions, raw result, timings, and Size and ContentType when set).
// Identity and bookkeeping fields of result are ignored: they come from the
// claim. The write is conditional on the claim's owner token; if another
// claim has taken the record since, nothing is written and ErrClaimLost is
// returned. A late Complete of the same claim after MarkOutcomeUnknown does
// land: its result is real and was paid for.
//
// A record DynamoDB refuses as invalid (ValidationException: over its
// 400 KB item limit, a number beyond its range) will be refused again
// however often it is sent, and it is the only record of a paid call: it is
// written again at once without its result (see reduced), and Complete
// returns an error wrapping ErrResultReduced once that landed.
func (s *Store) Complete(ctx context.Context, claim *Claim, result Record) error {
	result.ErrorCode, result.ErrorMessage = "", ""
	return s.finishCall(ctx, claim, result, StatusSucceeded)
}

// FailCharged records a charged answer that could not be used (a 2xx the
// client could not read, or whose locations are impossible) as a final
// failure that keeps what was paid: code and message, the credits, the
// prediction id and model when known and the raw body (bounded by
// MaxRawResultBytes), with Complete's conditions and its reduced fallback.
func (s *Store) FailCharged(ctx context.Context, claim *Claim, code, message string, result Record) error {
	result.ErrorCode, result.ErrorMessage = code, message
	return s.finishCall(ctx, claim, result, StatusFailed)
}

// finishCall is Complete and FailCharged: one PutItem of the whole record
// with status, conditional on the claim's owner token.
func (s *Store) finishCall(ctx context.Context, claim *Claim, result Record, status string) error {
	if !claim.Acquired() {
		return fmt.Errorf("complete: %w", ErrNotAcquired)
	}
	now := s.now()
	rec := result
	rec.PK, rec.SK = claim.Ref.PartitionKey(), claim.Ref.SortKey()
	rec.Bucket, rec.Key = claim.Ref.Bucket, claim.Ref.Key
	rec.VersionID, rec.ETag = claim.Ref.VersionID, claim.Ref.ETag
	rec.Run = claim.Ref.Run
	if rec.Size == 0 && claim.Record != nil {
		rec.Size = claim.Record.Size
	}
	if rec.ContentType == "" && claim.Record != nil {
		rec.ContentType = claim.Record.ContentType
	}
	rec.Status = status
	rec.EventType = resultevents.DetailType(rec.Status)
	rec.Phase = ""
	rec.Owner = claim.Token
	rec.LeaseUntil = time.Time{}
	rec.Retryable = false
	rec.Attempts = claim.Attempt
	rec.ErrorMessage = truncateUTF8(rec.ErrorMessage, MaxErrorMessageBytes)
	rec.RawResult = truncateUTF8(rec.RawResult, MaxRawResultBytes)
	rec.CreatedAt = now
	if claim.Record != nil && !claim.Record.CreatedAt.IsZero() {
		rec.CreatedAt = claim.Record.CreatedAt
	}
	rec.UpdatedAt = now
	rec.StatusDay = statusDay(rec.Status, now)
	rec.ExpiresAt = s.expiresAt(now)

	err := s.putOwned(ctx, claim, &rec)
	var apiErr smithy.APIError
	if err == nil || !errors.As(err, &apiErr) || apiErr.ErrorCode() != "ValidationException" {
		return err
	}
	small := reduced(&rec, apiErr.ErrorMessage())
	if rerr := s.putOwned(ctx, claim, small); rerr != nil {
		// Only the reduced write's error is wrapped: whether it is worth
		// repeating (throttling) is its own, not the refused record's.
		return fmt.Errorf("write the reduced record after %v: %w", err, rerr)
	}
	return fmt.Errorf("%w: %w", ErrResultReduced, err)
}

// putOwned writes rec whole, on condition that claim still owns it.
func (s *Store) putOwned(ctx context.Context, claim *Claim, rec *Record) error {
	item, err := marshalRecord(rec)
	if err != nil {
		return fmt.Errorf("complete %s: encode record: %w", claim.Ref, err)
	}
	expr, err := expression.NewBuilder().WithCondition(ownedBy(claim.Token)).Build()
	if err != nil {
		return fmt.Errorf("complete %s: build expression: %w", claim.Ref, err)
	}
	_, err = s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 aws.String(s.table),
		Item:                      item,
		ConditionExpression:       expr.Condition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	})
	if _, lost := conditionFailed(err); lost {
		return fmt.Errorf("complete %s: %w", claim.Ref, ErrClaimLost)
	}
	if err != nil {
		return fmt.Errorf("complete %s: %w", claim.Ref, err)
	}
	return nil
}

// reduced is rec without its result, as a final failure DynamoDB accepts
// whatever the result held: identity, bookkeeping and object fields, model,
// prediction id and credits are kept (none comes unchecked from the
// service: the id is a parsed UUID, the model id bounded by the client),
// every location, list and number of the answer is dropped, and the reason
// and a short excerpt of the raw result say what was lost.
func reduced(rec *Record, why string) *Record {
	r := &Record{
		PK: rec.PK, SK: rec.SK, Bucket: rec.Bucket, Key: rec.Key, VersionID: rec.VersionID, ETag: rec.ETag, Run: rec.Run,
		Size: rec.Size, ContentType: rec.ContentType,
		Status: StatusFailed, EventType: resultevents.DetailType(StatusFailed),
		Owner: rec.Owner, Attempts: rec.Attempts,
		ModelID: truncateUTF8(rec.ModelID, maxReducedRawBytes), RequestedModelID: rec.RequestedModelID,
		Fallback: rec.Fallback, PredictionID: rec.PredictionID, CreditsConsumed: rec.CreditsConsumed,
		CreditsReported: rec.CreditsReported, CreditsInvalid: rec.CreditsInvalid,
		ResultType: truncateUTF8(rec.ResultType, maxReducedRawBytes), Source: rec.Source,
		ErrorCode: ErrorCodeResultNotStorable,
		ErrorMessage: truncateUTF8("DynamoDB refused the charged result, recorded without it ("+why+")"+
			errorSuffix(rec), MaxErrorMessageBytes),
		RawResult: truncateUTF8(rec.RawResult, maxReducedRawBytes),
		CreatedAt: rec.CreatedAt, UpdatedAt: rec.UpdatedAt, ExpiresAt: rec.ExpiresAt,
		StatusDay: statusDay(StatusFailed, rec.UpdatedAt),
	}
	return r
}

// errorSuffix keeps the error a failed record already had.
func errorSuffix(rec *Record) string {
	if rec.ErrorCode == "" {
		return ""
	}
	return "; before: " + rec.ErrorCode + ": " + rec.ErrorMessage
}

// Fail records a failed call. retryable=true promises that the service
// certainly did not charge (429, a free 5xx, 402, budget exhausted, S3 read
// error before upload): the record becomes waiting, with code as its cause,
// and the next delivery may claim again. retryable=false is final: the
// record becomes failed. The write is conditional on the claim's owner
// token and never turns a succeeded record into another; otherwise
// ErrClaimLost. A retried write whose first try landed (same owner, same
// status and code) returns nil.
func (s *Store) Fail(ctx context.Context, claim *Claim, code, message string, retryable bool) error {
	if err := s.endClaim(ctx, claim, code, message, retryable, time.Time{}); err != nil {
		return fmt.Errorf("fail %s: %w", claim.Ref, err)
	}
	return nil
}

// Release gives an acquired claim back before any call, as Fail does with
// retryable=true (the record becomes waiting, with code and detail), and
// records slot as the call slot it holds (Record.SlotAt): the object's
// message goes back to the queue until then, and the delivery that claims
// it next calls at that slot instead of queueing again. A zero slot holds
// none.
func (s *Store) Release(ctx context.Context, claim *Claim, code, detail string, slot time.Time) error {
	if err := s.endClaim(ctx, claim, code, detail, true, slot); err != nil {
		return fmt.Errorf("release %s: %w", claim.Ref, err)
	}
	return nil
}

// endClaim is Fail and Release: one write conditional on the claim's owner
// token, never over a success.
func (s *Store) endClaim(ctx context.Context, claim *Claim, code, message string, retryable bool, slot time.Time) error {
	if !claim.Acquired() {
		return ErrNotAcquired
	}
	now := s.now()
	status := StatusFailed
	if retryable {
		status = StatusWaiting
	}
	cond := ownedBy(claim.Token).And(expression.Name(attrStatus).NotEqual(expression.Value(StatusSucceeded)))
	update := s.setTimestamps(expression.UpdateBuilder{}, status, now).
		Set(expression.Name(attrRetryable), expression.Value(retryable)).
		Set(expression.Name(attrErrorCode), expression.Value(code)).
		Set(expression.Name(attrErrorMessage), expression.Value(truncateUTF8(message, MaxErrorMessageBytes))).
		Remove(expression.Name(attrPhase)).
		Remove(expression.Name(attrLeaseUntil))
	if slot.IsZero() {
		update = update.Remove(expression.Name(attrSlotAt))
	} else {
		update = update.Set(expression.Name(attrSlotAt), expression.Value(formatTimestamp(slot)))
	}
	_, err := s.update(ctx, claim.Ref, cond, update)
	if _, lost := conditionFailed(err); lost {
		return ErrClaimLost
	}
	return err
}

// MarkWaiting records why an object that no attempt holds waits, for a
// delivery stopped before its claim (the key cannot be read, say) or whose
// message is returned on its last allowed receive (deadLetter: SQS moves it
// to the dead-letter queue, so it waits for a redrive). An absent record
// becomes waiting with code and detail; a claimable one (waiting, or see
// ReasonObjectNotFound) takes the new cause and keeps dead_letter once set:
// the condition is Claim's, so what a delivery may claim is exactly what it
// may mark waiting. A record held by an attempt or final is left alone
// (nil): its own state already tells the truth.
func (s *Store) MarkWaiting(ctx context.Context, ref ObjectRef, code, detail string, deadLetter bool) error {
	if err := ref.validate(); err != nil {
		return fmt.Errorf("mark waiting: %w", err)
	}
	now := s.now()
	update := s.setTimestamps(expression.UpdateBuilder{}, StatusWaiting, now).
		Set(expression.Name(attrBucket), expression.Value(ref.Bucket)).
		Set(expression.Name(attrKey), expression.Value(ref.Key)).
		Set(expression.Name(attrRetryable), expression.Value(true)).
		Set(expression.Name(attrErrorCode), expression.Value(code)).
		Set(expression.Name(attrErrorMessage), expression.Value(truncateUTF8(detail, MaxErrorMessageBytes))).
		Set(expression.Name(attrCreatedAt), expression.IfNotExists(expression.Name(attrCreatedAt), expression.Value(formatTimestamp(now))))
	if deadLetter {
		update = update.Set(expression.Name(attrDeadLetter), expression.Value(true))
	}
	update = setIdentity(update, ref)
	_, err := s.update(ctx, ref, claimable(), update)
	if _, failed := conditionFailed(err); failed {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mark waiting %s: %w", ref, err)
	}
	return nil
}

// setIdentity adds the version id and ETag of ref to an update that may
// create the item.
func setIdentity(u expression.UpdateBuilder, ref ObjectRef) expression.UpdateBuilder {
	if ref.VersionID != "" {
		u = u.Set(expression.Name(attrVersionID), expression.Value(ref.VersionID))
	}
	if ref.ETag != "" {
		u = u.Set(expression.Name(attrETag), expression.Value(ref.ETag))
	}
	if ref.Run != "" {
		u = u.Set(expression.Name(attrRun), expression.Value(ref.Run))
	}
	return u
}

// reopenable reports whether a rejection of ref for reason must stay
// claimable (see ReasonObjectNotFound).
func reopenable(ref ObjectRef, reason string) bool {
	return reason == ReasonObjectNotFound && !ref.Versioned()
}

// MarkOutcomeUnknown finalises a record Claim reported as ClaimExpired: it
// becomes failed, not retryable, with error code outcome_unknown, because
// the vanished attempt may have been charged. The write is conditional on
// the same owner, status in_progress and the lease still expired. If the
// record has meanwhile become final (for example the late attempt completed
// it) nothing is written and nil is returned; if it is live again (a renewed
// or new claim, or a retryable failure) ErrClaimLost is returned.
func (s *Store) MarkOutcomeUnknown(ctx context.Context, rec *Record) error {
	if rec == nil || rec.Owner == "" || rec.Status != StatusInProgress {
		return errors.New("mark outcome unknown: need the in-progress record returned by an expired claim")
	}
	ref := ObjectRef{Bucket: rec.Bucket, Key: rec.Key, VersionID: rec.VersionID, ETag: rec.ETag, Run: rec.Run}
	now := s.now()
	cond := ownedBy(rec.Owner).
		And(expression.Name(attrStatus).Equal(expression.Value(StatusInProgress))).
		And(expression.Name(attrLeaseUntil).LessThanEqual(expression.Value(now.Unix())))
	msg := fmt.Sprintf("attempt %d claimed the object and its lease expired at %s without a recorded outcome; the service may have charged, so it is not called again",
		rec.Attempts, rec.LeaseUntil.UTC().Format(time.RFC3339))
	update := s.setTimestamps(expression.UpdateBuilder{}, StatusFailed, now).
		Set(expression.Name(attrRetryable), expression.Value(false)).
		Set(expression.Name(attrErrorCode), expression.Value(ErrorCodeOutcomeUnknown)).
		Set(expression.Name(attrErrorMessage), expression.Value(msg)).
		Remove(expression.Name(attrPhase)).
		Remove(expression.Name(attrLeaseUntil)).
		Remove(expression.Name(attrSlotAt))
	pk, sk := rec.PK, rec.SK
	if pk == "" || sk == "" {
		pk, sk = ref.PartitionKey(), ref.SortKey()
	}
	_, err := s.updateKey(ctx, pk, sk, cond, update)
	if item, failed := conditionFailed(err); failed {
		current, err := s.existing(ctx, ref, item)
		if err != nil {
			return fmt.Errorf("mark outcome unknown %s: %w", ref, err)
		}
		if current.Final() {
			return nil
		}
		return fmt.Errorf("mark outcome unknown %s: %w", ref, ErrClaimLost)
	}
	if err != nil {
		return fmt.Errorf("mark outcome unknown %s: %w", ref, err)
	}
	return nil
}

// Reject records a rejection without any call (folder marker, empty
// object, too large, not an image...): reason goes to error_code and detail
// to error_message. It is final, except object_not_found on a record keyed
// by ETag (see ReasonObjectNotFound). It writes only over an absent or a
// claimable record, so it never overwrites a success. If the record is already
// final, Reject is a no-op and returns nil; if it is in progress, it returns
// ErrInProgress.
func (s *Store) Reject(ctx context.Context, ref ObjectRef, reason, detail string, info ObjectInfo) error {
	if err := ref.validate(); err != nil {
		return fmt.Errorf("reject: %w", err)
	}
	now := s.now()
	update := s.setTimestamps(expression.UpdateBuilder{}, StatusRejected, now).
		Set(expression.Name(attrBucket), expression.Value(ref.Bucket)).
		Set(expression.Name(attrKey), expression.Value(ref.Key)).
		Set(expression.Name(attrErrorCode), expression.Value(reason)).
		Set(expression.Name(attrErrorMessage), expression.Value(truncateUTF8(detail, MaxErrorMessageBytes))).
		Set(expression.Name(attrCreatedAt), expression.IfNotExists(expression.Name(attrCreatedAt), expression.Value(formatTimestamp(now)))).
		Remove(expression.Name(attrOwner)).
		Remove(expression.Name(attrLeaseUntil)).
		Remove(expression.Name(attrPhase)).
		Remove(expression.Name(attrDeadLetter)).
		Remove(expression.Name(attrSlotAt))
	update = setRejectionRetryable(update, ref, reason)
	update = setIdentity(update, ref)
	if info.Size > 0 {
		update = update.Set(expression.Name(attrSize), expression.Value(info.Size))
	}
	if info.ContentType != "" {
		update = update.Set(expression.Name(attrContentType), expression.Value(info.ContentType))
	}
	_, err := s.update(ctx, ref, claimable(), update)
	if item, failed := conditionFailed(err); failed {
		current, err := s.existing(ctx, ref, item)
		if err != nil {
			return fmt.Errorf("reject %s: %w", ref, err)
		}
		if current.Final() {
			return nil
		}
		return fmt.Errorf("reject %s: %w", ref, ErrInProgress)
	}
	if err != nil {
		return fmt.Errorf("reject %s: %w", ref, err)
	}
	return nil
}

// RejectClaimed turns an acquired claim into a final rejection, for an
// object found unfit only after it was claimed (not an image, or gone from
// S3) and before any call was made. The record gets what Reject writes:
// status rejected, reason in error_code, detail in error_message, size and
// content type from info, timestamps, and no owner, phase or lease; the
// attempt count of the claim stays. The write is conditional on the claim's
// owner token and the record still being in progress; otherwise
// ErrClaimLost. A retried write that already landed (the record is rejected
// for the same reason) returns nil.
func (s *Store) RejectClaimed(ctx context.Context, claim *Claim, reason, detail string, info ObjectInfo) error {
	if !claim.Acquired() {
		return fmt.Errorf("reject claimed: %w", ErrNotAcquired)
	}
	ref := claim.Ref
	now := s.now()
	cond := ownedBy(claim.Token).And(expression.Name(attrStatus).Equal(expression.Value(StatusInProgress)))
	update := s.setTimestamps(expression.UpdateBuilder{}, StatusRejected, now).
		Set(expression.Name(attrErrorCode), expression.Value(reason)).
		Set(expression.Name(attrErrorMessage), expression.Value(truncateUTF8(detail, MaxErrorMessageBytes))).
		Remove(expression.Name(attrOwner)).
		Remove(expression.Name(attrLeaseUntil)).
		Remove(expression.Name(attrPhase)).
		Remove(expression.Name(attrSlotAt))
	update = setRejectionRetryable(update, ref, reason)
	if info.Size > 0 {
		update = update.Set(expression.Name(attrSize), expression.Value(info.Size))
	}
	if info.ContentType != "" {
		update = update.Set(expression.Name(attrContentType), expression.Value(info.ContentType))
	}
	update = setContent(update, info)
	_, err := s.update(ctx, ref, cond, update)
	if item, failed := conditionFailed(err); failed {
		current, err := s.existing(ctx, ref, item)
		if err != nil {
			return fmt.Errorf("reject claimed %s: %w", ref, err)
		}
		if current.Status == StatusRejected && current.ErrorCode == reason {
			return nil
		}
		return fmt.Errorf("reject claimed %s: %w", ref, ErrClaimLost)
	}
	if err != nil {
		return fmt.Errorf("reject claimed %s: %w", ref, err)
	}
	return nil
}

// setRejectionRetryable marks a rejection claimable or final.
func setRejectionRetryable(u expression.UpdateBuilder, ref ObjectRef, reason string) expression.UpdateBuilder {
	if reopenable(ref, reason) {
		return u.Set(expression.Name(attrRetryable), expression.Value(true))
	}
	return u.Remove(expression.Name(attrRetryable))
}

// claimable is the condition under which a record may be (re)started:
// absent, or marked retryable (nothing was charged for it).
func claimable() expression.ConditionBuilder {
	return expression.Name(tableschema.PartitionKey).AttributeNotExists().Or(
		expression.Name(attrRetryable).Equal(expression.Value(true)))
}

func ownedBy(token string) expression.ConditionBuilder {
	return expression.Name(attrOwner).Equal(expression.Value(token))
}

func (s *Store) update(ctx context.Context, ref ObjectRef, cond expression.ConditionBuilder, update expression.UpdateBuilder) (*dynamodb.UpdateItemOutput, error) {
	return s.updateKey(ctx, ref.PartitionKey(), ref.SortKey(), cond, update)
}

// updateKey runs one conditional update, returning the old item with a
// failed condition.
func (s *Store) updateKey(ctx context.Context, pk, sk string, cond expression.ConditionBuilder, update expression.UpdateBuilder) (*dynamodb.UpdateItemOutput, error) {
	expr, err := expression.NewBuilder().WithCondition(cond).WithUpdate(update).Build()
	if err != nil {
		return nil, fmt.Errorf("build expression: %w", err)
	}
	return s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(s.table),
		Key:                                 itemKey(pk, sk),
		ConditionExpression:                 expr.Condition(),
		UpdateExpression:                    expr.Update(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
}

// Reopen makes a final failed record with error code code waiting again,
// so the next delivery may claim and call. It is an operator's deliberate
// choice (geolocate backfill --requeue-unknown): for an outcome_unknown
// record the service may already have charged once. It returns
// ErrNotReopenable when the record is not a final failure with that code.
func (s *Store) Reopen(ctx context.Context, ref ObjectRef, code string) error {
	if err := ref.validate(); err != nil {
		return err
	}
	cond := expression.Name(attrStatus).Equal(expression.Value(StatusFailed)).
		And(expression.Name(attrRetryable).Equal(expression.Value(false))).
		And(expression.Name(attrErrorCode).Equal(expression.Value(code)))
	update := s.setTimestamps(expression.UpdateBuilder{}, StatusWaiting, s.now()).
		Set(expression.Name(attrRetryable), expression.Value(true))
	_, err := s.updateKey(ctx, ref.PartitionKey(), ref.SortKey(), cond, update)
	if _, failed := conditionFailed(err); failed {
		return fmt.Errorf("reopen %s: %w", ref, ErrNotReopenable)
	}
	if err != nil {
		return fmt.Errorf("reopen %s: %w", ref, err)
	}
	return nil
}
