package monitor

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// DynamoDBAPI is the part of *dynamodb.Client the monitor is given: the job
// store's (it lists the jobs: Query and GetItem), which holds the ledger's
// the history uses (HistoryAPI).
type DynamoDBAPI = jobs.DynamoDBAPI

// HistoryAPI is what the history calls: the ledger's part, because the
// credit estimate reads the pipeline's records through the ledger (only
// PutItem and Query are called).
type HistoryAPI = ledger.DynamoDBAPI

// Key prefixes of credit history items in the results table.
const (
	historyPartitionPrefix = "CREDITS#"
	historySortPrefix      = "T#"
)

// historyTimeLayout is RFC 3339 in UTC with a fixed nine-digit fraction:
// unlike time.RFC3339Nano it never drops trailing zeros, so sort keys order
// lexically by time (the same layout as the ledger's timestamps).
const historyTimeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// maxHistoryReadings bounds one window's read: a reading every 5 minutes
// for 24 hours is 288, so this leaves room for faster schedules.
const maxHistoryReadings = 2000

// History keeps credit readings, one item per reading, in the results table:
// pk "CREDITS#<pipeline>", sk "T#<time>", attribute remaining, and
// expires_at so DynamoDB drops old readings by itself.
type History struct {
	client   HistoryAPI
	table    string
	pipeline string
	ttl      time.Duration
}

// historyItem is the stored shape of a Reading.
type historyItem struct {
	PK        string  `dynamodbav:"pk"`
	SK        string  `dynamodbav:"sk"`
	Remaining float64 `dynamodbav:"remaining"`
	Source    string  `dynamodbav:"source,omitempty"`
	ExpiresAt int64   `dynamodbav:"expires_at,omitempty"`
}

// NewHistory returns the credit history of pipeline in table. Readings expire
// ttl after they were taken; ttl <= 0 keeps them forever.
func NewHistory(client HistoryAPI, table, pipeline string, ttl time.Duration) *History {
	return &History{client: client, table: table, pipeline: pipeline, ttl: ttl}
}

func (h *History) partitionKey() string { return historyPartitionPrefix + h.pipeline }

func historySortKey(t time.Time) string {
	return historySortPrefix + t.UTC().Format(historyTimeLayout)
}

// Put stores one reading. Storing the same instant twice overwrites it,
// so a retried invocation does not duplicate a reading.
func (h *History) Put(ctx context.Context, r Reading) error { return h.put(ctx, r, "") }

// put stores a reading with its source (SourceSummary or SourceEstimate),
// kept in the item so a reader of the table can tell them apart.
func (h *History) put(ctx context.Context, r Reading, source CreditSource) error {
	// Within DynamoDB's number range (and CloudWatch's) by far: a figure
	// beyond it failed the write on every run. A summary's figures are
	// bounded already (geoapi.MaxCreditFigure); an estimate may be negative.
	if !(math.Abs(r.Remaining) <= geoapi.MaxCreditFigure) {
		return fmt.Errorf("credit reading %g is beyond ±10^15: not stored", r.Remaining)
	}
	item := historyItem{PK: h.partitionKey(), SK: historySortKey(r.At), Remaining: r.Remaining, Source: string(source)}
	if h.ttl > 0 {
		item.ExpiresAt = r.At.Add(h.ttl).Unix()
	}
	av, err := attributevalue.MarshalMap(item)
	if err != nil {
		return fmt.Errorf("marshal credit reading: %w", err)
	}
	if _, err := h.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(h.table), Item: av}); err != nil {
		return fmt.Errorf("put credit reading %s in table %s: %w", item.SK, h.table, err)
	}
	return nil
}

// Since returns the readings taken in [from, to], oldest first, at most
// maxHistoryReadings of the newest. Expired items DynamoDB has not deleted
// yet are skipped.
func (h *History) Since(ctx context.Context, from, to time.Time) ([]Reading, error) {
	keyCond := expression.Key(tableschema.PartitionKey).Equal(expression.Value(h.partitionKey())).
		And(expression.Key(tableschema.SortKey).Between(expression.Value(historySortKey(from)), expression.Value(historySortKey(to))))
	expr, err := expression.NewBuilder().WithKeyCondition(keyCond).Build()
	if err != nil {
		return nil, fmt.Errorf("build credit history query: %w", err)
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(h.table),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ScanIndexForward:          aws.Bool(false), // newest first, so the limit keeps the latest
		ConsistentRead:            aws.Bool(true),  // include the reading just written
		Limit:                     aws.Int32(maxHistoryReadings),
	}
	var readings []Reading
	p := dynamodb.NewQueryPaginator(h.client, in)
	for p.HasMorePages() && len(readings) < maxHistoryReadings {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("query credit history of %s in table %s: %w", h.pipeline, h.table, err)
		}
		var items []historyItem
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return nil, fmt.Errorf("unmarshal credit history: %w", err)
		}
		for _, it := range items {
			r, ok := it.reading(to)
			if ok && len(readings) < maxHistoryReadings {
				readings = append(readings, r)
			}
		}
	}
	// Oldest first, the order a reader expects of a time series.
	for i, j := 0, len(readings)-1; i < j; i, j = i+1, j-1 {
		readings[i], readings[j] = readings[j], readings[i]
	}
	return readings, nil
}

// reading converts a stored item, skipping malformed or expired ones.
func (it historyItem) reading(now time.Time) (Reading, bool) {
	at, err := time.Parse(historyTimeLayout, strings.TrimPrefix(it.SK, historySortPrefix))
	if err != nil {
		return Reading{}, false
	}
	if it.ExpiresAt > 0 && it.ExpiresAt <= now.Unix() {
		return Reading{}, false
	}
	return Reading{At: at, Remaining: it.Remaining}, true
}
