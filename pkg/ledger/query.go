package ledger

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// MaxQueryDays bounds how far back Query reaches, one index query per day
// and status.
const MaxQueryDays = 400

// Lookup reads the record of ref with a consistent read; nil when absent.
func (s *Store) Lookup(ctx context.Context, ref ObjectRef) (*Record, error) {
	if err := ref.validate(); err != nil {
		return nil, fmt.Errorf("lookup: %w", err)
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            refKey(ref),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("lookup %s: %w", ref, err)
	}
	rec, err := unmarshalRecord(out.Item)
	if err != nil {
		return nil, fmt.Errorf("lookup %s: decode: %w", ref, err)
	}
	return rec, nil
}

// QueryInput selects records for Query.
type QueryInput struct {
	// Status is one of Statuses; empty means every status but
	// StatusInProgress. In-progress records are not in the by-status index
	// (see Indexed): asked for by name, they are found by a scan of the
	// whole table with a filter, which reads every item (one read unit per
	// 8 KB, eventually consistent) and needs dynamodb:Scan. Meant for an
	// operator looking for a stuck claim, not for a program's loop.
	Status string
	// Since keeps records last updated at or after it; zero means the start
	// of today (UTC). At most MaxQueryDays back.
	Since time.Time
	// Until keeps records last updated at or before it; zero means now.
	// With Since it selects a time range (a dashboard's), newest first.
	Until time.Time
	// KeyPrefix keeps records whose object key starts with it; empty
	// means every key. DynamoDB filters after reading, so a prefix saves
	// transfer, not read capacity.
	KeyPrefix string
	// Run keeps only the records of that reprocess run; empty means the
	// records of every run, run 0's included.
	Run string
	// Limit caps the number of records; 0 means no cap.
	Limit int
}

// Query lists records by status, most recently updated first, through the
// by-status index (eventually consistent: a write may take a moment to show);
// in-progress records by a scan (see QueryInput.Status).
func (s *Store) Query(ctx context.Context, in QueryInput) ([]Record, error) {
	statuses := slices.DeleteFunc(slices.Clone(Statuses), func(st string) bool { return !Indexed(st) })
	if in.Status != "" {
		if !slices.Contains(Statuses, in.Status) {
			return nil, fmt.Errorf("query: unknown status %q", in.Status)
		}
		statuses = []string{in.Status}
	}
	now := s.now()
	since := in.Since.UTC()
	if in.Since.IsZero() {
		since = now.Truncate(24 * time.Hour)
	}
	until := in.Until.UTC()
	if in.Until.IsZero() || until.After(now) {
		until = now
	}
	if until.Before(since) {
		return nil, fmt.Errorf("query: until %s is before since %s", until.Format(time.RFC3339), since.Format(time.RFC3339))
	}
	firstDay := since.Truncate(24 * time.Hour)
	if until.Sub(firstDay) > MaxQueryDays*24*time.Hour {
		return nil, fmt.Errorf("query: since %s is more than %d days before until %s", since.Format(time.RFC3339), MaxQueryDays, until.Format(time.RFC3339))
	}
	r := dayRange{since: since, until: until, keyPrefix: in.KeyPrefix, run: in.Run}
	if !Indexed(in.Status) {
		return s.scanStatus(ctx, in.Status, r, in.Limit)
	}

	var records []Record
	for day := until.Truncate(24 * time.Hour); !day.Before(firstDay); day = day.Add(-24 * time.Hour) {
		var dayRecords []Record
		for _, status := range statuses {
			recs, err := s.queryDay(ctx, statusDay(status, day), r, remaining(in.Limit, len(records)))
			if err != nil {
				return nil, fmt.Errorf("query %s on %s: %w", status, Day(day), err)
			}
			dayRecords = append(dayRecords, recs...)
		}
		// Each status came back newest first; merge them.
		slices.SortStableFunc(dayRecords, newestFirst)
		records = append(records, dayRecords...)
		if in.Limit > 0 && len(records) >= in.Limit {
			return records[:in.Limit], nil
		}
	}
	return records, nil
}

func remaining(limit, have int) int {
	if limit <= 0 {
		return 0
	}
	return limit - have
}

// dayRange is what a day's index query keeps: updated within [since,
// until], with a key starting with keyPrefix.
type dayRange struct {
	since, until time.Time
	keyPrefix    string
	run          string
}

// filter is what r keeps beyond an index query's key condition: the key
// prefix and the run; ok is false when it keeps everything.
func (r dayRange) filter() (cond expression.ConditionBuilder, ok bool) {
	var filters []expression.ConditionBuilder
	if r.keyPrefix != "" {
		filters = append(filters, expression.Name(attrKey).BeginsWith(r.keyPrefix))
	}
	if r.run != "" {
		filters = append(filters, expression.Name(attrRun).Equal(expression.Value(r.run)))
	}
	switch len(filters) {
	case 0:
		return cond, false
	case 1:
		return filters[0], true
	}
	return expression.And(filters[0], filters[1]), true
}

// queryDay reads one index partition newest first, at most limit records
// (0: all). A filter (the key prefix) may leave a page short or empty while
// more remain: the loop follows LastEvaluatedKey until limit is reached.
func (s *Store) queryDay(ctx context.Context, partition string, r dayRange, limit int) ([]Record, error) {
	keyCond := expression.Key(tableschema.StatusIndexPartitionKey).Equal(expression.Value(partition)).
		And(expression.Key(tableschema.StatusIndexSortKey).Between(expression.Value(formatTimestamp(r.since)), expression.Value(formatTimestamp(r.until))))
	builder := expression.NewBuilder().WithKeyCondition(keyCond)
	if f, ok := r.filter(); ok {
		builder = builder.WithFilter(f)
	}
	expr, err := builder.Build()
	if err != nil {
		return nil, fmt.Errorf("build expression: %w", err)
	}
	input := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(tableschema.StatusIndex),
		KeyConditionExpression:    expr.KeyCondition(),
		FilterExpression:          expr.Filter(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ScanIndexForward:          aws.Bool(false),
	}
	var records []Record
	for {
		if limit > 0 {
			input.Limit = aws.Int32(int32(min(limit-len(records), 1000)))
		}
		out, err := s.client.Query(ctx, input)
		if err != nil {
			return nil, err
		}
		if records, err = appendRecords(records, out.Items); err != nil {
			return nil, err
		}
		if len(out.LastEvaluatedKey) == 0 || (limit > 0 && len(records) >= limit) {
			return records, nil
		}
		input.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// scanAPI is what listing records outside the index needs of the client:
// *dynamodb.Client has it; a caller's narrower client may not.
type scanAPI interface {
	Scan(ctx context.Context, params *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// scanStatus lists the records of an unindexed status within r, newest
// first, at most limit (0: all), by a scan of the whole table: the filter
// drops the other items after they are read, so its cost grows with the
// table, not with what it finds.
func (s *Store) scanStatus(ctx context.Context, status string, r dayRange, limit int) ([]Record, error) {
	client, ok := s.client.(scanAPI)
	if !ok {
		return nil, fmt.Errorf("query %s: %s records are not in the by-status index and this client cannot scan the table", status, status)
	}
	cond := expression.Name(attrStatus).Equal(expression.Value(status)).
		And(expression.Name(tableschema.StatusIndexSortKey).Between(expression.Value(formatTimestamp(r.since)), expression.Value(formatTimestamp(r.until))))
	if f, ok := r.filter(); ok {
		cond = cond.And(f)
	}
	expr, err := expression.NewBuilder().WithFilter(cond).Build()
	if err != nil {
		return nil, fmt.Errorf("query %s: build expression: %w", status, err)
	}
	input := &dynamodb.ScanInput{
		TableName:                 aws.String(s.table),
		FilterExpression:          expr.Filter(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	}
	var records []Record
	for {
		out, err := client.Scan(ctx, input)
		if err != nil {
			return nil, fmt.Errorf("query %s: scan: %w", status, err)
		}
		if records, err = appendRecords(records, out.Items); err != nil {
			return nil, fmt.Errorf("query %s: %w", status, err)
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		input.ExclusiveStartKey = out.LastEvaluatedKey
	}
	// A scan reads in no useful order: the newest are known only at its end.
	slices.SortStableFunc(records, newestFirst)
	if limit > 0 && len(records) > limit {
		records = records[:limit]
	}
	return records, nil
}

// appendRecords decodes a page of items onto records.
func appendRecords(records []Record, items []map[string]types.AttributeValue) ([]Record, error) {
	for _, item := range items {
		rec, err := unmarshalRecord(item)
		if err != nil {
			return records, fmt.Errorf("decode: %w", err)
		}
		records = append(records, *rec)
	}
	return records, nil
}

// newestFirst orders records by UpdatedAt, most recent first.
func newestFirst(a, b Record) int { return b.UpdatedAt.Compare(a.UpdatedAt) }
