package ledger

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// A reprocess run asks the service again, deliberately, for objects that
// already have a result: with another model, under a credit cap. The
// ledger's unit of "at most one paid call" is (object version, run): the
// original upload is run 0, whose records keep their keys (ObjectRef.Run
// empty); a run's record of the same version sits beside it in the object's
// partition, at the version's sort key followed by RunSortKeySeparator and
// the run's name. Claim, Complete, Fail, Release, MarkOutcomeUnknown and
// RejectClaimed work on it unchanged, so every failure mode keeps its
// meaning per run: a redelivery of the same run is a duplicate, an attempt
// that vanished after its claim is outcome_unknown for that run only.
//
// A run's definition and credit counter is one item, pk RunPartition and sk
// the run's name. Its cap is enforced as the daily budget is (budget.go):
// remaining holds what may still be reserved, and a reservation is one
// conditional write, applied at most once, that takes from it only when
// enough is left, so any number of instances together never reserve more
// than the cap.
const (
	RunPartition        = "RUN"
	RunSortKeySeparator = "#R#"
	// MaxHistory bounds Record.History: each entry is a few hundred bytes
	// ("The total size of an item is the sum of the lengths of its
	// attribute names and values, plus any applicable overhead",
	// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html),
	// so 20 add at most a few KB and the record stays far below DynamoDB's
	// 400 KB item limit whatever the number of runs.
	MaxHistory = 20
	// maxRunNameBytes bounds a run's name, which every record of the run
	// carries in its sort key.
	maxRunNameBytes = 64

	attrRunRemaining = "remaining"
	attrRunSpent     = "spent"
	attrRunCap       = "cap"
	attrRunSelected  = "selected"
	attrRunFinished  = "finished_at"
)

// Run is a reprocess run's item.
type Run struct {
	PK   string `dynamodbav:"pk"`
	Name string `dynamodbav:"sk"`
	// ModelID is the model the run asks for; empty asks the service's
	// current default model (--default-model).
	ModelID string `dynamodbav:"model_id,omitempty"`
	// Selection is the selection as the operator gave it (flags), so a
	// resumed run selects the same objects and the listing says what it
	// covers.
	Selection string `dynamodbav:"selection"`
	// Price is the credits one call of the model was expected to cost.
	Price int `dynamodbav:"price"`
	// Cap is the most the run may spend; Remaining what may still be
	// reserved; Spent what is reserved or charged. Remaining + Spent = Cap,
	// except after an overspend (a call dearer than reserved), which only
	// RecordRunOverspend writes.
	Cap       int `dynamodbav:"cap"`
	Remaining int `dynamodbav:"remaining"`
	Spent     int `dynamodbav:"spent"`
	// Selected is how many objects the run's selection holds.
	Selected   int       `dynamodbav:"selected"`
	StartedAt  time.Time `dynamodbav:"started_at"`
	FinishedAt time.Time `dynamodbav:"finished_at,omitempty"`
}

// HistoryEntry is one earlier result of an object version.
type HistoryEntry struct {
	Run             string    `dynamodbav:"run,omitempty"` // empty: run 0
	ModelID         string    `dynamodbav:"model_id,omitempty"`
	Place           string    `dynamodbav:"place,omitempty"`
	Admin1          string    `dynamodbav:"admin1,omitempty"`
	CountryCode     string    `dynamodbav:"country_code,omitempty"`
	Latitude        *float64  `dynamodbav:"latitude,omitempty"`
	Longitude       *float64  `dynamodbav:"longitude,omitempty"`
	RadiusKM        *float64  `dynamodbav:"radius_km,omitempty"`
	Confidence      *float64  `dynamodbav:"confidence,omitempty"`
	ErrorKm         *float64  `dynamodbav:"error_km,omitempty"`
	CreditsConsumed int       `dynamodbav:"credits_consumed,omitempty"`
	At              time.Time `dynamodbav:"at"`
}

// EntryOf is rec's result as a history entry.
func EntryOf(rec *Record) HistoryEntry {
	return HistoryEntry{
		Run: rec.Run, ModelID: rec.ModelID, Place: rec.Place, Admin1: rec.Admin1, CountryCode: rec.CountryCode,
		Latitude: rec.Latitude, Longitude: rec.Longitude, RadiusKM: rec.RadiusKM, Confidence: rec.Confidence,
		ErrorKm: rec.ErrorKm, CreditsConsumed: rec.CreditsConsumed, At: rec.UpdatedAt,
	}
}

// WithHistory sets rec's Previous to prev's result and its History to
// prev's history followed by prev, keeping the last MaxHistory; nil prev
// leaves rec alone.
func WithHistory(rec *Record, prev *Record) {
	if prev == nil {
		return
	}
	e := EntryOf(prev)
	rec.Previous = &e
	h := append(slices.Clone(prev.History), e)
	rec.History = h[max(len(h)-MaxHistory, 0):]
}

// ValidateRunName checks a run's name: 1 to 64 of A-Z a-z 0-9 . _ -, and
// not "0", which names the original upload.
func ValidateRunName(name string) error {
	if name == "" || len(name) > maxRunNameBytes {
		return fmt.Errorf("run name %q must be 1 to %d characters", name, maxRunNameBytes)
	}
	if name == "0" {
		return errors.New(`run name "0" is the original upload's`)
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			return fmt.Errorf("run name %q may hold only letters, digits, '.', '_' and '-'", name)
		}
	}
	return nil
}

// runSuffix is what a run adds to its records' sort key.
func runSuffix(run string) string {
	if run == "" {
		return ""
	}
	return RunSortKeySeparator + run
}

// StartRun writes run's item unless a run of that name exists, in which
// case it returns the existing one and created=false (the caller resumes
// it). Remaining starts at Cap.
func (s *Store) StartRun(ctx context.Context, run Run) (*Run, bool, error) {
	if err := ValidateRunName(run.Name); err != nil {
		return nil, false, fmt.Errorf("start run: %w", err)
	}
	if run.Cap <= 0 {
		return nil, false, fmt.Errorf("start run %s: cap must be positive, got %d", run.Name, run.Cap)
	}
	run.PK = RunPartition
	run.Remaining, run.Spent = run.Cap, 0
	if run.StartedAt.IsZero() {
		run.StartedAt = s.now()
	}
	item, err := marshalRecordLike(run)
	if err != nil {
		return nil, false, fmt.Errorf("start run %s: encode: %w", run.Name, err)
	}
	expr, err := expression.NewBuilder().WithCondition(expression.Name(tableschema.PartitionKey).AttributeNotExists()).Build()
	if err != nil {
		return nil, false, fmt.Errorf("start run %s: build expression: %w", run.Name, err)
	}
	_, err = s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 aws.String(s.table),
		Item:                      item,
		ConditionExpression:       expr.Condition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	})
	if _, exists := conditionFailed(err); exists {
		existing, err := s.GetRun(ctx, run.Name)
		if err != nil {
			return nil, false, err
		}
		if existing == nil {
			return nil, false, fmt.Errorf("start run %s: condition failed but the run is absent", run.Name)
		}
		return existing, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("start run %s: %w", run.Name, err)
	}
	return &run, true, nil
}

// GetRun reads a run's item (consistently); nil when there is none.
func (s *Store) GetRun(ctx context.Context, name string) (*Run, error) {
	if err := ValidateRunName(name); err != nil {
		return nil, fmt.Errorf("get run: %w", err)
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            itemKey(RunPartition, name),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("get run %s: %w", name, err)
	}
	if len(out.Item) == 0 {
		return nil, nil
	}
	var run Run
	if err := attributevalue.UnmarshalMap(out.Item, &run); err != nil {
		return nil, fmt.Errorf("get run %s: decode: %w", name, err)
	}
	return &run, nil
}

// ListRuns returns every run, by name.
func (s *Store) ListRuns(ctx context.Context) ([]Run, error) {
	items, err := s.queryAll(ctx, expression.Key(tableschema.PartitionKey).Equal(expression.Value(RunPartition)))
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var runs []Run
	if err := attributevalue.UnmarshalListOfMaps(items, &runs); err != nil {
		return nil, fmt.Errorf("list runs: decode: %w", err)
	}
	return runs, nil
}

// queryAll reads every item of one key condition on the table,
// consistently.
func (s *Store) queryAll(ctx context.Context, key expression.KeyConditionBuilder) ([]map[string]types.AttributeValue, error) {
	expr, err := expression.NewBuilder().WithKeyCondition(key).Build()
	if err != nil {
		return nil, fmt.Errorf("build expression: %w", err)
	}
	pages := dynamodb.NewQueryPaginator(s.client, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ConsistentRead:            aws.Bool(true),
	})
	var items []map[string]types.AttributeValue
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		items = append(items, page.Items...)
	}
	return items, nil
}

// ReserveRunCredits atomically takes credits from the run's remaining cap
// if at least that much is left, and reports whether it did; false too
// when the run does not exist. Give back what was not charged with
// ReleaseRunCredits.
func (s *Store) ReserveRunCredits(ctx context.Context, name string, credits int) (bool, error) {
	if err := ValidateRunName(name); err != nil {
		return false, fmt.Errorf("reserve run credits: %w", err)
	}
	if credits <= 0 {
		return false, fmt.Errorf("reserve run credits for %s: credits must be positive, got %d", name, credits)
	}
	cond := expression.Name(attrRunRemaining).GreaterThanEqual(expression.Value(credits))
	over, err := s.updateOnce(ctx, itemKey(RunPartition, name), &cond, moveCredits(credits))
	if over {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reserve %d credits of run %s: %w", credits, name, err)
	}
	return true, nil
}

// ReleaseRunCredits gives back to the run's cap credits reserved and not
// charged. It never takes Spent below zero: asking for more than it holds
// returns ErrReleaseExceedsReserved and changes nothing.
func (s *Store) ReleaseRunCredits(ctx context.Context, name string, credits int) error {
	if credits <= 0 {
		return fmt.Errorf("release run credits for %s: credits must be positive, got %d", name, credits)
	}
	cond := expression.Name(attrRunSpent).GreaterThanEqual(expression.Value(credits))
	under, err := s.updateOnce(ctx, itemKey(RunPartition, name), &cond, moveCredits(-credits))
	if under {
		return fmt.Errorf("release %d credits of run %s: %w", credits, name, ErrReleaseExceedsReserved)
	}
	if err != nil {
		return fmt.Errorf("release %d credits of run %s: %w", credits, name, err)
	}
	return nil
}

// RecordRunOverspend counts credits a call charged beyond its reservation,
// whatever the cap (they are spent): the only write that may take Remaining
// below zero, which then stops every further reservation.
func (s *Store) RecordRunOverspend(ctx context.Context, name string, credits int) error {
	if credits <= 0 {
		return fmt.Errorf("record run overspend for %s: credits must be positive, got %d", name, credits)
	}
	cond := expression.Name(tableschema.PartitionKey).AttributeExists()
	if _, err := s.updateOnce(ctx, itemKey(RunPartition, name), &cond, moveCredits(credits)); err != nil {
		return fmt.Errorf("record %d credits overspent by run %s: %w", credits, name, err)
	}
	return nil
}

// moveCredits moves credits from remaining to spent (negative: back).
func moveCredits(credits int) expression.UpdateBuilder {
	return expression.Add(expression.Name(attrRunRemaining), expression.Value(-credits)).
		Add(expression.Name(attrRunSpent), expression.Value(credits))
}

// RaiseRunCap sets a run's cap to newCap, adding the difference to what
// remains, if its cap is still oldCap (a resumed run given a larger
// --max-credits). A cap is never lowered below what is spent: lowering is
// refused.
func (s *Store) RaiseRunCap(ctx context.Context, name string, oldCap, newCap int) error {
	if newCap <= oldCap {
		return fmt.Errorf("raise cap of run %s: %d is not above %d", name, newCap, oldCap)
	}
	cond := expression.Name(attrRunCap).Equal(expression.Value(oldCap))
	update := expression.Set(expression.Name(attrRunCap), expression.Value(newCap)).
		Add(expression.Name(attrRunRemaining), expression.Value(newCap-oldCap))
	moved, err := s.updateOnce(ctx, itemKey(RunPartition, name), &cond, update)
	if moved {
		return fmt.Errorf("raise cap of run %s: its cap is no longer %d", name, oldCap)
	}
	if err != nil {
		return fmt.Errorf("raise cap of run %s: %w", name, err)
	}
	return nil
}

// SetRunProgress records how many objects the run selected and, when
// finished is not zero, when the last of them was finished.
func (s *Store) SetRunProgress(ctx context.Context, name string, selected int, finished time.Time) error {
	update := expression.Set(expression.Name(attrRunSelected), expression.Value(selected))
	if finished.IsZero() {
		update = update.Remove(expression.Name(attrRunFinished))
	} else {
		update = update.Set(expression.Name(attrRunFinished), expression.Value(formatTimestamp(finished)))
	}
	_, err := s.updateKey(ctx, RunPartition, name, expression.Name(tableschema.PartitionKey).AttributeExists(), update)
	if err != nil {
		return fmt.Errorf("set progress of run %s: %w", name, err)
	}
	return nil
}

// marshalRecordLike encodes v with the record's time encoding.
func marshalRecordLike(v any) (map[string]types.AttributeValue, error) {
	return attributevalue.MarshalMapWithOptions(v, func(o *attributevalue.EncoderOptions) {
		o.OmitEmptyTime = true
		o.EncodeTime = func(t time.Time) (types.AttributeValue, error) {
			return &types.AttributeValueMemberS{Value: formatTimestamp(t)}, nil
		}
	})
}
