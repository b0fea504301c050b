package predictor

import (
	"context"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// requestCounter counts the handler's requests to S3 and DynamoDB by
// operation, so tests and the benchmark can state what one image costs.
type requestCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *requestCounter) add(op string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]int{}
	}
	c.counts[op]++
}

// get returns the count of one operation, such as "s3.GetObject".
func (c *requestCounter) get(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[op]
}

// total returns the count of all operations of a service ("s3",
// "dynamodb").
func (c *requestCounter) total(service string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for op, v := range c.counts {
		if strings.HasPrefix(op, service+".") {
			n += v
		}
	}
	return n
}

// countingObjects is the handler's S3 client, counted; ranged GETs are
// counted apart.
type countingObjects struct {
	ObjectStore
	n *requestCounter
}

func (c countingObjects) HeadObject(ctx context.Context, in *s3.HeadObjectInput, optFns ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	c.n.add("s3.HeadObject")
	return c.ObjectStore.HeadObject(ctx, in, optFns...)
}

func (c countingObjects) GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	if aws.ToString(in.Range) != "" {
		c.n.add("s3.GetObjectRange")
	} else {
		c.n.add("s3.GetObject")
	}
	return c.ObjectStore.GetObject(ctx, in, optFns...)
}

// countingDynamoDB is the handler's DynamoDB client, counted.
type countingDynamoDB struct {
	ledger.DynamoDBAPI
	n *requestCounter
}

func (c countingDynamoDB) GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.n.add("dynamodb.GetItem")
	return c.DynamoDBAPI.GetItem(ctx, in, optFns...)
}

func (c countingDynamoDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.n.add("dynamodb.PutItem")
	return c.DynamoDBAPI.PutItem(ctx, in, optFns...)
}

func (c countingDynamoDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.n.add("dynamodb.UpdateItem")
	return c.DynamoDBAPI.UpdateItem(ctx, in, optFns...)
}

func (c countingDynamoDB) Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	c.n.add("dynamodb.Query")
	return c.DynamoDBAPI.Query(ctx, in, optFns...)
}
