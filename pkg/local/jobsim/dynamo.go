package jobsim

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/truora/minidyn/aws-v2/client"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// DBStats count the job engine's DynamoDB requests (the Store's, the
// Feeder's and the predictor's counter updates), for the engine's cost.
type DBStats struct {
	GetItem, PutItem, UpdateItem, DeleteItem, Query, TransactWriteItems int64
}

// countingDB is the results table as the engine's DynamoDB client, on
// minidyn, counting requests. minidyn answers a Query by decoding every
// item of its table, manifest chunks of 350 KB included, which at a
// million objects makes each feeder run's Query of the active jobs cost
// the whole manifest; so the job index partitions (jobs.IndexPartition,
// jobs.ActivePartition) live in a second minidyn table of the same
// schema, and requests are routed by partition key. A transaction over
// both is applied as one per table: the loop runs one request at a time,
// so nothing interleaves, and a condition that fails in the first leaves
// the second unapplied.
type countingDB struct {
	main, index *client.Client
	st          DBStats
}

func newCountingDB(ctx context.Context) (*countingDB, error) {
	d := &countingDB{main: client.NewClient(), index: client.NewClient()}
	for _, c := range []*client.Client{d.main, d.index} {
		if _, err := c.CreateTable(ctx, tableschema.CreateTableInput(tableName)); err != nil {
			return nil, fmt.Errorf("jobsim: create the results table: %w", err)
		}
	}
	return d, nil
}

func isIndex(pk string) bool { return pk == jobs.IndexPartition || pk == jobs.ActivePartition }

// of is the table that holds the item of key (or the item itself).
func (d *countingDB) of(key map[string]types.AttributeValue) *client.Client {
	if v, ok := key[tableschema.PartitionKey].(*types.AttributeValueMemberS); ok && isIndex(v.Value) {
		return d.index
	}
	return d.main
}

func (d *countingDB) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	d.st.GetItem++
	return d.of(in.Key).GetItem(ctx, in, opts...)
}

func (d *countingDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	d.st.PutItem++
	return d.of(in.Item).PutItem(ctx, in, opts...)
}

func (d *countingDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	d.st.UpdateItem++
	return d.of(in.Key).UpdateItem(ctx, in, opts...)
}

func (d *countingDB) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	d.st.DeleteItem++
	return d.of(in.Key).DeleteItem(ctx, in, opts...)
}

// Query goes to the index table when it asks for an index partition (the
// base table's key, a value naming one), else to the main table (the
// ledger's queries of records and the by-status index).
func (d *countingDB) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	d.st.Query++
	c := d.main
	if in.IndexName == nil {
		for _, v := range in.ExpressionAttributeValues {
			if s, ok := v.(*types.AttributeValueMemberS); ok && isIndex(s.Value) {
				c = d.index
			}
		}
	}
	out, err := c.Query(ctx, in, opts...)
	// minidyn answers an empty LastEvaluatedKey where DynamoDB sends none
	// (the SDK's nil) on the last page: a caller paging until nil would
	// page for ever.
	if out != nil && len(out.LastEvaluatedKey) == 0 {
		out.LastEvaluatedKey = nil
	}
	return out, err
}

func (d *countingDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	d.st.TransactWriteItems++
	parts := map[*client.Client][]types.TransactWriteItem{}
	for _, it := range in.TransactItems {
		var key map[string]types.AttributeValue
		switch {
		case it.Put != nil:
			key = it.Put.Item
		case it.Update != nil:
			key = it.Update.Key
		case it.Delete != nil:
			key = it.Delete.Key
		case it.ConditionCheck != nil:
			key = it.ConditionCheck.Key
		}
		c := d.of(key)
		parts[c] = append(parts[c], it)
	}
	for _, c := range []*client.Client{d.main, d.index} {
		if len(parts[c]) == 0 {
			continue
		}
		part := *in
		part.TransactItems = parts[c]
		if _, err := c.TransactWriteItems(ctx, &part, opts...); err != nil {
			return nil, err
		}
	}
	return &dynamodb.TransactWriteItemsOutput{}, nil
}
