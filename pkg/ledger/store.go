package ledger

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/geolocate-aws/geolocate/pkg/pacer"
	"github.com/geolocate-aws/geolocate/pkg/shared/resultevents"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// DynamoDBAPI is the part of *dynamodb.Client the Store uses.
type DynamoDBAPI interface {
	GetItem(ctx context.Context, params *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, params *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, params *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	Query(ctx context.Context, params *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	// TransactWriteItems writes the daily credit counter, idempotently.
	TransactWriteItems(ctx context.Context, params *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// Options configure a Store.
type Options struct {
	// RecordTTL, when > 0, sets expires_at to the time of each write plus
	// RecordTTL. It must exceed the queue's message retention: once a record
	// expires, a redelivery of its object would be called again.
	RecordTTL time.Duration

	// BudgetTTL is how long after its day a daily credit counter is kept.
	// Default 4 days.
	BudgetTTL time.Duration

	// Clock returns the current time; tests replace it. Default time.Now.
	Clock func() time.Time

	// TransactAttempts bounds the attempts of a credit reservation or
	// release that DynamoDB cancels for a conflict or throttling (see
	// transactWrite). Default DefaultTransactAttempts.
	TransactAttempts int
	// Sleep waits between those attempts. Default pacer.Sleep.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Store reads and writes records in one table.
type Store struct {
	client DynamoDBAPI
	table  string
	opts   Options
}

// New returns a Store on table, whose layout is tableschema's.
func New(client DynamoDBAPI, table string, optFns ...func(*Options)) *Store {
	opts := Options{BudgetTTL: 4 * 24 * time.Hour, Clock: time.Now}
	for _, fn := range optFns {
		fn(&opts)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.TransactAttempts <= 0 {
		opts.TransactAttempts = DefaultTransactAttempts
	}
	if opts.Sleep == nil {
		opts.Sleep = pacer.Sleep
	}
	return &Store{client: client, table: table, opts: opts}
}

// timestampLayout is RFC 3339 with a fixed nine-digit fraction: unlike
// time.RFC3339Nano it never drops trailing zeros, so timestamps sort
// lexically by time, as the by-status index sort key needs.
const timestampLayout = "2006-01-02T15:04:05.000000000Z07:00"

// dayLayout formats the UTC day used by status_day and the budget counter.
const dayLayout = "2006-01-02"

// Day is the UTC day of t as the ledger writes it (YYYY-MM-DD), e.g. the
// day argument of ReserveCredits.
func Day(t time.Time) string { return t.UTC().Format(dayLayout) }

func formatTimestamp(t time.Time) string { return t.UTC().Format(timestampLayout) }

func statusDay(status string, t time.Time) string { return status + "#" + Day(t) }

// Indexed reports whether records of status are in the by-status index.
// A record is in it only while it holds status_day ("Global secondary
// indexes are sparse by default ... only items in the base table that
// contain those attributes appear in the index", DynamoDB developer guide,
// bp-indexes-general-sparse-indexes). An in-progress record is not: every
// paid photo is claimed once and
// recorded a moment later, and with the claim in the index each photo
// paid for three more index writes (the claim's entry, then its delete and
// the final entry when the status changes: "two writes are required, one
// to delete the previous item from the index and another write to put the
// new item into the index", DynamoDB's GSI.Writes). Out of it, a claim
// costs none and the record one entry. In-progress records are transient
// (a call's length; a vanished claim becomes failed/outcome_unknown on the
// next delivery), so they are listed on request only, by a filtered scan
// (Query with Status StatusInProgress).
func Indexed(status string) bool { return status != StatusInProgress }

// now is the store's clock in UTC.
func (s *Store) now() time.Time { return s.opts.Clock().UTC() }

// expiresAt is the TTL for a record written at now, zero without a TTL.
func (s *Store) expiresAt(now time.Time) time.Time {
	if s.opts.RecordTTL <= 0 {
		return time.Time{}
	}
	return now.Add(s.opts.RecordTTL)
}

// setTimestamps adds updated_at, status_day, event_type and (with a TTL)
// expires_at to an update that moves the record to status. Every status
// change goes through it (Complete's PutItem sets the same fields), so the
// event type the results pipe publishes is written in the very write that
// makes the record final and cannot disagree with it.
//
// A claim (in_progress) removes status_day instead of setting it, so the
// record leaves the by-status index while its call is made (see Indexed).
func (s *Store) setTimestamps(u expression.UpdateBuilder, status string, now time.Time) expression.UpdateBuilder {
	u = u.Set(expression.Name(attrStatus), expression.Value(status)).
		Set(expression.Name(tableschema.StatusIndexSortKey), expression.Value(formatTimestamp(now)))
	if Indexed(status) {
		u = u.Set(expression.Name(tableschema.StatusIndexPartitionKey), expression.Value(statusDay(status, now)))
	} else {
		u = u.Remove(expression.Name(tableschema.StatusIndexPartitionKey))
	}
	if eventType := resultevents.DetailType(status); eventType != "" {
		u = u.Set(expression.Name(resultevents.EventTypeAttribute), expression.Value(eventType))
	} else {
		u = u.Remove(expression.Name(resultevents.EventTypeAttribute))
	}
	if exp := s.expiresAt(now); !exp.IsZero() {
		u = u.Set(expression.Name(tableschema.TTLAttribute), expression.Value(exp.Unix()))
	}
	return u
}

func itemKey(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		tableschema.PartitionKey: &types.AttributeValueMemberS{Value: pk},
		tableschema.SortKey:      &types.AttributeValueMemberS{Value: sk},
	}
}

func refKey(ref ObjectRef) map[string]types.AttributeValue {
	return itemKey(ref.PartitionKey(), ref.SortKey())
}

// marshalRecord encodes a record with sortable timestamps and without empty
// times.
func marshalRecord(rec *Record) (map[string]types.AttributeValue, error) {
	return marshalRecordLike(rec)
}

// unmarshalRecord decodes an item; nil for an empty item.
func unmarshalRecord(item map[string]types.AttributeValue) (*Record, error) {
	if len(item) == 0 {
		return nil, nil
	}
	var rec Record
	if err := attributevalue.UnmarshalMap(item, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

// truncateUTF8 cuts s to at most max bytes without splitting a character.
func truncateUTF8(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
