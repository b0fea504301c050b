package jobsim

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/truora/minidyn/aws-v2/client"
)

// DBStats count the job engine's DynamoDB requests (the Store's, the
// Feeder's and the predictor's counter updates), for the engine's cost.
type DBStats struct {
	GetItem, PutItem, UpdateItem, DeleteItem, Query, TransactWriteItems int64
}

// countingDB is minidyn as the engine's DynamoDB client, counting requests.
type countingDB struct {
	mini *client.Client
	st   DBStats
}

func (d *countingDB) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	d.st.GetItem++
	return d.mini.GetItem(ctx, in, opts...)
}

func (d *countingDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	d.st.PutItem++
	return d.mini.PutItem(ctx, in, opts...)
}

func (d *countingDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	d.st.UpdateItem++
	return d.mini.UpdateItem(ctx, in, opts...)
}

func (d *countingDB) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	d.st.DeleteItem++
	return d.mini.DeleteItem(ctx, in, opts...)
}

func (d *countingDB) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	d.st.Query++
	out, err := d.mini.Query(ctx, in, opts...)
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
	return d.mini.TransactWriteItems(ctx, in, opts...)
}
