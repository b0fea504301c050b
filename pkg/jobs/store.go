package jobs

import (
	"context"
	"crypto/rand"
	"encoding/base32"
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

// DynamoDBAPI is the part of *dynamodb.Client the Store and the Feeder use.
// It holds ledger.DynamoDBAPI's methods, so the feeder reads records and
// the day's spend through the same client.
type DynamoDBAPI interface {
	GetItem(ctx context.Context, params *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, params *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, params *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, params *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(ctx context.Context, params *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	TransactWriteItems(ctx context.Context, params *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// Item keys in the results table. A job's items share its partition
// (JobPartitionPrefix + id): the job item (sort key JobSortKey) and its
// manifest chunks (ChunkSortKeyPrefix + %08d). Two index families list jobs
// without a scan: IndexPartition holds one item per job, sorted by creation
// time (List, newest first); ActivePartition one per job the feeder still
// works on (listing, running, paused), removed when it ends.
const (
	JobPartitionPrefix = "JOB#"
	JobSortKey         = "JOB"
	ChunkSortKeyPrefix = "CHUNK#"
	IndexPartition     = "JOBS"
	ActivePartition    = "JOBS#ACTIVE"
)

// Attribute names of a job item the predictor and the feeder update apart
// (ADD, SET of one attribute): named once.
const (
	AttrState        = "state"
	AttrDone         = "done"
	AttrFailed       = "failed"
	AttrSkipped      = "skipped"
	AttrCreditsSpent = "credits_spent"
	AttrLastProgress = "last_progress_at"
	AttrUpdated      = "updated_at"
	attrJobID        = "job_id"
	attrCreated      = "created_at"
	attrHeld         = "held"
	attrLeaseUntil   = "lease_until"
	attrLeaseOwner   = "lease_owner"
	// AttrDropped is the string set of feeding positions (Position) whose
	// messages the predictor dropped while the job was paused: the
	// feeder sends them again when it resumes. A set, so that a message
	// dropped twice is sent again once.
	AttrDropped = "dropped"
)

// DefaultListLimit bounds List: the newest jobs, which is what an operator
// reads (older ones stay readable by id).
const DefaultListLimit = 100

// Options configure a Store.
type Options struct {
	// Clock returns the current time; tests replace it. Default time.Now.
	Clock func() time.Time
	// ListLimit is the most jobs List returns. Default DefaultListLimit.
	ListLimit int
}

// Store reads and writes jobs in the results table.
type Store struct {
	client DynamoDBAPI
	table  string
	opts   Options
}

// New returns a Store on table, whose layout is tableschema's.
func New(client DynamoDBAPI, table string, optFns ...func(*Options)) *Store {
	opts := Options{Clock: time.Now, ListLimit: DefaultListLimit}
	for _, fn := range optFns {
		fn(&opts)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.ListLimit <= 0 {
		opts.ListLimit = DefaultListLimit
	}
	return &Store{client: client, table: table, opts: opts}
}

// ErrNotFound is returned for a job id the table does not hold.
var ErrNotFound = errors.New("no such job")

// ErrFinal is returned when pausing, resuming or cancelling a job that is
// already done or cancelled.
var ErrFinal = errors.New("the job has ended")

// item is a job item as stored. Counters the predictor ADDs are numbers
// that may be absent (zero) until the first object ends.
type item struct {
	PK   string `dynamodbav:"pk"`
	SK   string `dynamodbav:"sk"`
	ID   string `dynamodbav:"job_id"`
	Kind Kind   `dynamodbav:"kind"`

	Bucket        string  `dynamodbav:"bucket,omitempty"`
	Prefix        string  `dynamodbav:"prefix,omitempty"`
	Requeue       bool    `dynamodbav:"requeue,omitempty"`
	Run           string  `dynamodbav:"run,omitempty"`
	ModelID       string  `dynamodbav:"model_id,omitempty"`
	Price         int     `dynamodbav:"price,omitempty"`
	Selection     string  `dynamodbav:"selection,omitempty"`
	RatePerMinute float64 `dynamodbav:"rate_per_minute,omitempty"`

	State        State     `dynamodbav:"state"`
	Created      time.Time `dynamodbav:"created_at"`
	Updated      time.Time `dynamodbav:"updated_at"`
	LastProgress time.Time `dynamodbav:"last_progress_at"`

	Listed       int64  `dynamodbav:"listed"`
	Sent         int64  `dynamodbav:"sent"`
	Done         int64  `dynamodbav:"done"`
	Failed       int64  `dynamodbav:"failed"`
	Skipped      int64  `dynamodbav:"skipped"`
	CreditsSpent int64  `dynamodbav:"credits_spent"`
	ListingDone  bool   `dynamodbav:"listing_done"`
	Held         string `dynamodbav:"held,omitempty"`
	Chunks       int    `dynamodbav:"chunks"`
	Error        string `dynamodbav:"error,omitempty"`

	// ListSkipped counts the listed objects the listing found already
	// done (a final record): never sent, they are part of Skipped.
	ListSkipped int64 `dynamodbav:"list_skipped"`

	// The feeder's own state (feed.go): the listing cursor (a backfill's
	// ListObjectVersions markers, a reprocess's plan offset), the feeding
	// position (next chunk and offset in it), the positions a partial
	// batch failure or a pause left to send again, the feeding's last
	// time and fractional carry, the sent history settling reads, and
	// the lease.
	CursorKey     string     `dynamodbav:"cursor_key,omitempty"`
	CursorVersion string     `dynamodbav:"cursor_version,omitempty"`
	CursorOffset  int        `dynamodbav:"cursor_offset,omitempty"`
	FedChunk      int        `dynamodbav:"fed_chunk"`
	FedOffset     int        `dynamodbav:"fed_offset"`
	Retry         []string   `dynamodbav:"retry,omitempty"`
	Dropped       []string   `dynamodbav:"dropped,stringset,omitempty"`
	FedAt         time.Time  `dynamodbav:"fed_at,omitempty"`
	FeedCarry     float64    `dynamodbav:"feed_carry,omitempty"`
	FeedRate      float64    `dynamodbav:"feed_rate,omitempty"`
	SentMarks     []sentMark `dynamodbav:"sent_marks,omitempty"`
	LeaseUntil    int64      `dynamodbav:"lease_until,omitempty"`
	LeaseOwner    string     `dynamodbav:"lease_owner,omitempty"`
}

// sentMark says that by At (Unix seconds) Sent messages had been sent.
type sentMark struct {
	At   int64 `dynamodbav:"at"`
	Sent int64 `dynamodbav:"sent"`
}

func (it *item) job() Job {
	return Job{
		ID: it.ID,
		Spec: Spec{Kind: it.Kind, Bucket: it.Bucket, Prefix: it.Prefix, Requeue: it.Requeue, Run: it.Run,
			ModelID: it.ModelID, Price: it.Price, Selection: it.Selection, RatePerMinute: it.RatePerMinute},
		State: it.State, Created: it.Created, Updated: it.Updated, LastProgress: it.LastProgress,
		Listed: it.Listed, Sent: it.Sent, Done: it.Done, Failed: it.Failed, Skipped: it.Skipped,
		CreditsSpent: it.CreditsSpent, ListingDone: it.ListingDone, Held: it.Held, Chunks: it.Chunks, Error: it.Error,
		FeedRate: it.FeedRate,
	}
}

// JobKey is the key of job id's item.
func JobKey(id string) map[string]types.AttributeValue {
	return key(JobPartitionPrefix+id, JobSortKey)
}

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		tableschema.PartitionKey: &types.AttributeValueMemberS{Value: pk},
		tableschema.SortKey:      &types.AttributeValueMemberS{Value: sk},
	}
}

// idEncoding spells a job id's random part: lowercase base32 without padding.
var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newID is j-<yyyymmdd>-<6 base32>: 30 random bits, unique within a day
// among the few jobs an operator makes (Create refuses a collision).
func newID(now time.Time) (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("job id: %w", err)
	}
	return "j-" + now.UTC().Format("20060102") + "-" + idEncoding.EncodeToString(b[:])[:6], nil
}

// ValidateID reports whether id is spelled as a job id.
func ValidateID(id string) error {
	rest, ok := strings.CutPrefix(id, "j-")
	date, random, ok2 := strings.Cut(rest, "-")
	if !ok || !ok2 || len(date) != 8 || len(random) != 6 || strings.Trim(date, "0123456789") != "" ||
		strings.Trim(random, "abcdefghijklmnopqrstuvwxyz234567") != "" {
		return fmt.Errorf("job id %q: want j-<yyyymmdd>-<6 characters>, as geolocate jobs lists them", id)
	}
	return nil
}

// indexSortKey orders IndexPartition by creation time, then id.
func indexSortKey(created time.Time, id string) string {
	return created.UTC().Format(timestampLayout) + "#" + id
}

// timestampLayout is RFC 3339 with a fixed nine-digit fraction, so that
// keys sort by time (as the ledger's).
const timestampLayout = "2006-01-02T15:04:05.000000000Z07:00"

// Check reports what makes spec unusable, in one line.
func (spec Spec) Check() error {
	switch spec.Kind {
	case KindBackfill:
		if spec.Bucket == "" {
			return errors.New("a backfill job needs a bucket")
		}
		if spec.Run != "" || spec.Selection != "" {
			return errors.New("a backfill job names no run or selection")
		}
	case KindReprocess:
		if spec.Run == "" {
			return errors.New("a reprocess job needs a run")
		}
		if spec.Requeue {
			return errors.New("requeue is a backfill's")
		}
		if _, err := ParseSelection(spec.Selection); err != nil {
			return err
		}
	default:
		return fmt.Errorf("job kind %q, want %s or %s", spec.Kind, KindBackfill, KindReprocess)
	}
	if spec.Price < 0 || spec.RatePerMinute < 0 {
		return errors.New("a job's price and rate are not negative")
	}
	return nil
}

// Create stores a new job in StateListing, with its index items, and
// returns it.
func (s *Store) Create(ctx context.Context, spec Spec) (Job, error) {
	if err := spec.Check(); err != nil {
		return Job{}, err
	}
	now := s.opts.Clock().UTC()
	id, err := newID(now)
	if err != nil {
		return Job{}, err
	}
	it := item{PK: JobPartitionPrefix + id, SK: JobSortKey, ID: id, Kind: spec.Kind, Bucket: spec.Bucket, Prefix: spec.Prefix,
		Requeue: spec.Requeue, Run: spec.Run, ModelID: spec.ModelID, Price: spec.Price, Selection: spec.Selection,
		RatePerMinute: spec.RatePerMinute, State: StateListing, Created: now, Updated: now, LastProgress: now}
	av, err := attributevalue.MarshalMap(it)
	if err != nil {
		return Job{}, fmt.Errorf("encode job: %w", err)
	}
	index := key(IndexPartition, indexSortKey(now, id))
	index[attrJobID] = &types.AttributeValueMemberS{Value: id}
	active := key(ActivePartition, id)
	active[attrJobID] = &types.AttributeValueMemberS{Value: id}
	notExists := aws.String("attribute_not_exists(" + tableschema.PartitionKey + ")")
	_, err = s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &s.table, Item: av, ConditionExpression: notExists}},
		{Put: &types.Put{TableName: &s.table, Item: index}},
		{Put: &types.Put{TableName: &s.table, Item: active}},
	}})
	if err != nil {
		return Job{}, fmt.Errorf("create job in %s: %w", s.table, err)
	}
	return it.job(), nil
}

// Get returns job id, or ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (Job, error) {
	it, err := s.get(ctx, id)
	if err != nil {
		return Job{}, err
	}
	return it.job(), nil
}

// get reads job id's whole item, strongly consistent: the feeder decides
// from it what to send next.
func (s *Store) get(ctx context.Context, id string) (*item, error) {
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.table, Key: JobKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("read job %s: %w", id, err)
	}
	if out.Item == nil {
		return nil, fmt.Errorf("job %s: %w", id, ErrNotFound)
	}
	var it item
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return nil, fmt.Errorf("decode job %s: %w", id, err)
	}
	return &it, nil
}

// List returns the newest jobs (at most Options.ListLimit), newest first.
func (s *Store) List(ctx context.Context) ([]Job, error) {
	ids, err := s.queryIDs(ctx, IndexPartition, false, s.opts.ListLimit)
	if err != nil {
		return nil, err
	}
	return s.getAll(ctx, ids)
}

// active returns the ids of the jobs the feeder still works on.
func (s *Store) active(ctx context.Context) ([]string, error) {
	return s.queryIDs(ctx, ActivePartition, true, 0)
}

// queryIDs reads the job ids of an index partition, up to limit (0: all).
func (s *Store) queryIDs(ctx context.Context, partition string, forward bool, limit int) ([]string, error) {
	keyCond := expression.Key(tableschema.PartitionKey).Equal(expression.Value(partition))
	expr, err := expression.NewBuilder().WithKeyCondition(keyCond).
		WithProjection(expression.NamesList(expression.Name(attrJobID))).Build()
	if err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{
		TableName: &s.table, KeyConditionExpression: expr.KeyCondition(), ProjectionExpression: expr.Projection(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ScanIndexForward: aws.Bool(forward),
	}
	var ids []string
	for {
		if limit > 0 {
			in.Limit = aws.Int32(int32(limit - len(ids)))
		}
		out, err := s.client.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("list jobs in %s: %w", s.table, err)
		}
		for _, av := range out.Items {
			if v, ok := av[attrJobID].(*types.AttributeValueMemberS); ok {
				ids = append(ids, v.Value)
			}
		}
		if out.LastEvaluatedKey == nil || limit > 0 && len(ids) >= limit {
			return ids, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// getAll reads the jobs of ids, in order; an id whose job item is gone is
// left out.
func (s *Store) getAll(ctx context.Context, ids []string) ([]Job, error) {
	jobs := make([]Job, 0, len(ids))
	for _, id := range ids {
		j, err := s.Get(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// Pause stops feeding job id at the feeder's next run (within a minute);
// the predictor drops its queued messages meanwhile. Pausing a paused job
// does nothing.
func (s *Store) Pause(ctx context.Context, id string) error {
	return s.setState(ctx, id, StatePaused, StateListing, StateRunning, StatePaused)
}

// Resume feeds a paused job again. The feeder's next run decides whether it
// is listing or running; resuming a job that is not paused does nothing.
func (s *Store) Resume(ctx context.Context, id string) error {
	it, err := s.get(ctx, id)
	if err != nil {
		return err
	}
	if !it.State.Active() {
		return fmt.Errorf("resume job %s (%s): %w", id, it.State, ErrFinal)
	}
	if it.State != StatePaused {
		return nil
	}
	next := StateListing
	if it.ListingDone {
		next = StateRunning
	}
	return s.setState(ctx, id, next, StatePaused)
}

// Cancel ends job id: nothing more is fed, the predictor drops its queued
// messages, and the feeder forgets it. What has ended stays recorded.
func (s *Store) Cancel(ctx context.Context, id string) error {
	if err := s.setState(ctx, id, StateCancelled, StateListing, StateRunning, StatePaused, StateCancelled); err != nil {
		return err
	}
	return s.deactivate(ctx, id)
}

// setState sets job id's state to to when it is one of from.
func (s *Store) setState(ctx context.Context, id string, to State, from ...State) error {
	var cond expression.ConditionBuilder
	for i, f := range from {
		c := expression.Name(AttrState).Equal(expression.Value(f))
		if i == 0 {
			cond = c
		} else {
			cond = cond.Or(c)
		}
	}
	update := expression.Set(expression.Name(AttrState), expression.Value(to)).
		Set(expression.Name(AttrUpdated), expression.Value(s.opts.Clock().UTC()))
	if to == StatePaused {
		update = update.Set(expression.Name(attrHeld), expression.Value(HeldPaused))
	} else {
		update = update.Remove(expression.Name(attrHeld))
	}
	expr, err := expression.NewBuilder().WithCondition(expression.Name(tableschema.PartitionKey).AttributeExists().And(cond)).
		WithUpdate(update).Build()
	if err != nil {
		return err
	}
	_, err = s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: JobKey(id), ConditionExpression: expr.Condition(), UpdateExpression: expr.Update(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		it, gerr := s.get(ctx, id)
		if gerr != nil {
			return gerr
		}
		return fmt.Errorf("job %s is %s: %w", id, it.State, ErrFinal)
	}
	if err != nil {
		return fmt.Errorf("set job %s %s: %w", id, to, err)
	}
	return nil
}

// deactivate removes job id from the feeder's list.
func (s *Store) deactivate(ctx context.Context, id string) error {
	if _, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.table, Key: key(ActivePartition, id)}); err != nil {
		return fmt.Errorf("forget job %s: %w", id, err)
	}
	return nil
}
