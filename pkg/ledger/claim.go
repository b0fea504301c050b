package ledger

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ClaimOutcome says what Claim found.
type ClaimOutcome int

const (
	// ClaimAcquired: the caller holds the object and may make the paid call.
	ClaimAcquired ClaimOutcome = iota + 1
	// ClaimDone: the object version is final (succeeded, rejected, or failed
	// for good). A redelivery is a no-op.
	ClaimDone
	// ClaimBusy: another attempt holds a live lease and is calling right now.
	// Return the message for a later retry.
	ClaimBusy
	// ClaimExpired: an attempt claimed the object and its lease ran out, so it
	// crashed or stalled, possibly after the service charged. Do not call
	// again; finalise with MarkOutcomeUnknown.
	ClaimExpired
)

func (o ClaimOutcome) String() string {
	switch o {
	case ClaimAcquired:
		return "acquired"
	case ClaimDone:
		return "done"
	case ClaimBusy:
		return "busy"
	case ClaimExpired:
		return "expired"
	}
	return fmt.Sprintf("ClaimOutcome(%d)", int(o))
}

// Claim is the result of Store.Claim.
type Claim struct {
	Ref ObjectRef
	// Token is the owner token of an acquired claim; empty otherwise.
	Token string
	// LeaseUntil is when an acquired claim stops blocking other deliveries.
	LeaseUntil time.Time
	// Attempt is the record's attempt count including this claim when
	// acquired.
	Attempt int
	// Record is the item as the claim left it when acquired, or the existing
	// item that stopped the claim otherwise (what MarkOutcomeUnknown takes).
	Record *Record
}

// Acquired reports whether the claim may be used for Complete or Fail.
func (c *Claim) Acquired() bool { return c != nil && c.Token != "" }

// Claim takes the object version for one paid call, in a single conditional
// write made immediately before the call. It succeeds only when no record
// exists or the record is claimable (waiting, or see ReasonObjectNotFound); then the record becomes
// in_progress (phase calling) with a fresh owner token, a lease of lease and
// attempts+1. Otherwise it reports, from the existing record, whether the
// object is done, busy or expired (see ClaimOutcome); the returned Claim
// then carries that record and no token.
func (s *Store) Claim(ctx context.Context, ref ObjectRef, lease time.Duration) (*Claim, ClaimOutcome, error) {
	if err := ref.validate(); err != nil {
		return nil, 0, fmt.Errorf("claim: %w", err)
	}
	if lease <= 0 {
		return nil, 0, fmt.Errorf("claim %s: lease must be positive, got %s", ref, lease)
	}
	now := s.now()
	token := rand.Text()
	leaseUntil := ceilSecond(now.Add(lease))

	update := s.setTimestamps(expression.UpdateBuilder{}, StatusInProgress, now).
		Set(expression.Name(attrPhase), expression.Value(PhaseCalling)).
		Set(expression.Name(attrOwner), expression.Value(token)).
		Set(expression.Name(attrLeaseUntil), expression.Value(leaseUntil.Unix())).
		Set(expression.Name(attrBucket), expression.Value(ref.Bucket)).
		Set(expression.Name(attrKey), expression.Value(ref.Key)).
		Set(expression.Name(attrCreatedAt), expression.IfNotExists(expression.Name(attrCreatedAt), expression.Value(formatTimestamp(now)))).
		Add(expression.Name(attrAttempts), expression.Value(1)).
		Remove(expression.Name(attrRetryable)).
		Remove(expression.Name(attrDeadLetter)).
		Remove(expression.Name(attrErrorCode)).
		Remove(expression.Name(attrErrorMessage))
	update = setIdentity(update, ref)
	expr, err := expression.NewBuilder().WithCondition(claimable()).WithUpdate(update).Build()
	if err != nil {
		return nil, 0, fmt.Errorf("claim %s: build expression: %w", ref, err)
	}

	out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(s.table),
		Key:                                 refKey(ref),
		ConditionExpression:                 expr.Condition(),
		UpdateExpression:                    expr.Update(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		rec, err := unmarshalRecord(out.Attributes)
		if err != nil || rec == nil {
			return nil, 0, fmt.Errorf("claim %s: decode claimed record: %w", ref, errors.Join(err, errors.New("empty item")))
		}
		return acquiredClaim(ref, rec), ClaimAcquired, nil
	}
	item, ok := conditionFailed(err)
	if !ok {
		return nil, 0, fmt.Errorf("claim %s: %w", ref, err)
	}
	existing, err := s.existing(ctx, ref, item)
	if err != nil {
		return nil, 0, fmt.Errorf("claim %s: %w", ref, err)
	}
	if existing.Owner == token {
		// The SDK retried a write that had already landed: the claim is ours.
		return acquiredClaim(ref, existing), ClaimAcquired, nil
	}
	outcome, err := classify(existing, now)
	if err != nil {
		return nil, 0, fmt.Errorf("claim %s: %w", ref, err)
	}
	return &Claim{Ref: ref, Record: existing}, outcome, nil
}

func acquiredClaim(ref ObjectRef, rec *Record) *Claim {
	return &Claim{Ref: ref, Token: rec.Owner, LeaseUntil: rec.LeaseUntil, Attempt: rec.Attempts, Record: rec}
}

// existing decodes the item returned with a failed condition, reading it
// (consistently) if the table did not return it.
func (s *Store) existing(ctx context.Context, ref ObjectRef, item map[string]types.AttributeValue) (*Record, error) {
	rec, err := unmarshalRecord(item)
	if err != nil {
		return nil, fmt.Errorf("decode existing record: %w", err)
	}
	if rec != nil {
		return rec, nil
	}
	rec, err = s.Lookup(ctx, ref)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, errors.New("condition failed but the record is absent")
	}
	return rec, nil
}

// classify says why an existing record refused a claim.
func classify(rec *Record, now time.Time) (ClaimOutcome, error) {
	switch {
	case rec.Final():
		return ClaimDone, nil
	case rec.Status == StatusInProgress && leaseExpired(rec, now):
		return ClaimExpired, nil
	case rec.Status == StatusInProgress:
		return ClaimBusy, nil
	}
	return 0, fmt.Errorf("record in unexpected state status=%q retryable=%t", rec.Status, rec.Retryable)
}

// leaseExpired matches the condition MarkOutcomeUnknown writes with:
// lease_until <= now, in whole seconds.
func leaseExpired(rec *Record, now time.Time) bool {
	return rec.LeaseUntil.Unix() <= now.Unix()
}

// ceilSecond rounds t up to a whole second, so a lease stored in seconds is
// never shorter than asked.
func ceilSecond(t time.Time) time.Time {
	if t.Nanosecond() == 0 {
		return t
	}
	return t.Truncate(time.Second).Add(time.Second)
}
