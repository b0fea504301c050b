package bench

import (
	"context"
	"maps"
	"strings"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// RequestCounter counts the AWS requests of the clients it is registered
// on, by operation, and adds up the DynamoDB capacity units they consumed.
// Register it on a client with
//
//	o.APIOptions = append(o.APIOptions, counter.Register)
//
// For DynamoDB it asks every item operation to return its consumed
// capacity (ReturnConsumedCapacity TOTAL), which changes nothing else.
//
// Items whose partition key starts with one of Prefixes (the key held in
// attribute KeyAttribute) are also counted apart, in Usage.ByPrefix: the
// content ledger's items beside the object records of the same table, so
// the cost of one kind of item can be stated alone.
type RequestCounter struct {
	KeyAttribute string
	Prefixes     []string

	mu    sync.Mutex
	usage Usage
}

// Usage is what a RequestCounter has seen.
type Usage struct {
	// Requests counts operations (not retried attempts) by "Service.Operation",
	// e.g. "S3.GetObject", "DynamoDB.UpdateItem". Failed requests count too:
	// AWS bills them.
	Requests map[string]int
	// ReadUnits and WriteUnits are the DynamoDB capacity units reported by
	// successful responses. A conditional write that fails consumes write
	// units too, but its error carries no figure: see FailedWrites.
	ReadUnits, WriteUnits float64
	// FailedWrites counts DynamoDB writes that returned an error.
	FailedWrites int
	// ByPrefix is the DynamoDB part of the above for the items of each of
	// the counter's Prefixes (included in the totals too).
	ByPrefix map[string]ItemUsage
}

// ItemUsage is the DynamoDB usage of one kind of item.
type ItemUsage struct {
	Requests              int
	ReadUnits, WriteUnits float64
	FailedWrites          int
}

func (a ItemUsage) sub(b ItemUsage) ItemUsage {
	return ItemUsage{Requests: a.Requests - b.Requests, ReadUnits: a.ReadUnits - b.ReadUnits,
		WriteUnits: a.WriteUnits - b.WriteUnits, FailedWrites: a.FailedWrites - b.FailedWrites}
}

// Add returns a plus b.
func (a ItemUsage) Add(b ItemUsage) ItemUsage {
	return ItemUsage{Requests: a.Requests + b.Requests, ReadUnits: a.ReadUnits + b.ReadUnits,
		WriteUnits: a.WriteUnits + b.WriteUnits, FailedWrites: a.FailedWrites + b.FailedWrites}
}

// Register adds the counter to a client's middleware stack.
func (c *RequestCounter) Register(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("benchRequestCounter",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			askConsumedCapacity(in.Parameters)
			prefix := c.prefixOf(in.Parameters)
			out, md, err := next.HandleInitialize(ctx, in)
			c.record(awsmiddleware.GetServiceID(ctx)+"."+awsmiddleware.GetOperationName(ctx), prefix, out.Result, err)
			return out, md, err
		}), middleware.After)
}

// Snapshot returns a copy of the usage so far.
func (c *RequestCounter) Snapshot() Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.usage
	u.Requests = maps.Clone(c.usage.Requests)
	if u.Requests == nil {
		u.Requests = map[string]int{}
	}
	u.ByPrefix = maps.Clone(c.usage.ByPrefix)
	return u
}

// Sub returns u minus before, for the usage of a stretch of work.
func (u Usage) Sub(before Usage) Usage {
	d := Usage{
		Requests:     map[string]int{},
		ReadUnits:    u.ReadUnits - before.ReadUnits,
		WriteUnits:   u.WriteUnits - before.WriteUnits,
		FailedWrites: u.FailedWrites - before.FailedWrites,
	}
	for op, n := range u.Requests {
		if n -= before.Requests[op]; n != 0 {
			d.Requests[op] = n
		}
	}
	for p, x := range u.ByPrefix {
		if d.ByPrefix == nil {
			d.ByPrefix = map[string]ItemUsage{}
		}
		d.ByPrefix[p] = x.sub(before.ByPrefix[p])
	}
	return d
}

// Count returns the number of requests of the given operations.
func (u Usage) Count(ops ...string) int {
	n := 0
	for _, op := range ops {
		n += u.Requests[op]
	}
	return n
}

func (c *RequestCounter) record(op, prefix string, result any, err error) {
	read, write, isWrite := consumedCapacity(result)
	failed := 0
	if err != nil && (isWrite || isDynamoDBWrite(op)) {
		failed = 1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.usage.Requests == nil {
		c.usage.Requests = map[string]int{}
	}
	c.usage.Requests[op]++
	c.usage.ReadUnits += read
	c.usage.WriteUnits += write
	c.usage.FailedWrites += failed
	if prefix != "" {
		if c.usage.ByPrefix == nil {
			c.usage.ByPrefix = map[string]ItemUsage{}
		}
		c.usage.ByPrefix[prefix] = c.usage.ByPrefix[prefix].Add(ItemUsage{Requests: 1, ReadUnits: read, WriteUnits: write, FailedWrites: failed})
	}
}

// prefixOf is the first of the counter's Prefixes that the partition key
// of a DynamoDB item request starts with, or "".
func (c *RequestCounter) prefixOf(params any) string {
	if len(c.Prefixes) == 0 {
		return ""
	}
	var key map[string]types.AttributeValue
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		key = in.Key
	case *dynamodb.PutItemInput:
		key = in.Item
	case *dynamodb.UpdateItemInput:
		key = in.Key
	case *dynamodb.DeleteItemInput:
		key = in.Key
	}
	pk, ok := key[c.KeyAttribute].(*types.AttributeValueMemberS)
	if !ok {
		return ""
	}
	for _, p := range c.Prefixes {
		if strings.HasPrefix(pk.Value, p) {
			return p
		}
	}
	return ""
}

func isDynamoDBWrite(op string) bool {
	switch op {
	case "DynamoDB.PutItem", "DynamoDB.UpdateItem", "DynamoDB.DeleteItem":
		return true
	}
	return false
}

// askConsumedCapacity sets ReturnConsumedCapacity on DynamoDB item inputs.
func askConsumedCapacity(params any) {
	const total = types.ReturnConsumedCapacityTotal
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.PutItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.UpdateItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.DeleteItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.QueryInput:
		in.ReturnConsumedCapacity = total
	}
}

// consumedCapacity extracts the units of a DynamoDB output: reads for
// GetItem and Query, writes for the others.
func consumedCapacity(result any) (read, write float64, isWrite bool) {
	switch out := result.(type) {
	case *dynamodb.GetItemOutput:
		return units(out.ConsumedCapacity), 0, false
	case *dynamodb.QueryOutput:
		return units(out.ConsumedCapacity), 0, false
	case *dynamodb.PutItemOutput:
		return 0, units(out.ConsumedCapacity), true
	case *dynamodb.UpdateItemOutput:
		return 0, units(out.ConsumedCapacity), true
	case *dynamodb.DeleteItemOutput:
		return 0, units(out.ConsumedCapacity), true
	}
	return 0, 0, false
}

func units(c *types.ConsumedCapacity) float64 {
	if c == nil || c.CapacityUnits == nil {
		return 0
	}
	return *c.CapacityUnits
}
