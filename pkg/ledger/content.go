package ledger

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// The content ledger makes the unit of "at most one paid call" the photo
// rather than the object version: one item per content identity and request,
// in the results table beside the object records,
//
//	pk "CONTENT#<sha256 hex>", sk "REQ#<request>"
//
// holding a lock (owner token, lease) and a pointer to the object record of
// the version whose call pays (or paid) for that content. The answer itself
// stays in that object record, the single source of truth: the content item
// is never the only copy of a result, so a crash between the object record
// and the content item loses nothing. A content item has no status, event
// type or status_day, so the by-status index, the results pipe and
// geolocate results never see it.
//
// Its life mirrors an object record's:
//
//	(absent) --ClaimContent--> calling --EndContent--> done
//	calling, lease expired (the payer vanished) --ClaimContent--> calling (taken over)
//	done, the payer's record not reusable -------ClaimContent--> calling (taken over)
//
// ClaimContent is made while holding the object's own claim, after the
// content is known and before any budget, slot or call. It reports the
// payer's record as reusable whenever that record is final with this very
// content and request (succeeded, or rejected by the service), whatever the
// item's state: the payer's Complete is what makes an answer reusable,
// EndContent only frees the lock sooner when there is none.
const (
	contentPrefix        = "CONTENT#"
	contentRequestPrefix = "REQ#"

	attrContentState = "content_state"
	attrPaidPK       = "paid_pk"
	attrPaidSK       = "paid_sk"
	attrClaimedAt    = "claimed_at"
)

// Content item states.
const (
	// ContentCalling: the owner object's attempt holds the content and may
	// be calling the service for it.
	ContentCalling = "calling"
	// ContentDone: the owner's attempt ended; its object record says what
	// came of it.
	ContentDone = "done"
)

// ContentRef is the identity of what the service is asked: the SHA-256 of
// the bytes it receives, and everything else of the request that changes
// its answer (model, top_n), as one string.
type ContentRef struct {
	SHA256  string // lowercase hex, 64 digits
	Request string
}

// PartitionKey is the content item's pk.
func (c ContentRef) PartitionKey() string { return contentPrefix + c.SHA256 }

// SortKey is the content item's sk.
func (c ContentRef) SortKey() string { return contentRequestPrefix + c.Request }

func (c ContentRef) validate() error {
	if len(c.SHA256) != 64 || strings.Trim(c.SHA256, "0123456789abcdef") != "" {
		return fmt.Errorf("content ref: %q is not a lowercase hex SHA-256", c.SHA256)
	}
	if c.Request == "" {
		return errors.New("content ref has no request")
	}
	return nil
}

// MaxAge bounds how old a paid answer may be and still be reused. NoMaxAge
// (the zero value) reuses an answer whatever its age.
type MaxAge time.Duration

// NoMaxAge is no limit on the age of a reused answer.
const NoMaxAge MaxAge = 0

// Limited reports whether the age is bounded.
func (m MaxAge) Limited() bool { return m > 0 }

// ContentOutcome says what ClaimContent found.
type ContentOutcome int

const (
	// ContentAcquired: the caller's object pays for the content; it must
	// EndContent once its object record is written, unless that record
	// holds a reusable answer (which ClaimContent reuses whatever the
	// item's state).
	ContentAcquired ContentOutcome = iota + 1
	// ContentReusable: an object with the same content and request has a
	// final answer (ContentClaim.Paid): copy it, make no call.
	ContentReusable
	// ContentBusy: another object's attempt holds the content and may be
	// calling right now. Come back after ContentClaim.LeaseUntil at the
	// latest.
	ContentBusy
)

func (o ContentOutcome) String() string {
	switch o {
	case ContentAcquired:
		return "acquired"
	case ContentReusable:
		return "reusable"
	case ContentBusy:
		return "busy"
	}
	return fmt.Sprintf("ContentOutcome(%d)", int(o))
}

// ContentClaim is the result of ClaimContent.
type ContentClaim struct {
	Ref ContentRef
	// Token is the owner token of an acquired claim; empty otherwise.
	Token string
	// LeaseUntil is when the holder's lease ends: the caller's own when
	// acquired, the other attempt's when busy.
	LeaseUntil time.Time
	// Paid is the final record of the object whose call answered, when
	// reusable; PaidRef names it.
	Paid    *Record
	PaidRef ObjectRef
}

// contentItem is a content item as stored.
type contentItem struct {
	SK         string    `dynamodbav:"sk"`
	State      string    `dynamodbav:"content_state"`
	Owner      string    `dynamodbav:"owner"`
	LeaseUntil time.Time `dynamodbav:"lease_until,omitempty,unixtime"`
	PaidPK     string    `dynamodbav:"paid_pk"`
	PaidSK     string    `dynamodbav:"paid_sk"`
}

// ClaimContent takes the content c for the object ref, whose own claim the
// caller holds, with a lease of lease, unless an answer can be reused. In
// order:
//
//   - absent: acquired, in one conditional write (attribute_not_exists), as
//     Claim takes an object version; two copies at the same moment make one
//     call.
//   - the pointed object's record is final with c's content and request
//     (succeeded, or rejected with a content verdict) and not older than
//     maxAge: reusable. A failed record (outcome_unknown, a final error) is
//     never reused: the next copy may succeed.
//   - calling with a live lease, for another object: busy.
//   - otherwise (done without a reusable answer, a lease expired because
//     its attempt vanished, or a claim left by an earlier attempt of ref
//     itself, which the object claim proves over): taken over, with a write
//     conditional on the owner it replaces, so two takers cannot both win.
func (s *Store) ClaimContent(ctx context.Context, c ContentRef, ref ObjectRef, lease time.Duration, maxAge MaxAge) (*ContentClaim, ContentOutcome, error) {
	if err := errors.Join(c.validate(), ref.validate()); err != nil {
		return nil, 0, fmt.Errorf("claim content: %w", err)
	}
	if lease <= 0 {
		return nil, 0, fmt.Errorf("claim content %s: lease must be positive, got %s", c.SHA256, lease)
	}
	now := s.now()
	token := rand.Text()
	claim := &ContentClaim{Ref: c, Token: token, LeaseUntil: ceilSecond(now.Add(lease))}
	update := expression.Set(expression.Name(attrContentState), expression.Value(ContentCalling)).
		Set(expression.Name(attrOwner), expression.Value(token)).
		Set(expression.Name(attrLeaseUntil), expression.Value(claim.LeaseUntil.Unix())).
		Set(expression.Name(attrPaidPK), expression.Value(ref.PartitionKey())).
		Set(expression.Name(attrPaidSK), expression.Value(ref.SortKey())).
		Set(expression.Name(attrClaimedAt), expression.Value(formatTimestamp(now)))
	if exp := s.expiresAt(now); !exp.IsZero() {
		// The item points at an object record: it is of no use once that
		// record has expired, and both are written with the same TTL.
		update = update.Set(expression.Name(tableschema.TTLAttribute), expression.Value(exp.Unix()))
	}

	item, won, err := s.writeContent(ctx, c, expression.Name(tableschema.PartitionKey).AttributeNotExists(), update)
	if err != nil {
		return nil, 0, fmt.Errorf("claim content %s: %w", c.SHA256, err)
	}
	if won {
		return claim, ContentAcquired, nil
	}
	existing, err := s.existingContent(ctx, c, item)
	if err != nil {
		return nil, 0, fmt.Errorf("claim content %s: %w", c.SHA256, err)
	}
	if existing.Owner == token {
		// The SDK retried a write that had already landed: the claim is ours.
		return claim, ContentAcquired, nil
	}
	paid, err := s.lookupKey(ctx, existing.PaidPK, existing.PaidSK)
	if err != nil {
		return nil, 0, fmt.Errorf("claim content %s: read the paying record: %w", c.SHA256, err)
	}
	if reusable(paid, c, now, maxAge) {
		paidRef := ObjectRef{Bucket: paid.Bucket, Key: paid.Key, VersionID: paid.VersionID, ETag: paid.ETag, Run: paid.Run}
		return &ContentClaim{Ref: c, Paid: paid, PaidRef: paidRef}, ContentReusable, nil
	}
	ownEarlier := existing.PaidPK == ref.PartitionKey() && existing.PaidSK == ref.SortKey()
	if existing.State == ContentCalling && !leaseEnded(existing.LeaseUntil, now) && !ownEarlier {
		return &ContentClaim{Ref: c, LeaseUntil: existing.LeaseUntil}, ContentBusy, nil
	}
	_, won, err = s.writeContent(ctx, c, expression.Name(attrOwner).Equal(expression.Value(existing.Owner)), update)
	if err != nil {
		return nil, 0, fmt.Errorf("claim content %s: take over: %w", c.SHA256, err)
	}
	if !won {
		// Another copy took it over first: it calls, this one waits.
		return &ContentClaim{Ref: c, LeaseUntil: claim.LeaseUntil}, ContentBusy, nil
	}
	return claim, ContentAcquired, nil
}

// EndContent ends an acquired content claim once the owner object's record
// is written (whatever it says: a later ClaimContent reads it). It is
// conditional on the claim's token: a claim taken over meanwhile is left
// alone (nil). Skipped (a crash), the lease runs out instead, and a copy
// that arrives before then finds the answer anyway once the object record
// is final.
func (s *Store) EndContent(ctx context.Context, claim *ContentClaim) error {
	if claim == nil || claim.Token == "" {
		return fmt.Errorf("end content: %w", ErrNotAcquired)
	}
	update := expression.Set(expression.Name(attrContentState), expression.Value(ContentDone)).
		Remove(expression.Name(attrLeaseUntil))
	if _, _, err := s.writeContent(ctx, claim.Ref, ownedBy(claim.Token), update); err != nil {
		return fmt.Errorf("end content %s: %w", claim.Ref.SHA256, err)
	}
	return nil
}

// reusable reports whether rec is a final answer for exactly c, made within
// maxAge of now.
func reusable(rec *Record, c ContentRef, now time.Time, maxAge MaxAge) bool {
	if rec == nil || rec.ContentSHA256 != c.SHA256 || rec.ContentRequest != c.Request || rec.ReusedFrom != "" {
		return false
	}
	if rec.Status != StatusSucceeded && rec.Status != StatusRejected || !rec.Final() {
		return false
	}
	return !maxAge.Limited() || now.Sub(rec.UpdatedAt) <= time.Duration(maxAge)
}

// leaseEnded matches leaseExpired for a content lease (whole seconds).
func leaseEnded(until, now time.Time) bool { return until.Unix() <= now.Unix() }

// writeContent applies one conditional update to c's item and reports
// whether the condition held, with the old item when it did not.
func (s *Store) writeContent(ctx context.Context, c ContentRef, cond expression.ConditionBuilder, update expression.UpdateBuilder) (map[string]types.AttributeValue, bool, error) {
	_, err := s.updateKey(ctx, c.PartitionKey(), c.SortKey(), cond, update)
	if item, failed := conditionFailed(err); failed {
		return item, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return nil, true, nil
}

// existingContent decodes the item returned with a failed condition,
// reading it (consistently) if the table did not return it.
func (s *Store) existingContent(ctx context.Context, c ContentRef, item map[string]types.AttributeValue) (*contentItem, error) {
	if len(item) == 0 {
		out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName:      aws.String(s.table),
			Key:            itemKey(c.PartitionKey(), c.SortKey()),
			ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			return nil, fmt.Errorf("read content item: %w", err)
		}
		item = out.Item
	}
	if len(item) == 0 {
		return nil, errors.New("condition failed but the content item is absent")
	}
	var ci contentItem
	if err := attributevalue.UnmarshalMap(item, &ci); err != nil {
		return nil, fmt.Errorf("decode content item: %w", err)
	}
	return &ci, nil
}

// lookupKey reads the record at pk, sk consistently; nil when absent.
func (s *Store) lookupKey(ctx context.Context, pk, sk string) (*Record, error) {
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            itemKey(pk, sk),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, err
	}
	return unmarshalRecord(out.Item)
}

// ReusedResult is the record of an object whose answer is copied from
// paid, the final record of the object paidRef whose call answered: the
// answer (model, place, position, clusters, predictions, matches, raw
// result, the rejection's reason) with no credits charged and ReusedFrom
// naming paidRef. What belongs to the paying object alone (its identity,
// bookkeeping, size, photo facts, upload, timings of its call) is left out:
// the caller adds the new object's own. A field added to Record that
// describes one object rather than the answer must be cleared here.
func ReusedResult(paid *Record, paidRef ObjectRef) Record {
	rec := *paid
	rec.PK, rec.SK, rec.Bucket, rec.Key, rec.VersionID, rec.ETag = "", "", "", "", "", ""
	rec.Size, rec.ContentType = 0, ""
	rec.EventType, rec.Phase, rec.Owner = "", "", ""
	rec.LeaseUntil, rec.SlotAt = time.Time{}, time.Time{}
	rec.Retryable, rec.DeadLetter, rec.Attempts = false, false, 0
	rec.CreditsConsumed, rec.CreditsReported, rec.CreditsInvalid, rec.RoundTripMS = 0, "", "", 0
	rec.ExifLatitude, rec.ExifLongitude, rec.ExifAltitudeM, rec.ExifDirectionDeg = nil, nil, nil, nil
	rec.ExifGPSProblem, rec.CapturedAt, rec.CameraMake, rec.CameraModel = "", "", "", ""
	rec.ErrorKm = nil
	rec.Downscaled, rec.OriginalWidth, rec.OriginalHeight = false, 0, 0
	rec.SentBytes, rec.SentWidth, rec.SentHeight = 0, 0, 0
	rec.UploadMetadata, rec.MetadataRemoved, rec.PositionSent = "", nil, false
	rec.CreatedAt, rec.UpdatedAt, rec.StatusDay, rec.ExpiresAt = time.Time{}, time.Time{}, "", time.Time{}
	rec.Run, rec.Previous, rec.History = "", nil, nil
	rec.ReusedFrom = paidRef.String()
	return rec
}

// setContent adds to RejectClaimed's update the content identity of a
// rejection that is the service's verdict on the content, and the object it
// was copied from.
func setContent(u expression.UpdateBuilder, info ObjectInfo) expression.UpdateBuilder {
	if c := info.Content; c != nil {
		u = u.Set(expression.Name(attrContentSHA), expression.Value(c.SHA256)).
			Set(expression.Name(attrContentReq), expression.Value(c.Request))
	}
	if info.ReusedFrom != "" {
		u = u.Set(expression.Name(attrReusedFrom), expression.Value(info.ReusedFrom))
	}
	return u
}

// ReusableAnswer returns a final answer on record for content digest
// sha256 under any request, not older than maxAge, or nil: what a dry run
// (geolocate backfill --count-reuse) reads, without writing anything. The
// caller says which request it assumes.
func (s *Store) ReusableAnswer(ctx context.Context, sha256 string, maxAge MaxAge) (*Record, error) {
	c := ContentRef{SHA256: sha256, Request: "any"}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("reusable answer: %w", err)
	}
	expr, err := expression.NewBuilder().WithKeyCondition(
		expression.Key(tableschema.PartitionKey).Equal(expression.Value(c.PartitionKey()))).Build()
	if err != nil {
		return nil, fmt.Errorf("reusable answer %s: build expression: %w", sha256, err)
	}
	pages := dynamodb.NewQueryPaginator(s.client, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ConsistentRead:            aws.Bool(true),
	})
	now := s.now()
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("reusable answer %s: %w", sha256, err)
		}
		for _, item := range page.Items {
			var ci contentItem
			if err := attributevalue.UnmarshalMap(item, &ci); err != nil {
				return nil, fmt.Errorf("reusable answer %s: decode content item: %w", sha256, err)
			}
			paid, err := s.lookupKey(ctx, ci.PaidPK, ci.PaidSK)
			if err != nil {
				return nil, fmt.Errorf("reusable answer %s: read the paying record: %w", sha256, err)
			}
			if reusable(paid, ContentRef{SHA256: sha256, Request: strings.TrimPrefix(ci.SK, contentRequestPrefix)}, now, maxAge) {
				return paid, nil
			}
		}
	}
	return nil, nil
}
