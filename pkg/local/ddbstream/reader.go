// Package ddbstream reads a DynamoDB stream (DynamoDB Local's, through the
// SDK's dynamodbstreams client) and hands each record on as the JSON an
// EventBridge Pipe (or a Lambda event source mapping) receives, so the
// local rig can run the results pipe's filter and input template on the
// very records the ledger's writes produce. It is test tooling and never
// ships in a Lambda.
//
// Every shard is read from its start (TRIM_HORIZON): the local table is new
// for each run, as the deployed pipe starts at LATEST when it is created
// before any record. A child shard is read only once its parent is
// finished, so the records of one item keep their order, as Pipes does.
package ddbstream

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// StreamsAPI is the part of *dynamodbstreams.Client the Reader uses.
type StreamsAPI interface {
	DescribeStream(ctx context.Context, params *dynamodbstreams.DescribeStreamInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(ctx context.Context, params *dynamodbstreams.GetShardIteratorInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(ctx context.Context, params *dynamodbstreams.GetRecordsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// TableAPI finds a table's stream.
type TableAPI interface {
	DescribeTable(ctx context.Context, params *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// NewLocalClient is a streams client of the DynamoDB Local at endpoint
// (the same address serves tables and streams).
func NewLocalClient(endpoint, region string) *dynamodbstreams.Client {
	return dynamodbstreams.New(dynamodbstreams.Options{
		Region:       region,
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String(endpoint),
	})
}

// StreamArn returns the table's latest stream ARN, an error when the table
// has no stream (it was not created with tableschema's specification).
func StreamArn(ctx context.Context, client TableAPI, table string) (string, error) {
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return "", fmt.Errorf("describe table %s: %w", table, err)
	}
	if out.Table == nil || out.Table.LatestStreamArn == nil {
		return "", fmt.Errorf("table %s has no stream", table)
	}
	return *out.Table.LatestStreamArn, nil
}

// Options configure a Reader.
type Options struct {
	// Region is the awsRegion of the records. Default "us-east-1".
	Region string
	// Limit is the most records one GetRecords returns. Default 100.
	Limit int32
}

// Reader reads one stream. Not safe for concurrent use.
type Reader struct {
	client    StreamsAPI
	streamArn string
	opts      Options
	// iterators hold the next position of each shard being read; a shard
	// in finished has been read to its end (it was closed).
	iterators map[string]string
	finished  map[string]bool
}

// New returns a Reader of the stream streamArn.
func New(client StreamsAPI, streamArn string, optFns ...func(*Options)) *Reader {
	opts := Options{Region: "us-east-1", Limit: 100}
	for _, fn := range optFns {
		fn(&opts)
	}
	return &Reader{client: client, streamArn: streamArn, opts: opts, iterators: map[string]string{}, finished: map[string]bool{}}
}

// Poll reads what the stream holds beyond what earlier polls returned and
// calls fn with each record, in order within each shard, as Pipes' JSON.
// An error of fn stops the poll; the next one reads that record's batch
// again.
func (r *Reader) Poll(ctx context.Context, fn func(record []byte) error) error {
	shards, err := r.shards(ctx)
	if err != nil {
		return err
	}
	for _, s := range shards {
		id := aws.ToString(s.ShardId)
		if r.finished[id] {
			continue
		}
		if parent := aws.ToString(s.ParentShardId); parent != "" && !r.finished[parent] && r.known(shards, parent) {
			continue // the parent's records come first
		}
		if err := r.readShard(ctx, id, fn); err != nil {
			return err
		}
	}
	return nil
}

// known reports whether the stream still lists shard id (a parent older
// than the stream's retention is gone, and its child is read at once).
func (r *Reader) known(shards []types.Shard, id string) bool {
	for _, s := range shards {
		if aws.ToString(s.ShardId) == id {
			return true
		}
	}
	return false
}

func (r *Reader) shards(ctx context.Context) ([]types.Shard, error) {
	var shards []types.Shard
	var start *string
	for {
		out, err := r.client.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(r.streamArn), ExclusiveStartShardId: start})
		if err != nil {
			return nil, fmt.Errorf("describe stream: %w", err)
		}
		if out.StreamDescription == nil {
			return nil, errors.New("describe stream: no description")
		}
		shards = append(shards, out.StreamDescription.Shards...)
		start = out.StreamDescription.LastEvaluatedShardId
		if start == nil {
			break
		}
	}
	// Parents before children: by the first sequence number.
	sort.SliceStable(shards, func(i, j int) bool {
		return startingSequence(shards[i]) < startingSequence(shards[j])
	})
	return shards, nil
}

func startingSequence(s types.Shard) string {
	if s.SequenceNumberRange == nil {
		return ""
	}
	seq := aws.ToString(s.SequenceNumberRange.StartingSequenceNumber)
	// Sequence numbers are decimal strings: compare them by length first.
	return fmt.Sprintf("%040s", seq)
}

// readShard reads one shard until it has nothing more for now, or to its
// end.
func (r *Reader) readShard(ctx context.Context, id string, fn func([]byte) error) error {
	it, ok := r.iterators[id]
	if !ok {
		out, err := r.client.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
			StreamArn: aws.String(r.streamArn), ShardId: aws.String(id), ShardIteratorType: types.ShardIteratorTypeTrimHorizon,
		})
		if err != nil {
			return fmt.Errorf("shard %s: get iterator: %w", id, err)
		}
		it = aws.ToString(out.ShardIterator)
	}
	for {
		out, err := r.client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(it), Limit: aws.Int32(r.opts.Limit)})
		if err != nil {
			return fmt.Errorf("shard %s: get records: %w", id, err)
		}
		for _, rec := range out.Records {
			raw, err := PipeRecord(rec, r.streamArn, r.opts.Region)
			if err == nil {
				err = fn(raw)
			}
			if err != nil {
				// The next poll reads this batch again, from its start, as
				// Pipes retries a failed batch: its records may repeat.
				r.iterators[id] = it
				return fmt.Errorf("shard %s: %w", id, err)
			}
		}
		if out.NextShardIterator == nil {
			r.finished[id] = true
			delete(r.iterators, id)
			return nil
		}
		it = *out.NextShardIterator
		r.iterators[id] = it
		if len(out.Records) == 0 {
			return nil // nothing more for now
		}
	}
}

// Run polls every interval until ctx is done, then once more, so a record
// written just before the end is not missed.
func (r *Reader) Run(ctx context.Context, interval time.Duration, fn func([]byte) error) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if err := r.Poll(ctx, fn); err != nil && ctx.Err() == nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// record is a stream record in the shape Pipes and Lambda deliver it.
type record struct {
	EventID        string       `json:"eventID"`
	EventName      string       `json:"eventName"`
	EventVersion   string       `json:"eventVersion"`
	EventSource    string       `json:"eventSource"`
	AwsRegion      string       `json:"awsRegion"`
	Dynamodb       streamRecord `json:"dynamodb"`
	EventSourceARN string       `json:"eventSourceARN"`
}

type streamRecord struct {
	ApproximateCreationDateTime float64        `json:"ApproximateCreationDateTime,omitempty"`
	Keys                        map[string]any `json:"Keys,omitempty"`
	NewImage                    map[string]any `json:"NewImage,omitempty"`
	OldImage                    map[string]any `json:"OldImage,omitempty"`
	SequenceNumber              string         `json:"SequenceNumber"`
	SizeBytes                   int64          `json:"SizeBytes"`
	StreamViewType              string         `json:"StreamViewType"`
}

// PipeRecord renders an SDK stream record as the JSON a pipe receives:
// attribute values in DynamoDB JSON ({"S": "..."}, {"N": "1.5"}, ...),
// the creation time in Unix seconds.
func PipeRecord(rec types.Record, streamArn, region string) ([]byte, error) {
	out := record{
		EventID:        aws.ToString(rec.EventID),
		EventName:      string(rec.EventName),
		EventVersion:   aws.ToString(rec.EventVersion),
		EventSource:    aws.ToString(rec.EventSource),
		AwsRegion:      aws.ToString(rec.AwsRegion),
		EventSourceARN: streamArn,
	}
	if out.EventSource == "" {
		out.EventSource = "aws:dynamodb"
	}
	if out.AwsRegion == "" || out.AwsRegion == "ddblocal" {
		out.AwsRegion = region
	}
	if d := rec.Dynamodb; d != nil {
		var err error
		out.Dynamodb.SequenceNumber = aws.ToString(d.SequenceNumber)
		out.Dynamodb.SizeBytes = aws.ToInt64(d.SizeBytes)
		out.Dynamodb.StreamViewType = string(d.StreamViewType)
		if d.ApproximateCreationDateTime != nil {
			out.Dynamodb.ApproximateCreationDateTime = float64(d.ApproximateCreationDateTime.Unix())
		}
		if out.Dynamodb.Keys, err = streamItem(d.Keys); err != nil {
			return nil, err
		}
		if out.Dynamodb.NewImage, err = streamItem(d.NewImage); err != nil {
			return nil, err
		}
		if out.Dynamodb.OldImage, err = streamItem(d.OldImage); err != nil {
			return nil, err
		}
	}
	return json.Marshal(out)
}

// ItemRecord renders a table item as the MODIFY stream record a pipe
// would receive for its write (NEW_AND_OLD_IMAGES, no old image): keys and
// newImage in DynamoDB JSON, as PipeRecord renders a stream's own. The
// bench uses it to give the results pipe's enrichment real records of a
// table without a stream.
func ItemRecord(eventID string, keys, newImage map[string]ddbtypes.AttributeValue, region string) ([]byte, error) {
	out := record{EventID: eventID, EventName: string(types.OperationTypeModify), EventVersion: "1.1", EventSource: "aws:dynamodb", AwsRegion: region}
	out.Dynamodb.SequenceNumber = eventID
	out.Dynamodb.StreamViewType = string(types.StreamViewTypeNewAndOldImages)
	var err error
	if out.Dynamodb.Keys, err = item(keys); err != nil {
		return nil, err
	}
	if out.Dynamodb.NewImage, err = item(newImage); err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// streamItem is item of a stream's image, read as the table's attribute
// values (the SDK's conversion), so one renderer serves both.
func streamItem(m map[string]types.AttributeValue) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	converted, err := attributevalue.FromDynamoDBStreamsMap(m)
	if err != nil {
		return nil, err
	}
	return item(converted)
}

func item(m map[string]ddbtypes.AttributeValue) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		av, err := attribute(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

// attribute renders one attribute value in DynamoDB JSON.
func attribute(v ddbtypes.AttributeValue) (map[string]any, error) {
	switch v := v.(type) {
	case *ddbtypes.AttributeValueMemberS:
		return map[string]any{"S": v.Value}, nil
	case *ddbtypes.AttributeValueMemberN:
		return map[string]any{"N": v.Value}, nil
	case *ddbtypes.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}, nil
	case *ddbtypes.AttributeValueMemberNULL:
		return map[string]any{"NULL": v.Value}, nil
	case *ddbtypes.AttributeValueMemberB:
		return map[string]any{"B": base64.StdEncoding.EncodeToString(v.Value)}, nil
	case *ddbtypes.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}, nil
	case *ddbtypes.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}, nil
	case *ddbtypes.AttributeValueMemberBS:
		list := make([]string, len(v.Value))
		for i, b := range v.Value {
			list[i] = base64.StdEncoding.EncodeToString(b)
		}
		return map[string]any{"BS": list}, nil
	case *ddbtypes.AttributeValueMemberL:
		list := make([]any, len(v.Value))
		for i, e := range v.Value {
			av, err := attribute(e)
			if err != nil {
				return nil, err
			}
			list[i] = av
		}
		return map[string]any{"L": list}, nil
	case *ddbtypes.AttributeValueMemberM:
		m, err := item(v.Value)
		if err != nil {
			return nil, err
		}
		if m == nil {
			m = map[string]any{}
		}
		return map[string]any{"M": m}, nil
	}
	return nil, fmt.Errorf("attribute value of type %T", v)
}
