package bench

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// RequestCounter counts the AWS requests of the clients it is registered
// on, by operation, and adds up the DynamoDB capacity units they consumed.
// Register it on a client with
//
//	o.APIOptions = append(o.APIOptions, counter.Register)
//
// For DynamoDB it asks every item operation, TransactWriteItems included,
// to return its consumed capacity (ReturnConsumedCapacity INDEXES: the
// total, split into the table's and each index's), which changes nothing
// else. A transaction's units are the ones DynamoDB returns, not computed
// here: DynamoDB Local returns them for TransactWriteItems too, at the
// transactional price, AWS's "A transactional write request of an item up
// to 1 KB requires two write units"
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html):
// a one-item write under 1 KB reports 2 units, one of 2.5 KB 6, and as
// many again for its by-status index entry, which
// TestRequestCounterCountsTransactionUnits checks against DynamoDB Local.
type RequestCounter struct {
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
	// Items splits the DynamoDB item requests (GetItem, PutItem,
	// UpdateItem, DeleteItem, TransactWriteItems) by item family: the
	// item's partition key up to its first '#' ("OBJ#", "CONTENT#",
	// "PACE#", "RUN"), so a report can say which items the units go to.
	// They are in the totals above too.
	Items map[string]ItemUsage
}

// ItemUsage is the DynamoDB usage of one item family.
type ItemUsage struct {
	Reads, Writes int     // item read and write requests, failed ones included
	ReadUnits     float64 // read units the reads consumed
	TableUnits    float64 // write units the table's items consumed
	IndexUnits    float64 // write units its global secondary indexes consumed
	Failed        int     // writes that returned an error (a failed condition)
}

// Requests is the family's item requests, reads and writes.
func (a ItemUsage) Requests() int { return a.Reads + a.Writes }

// WriteUnits is the family's write units, table and indexes.
func (a ItemUsage) WriteUnits() float64 { return a.TableUnits + a.IndexUnits }

// Add returns a plus b.
func (a ItemUsage) Add(b ItemUsage) ItemUsage {
	return ItemUsage{Reads: a.Reads + b.Reads, Writes: a.Writes + b.Writes, ReadUnits: a.ReadUnits + b.ReadUnits,
		TableUnits: a.TableUnits + b.TableUnits, IndexUnits: a.IndexUnits + b.IndexUnits, Failed: a.Failed + b.Failed}
}

func (a ItemUsage) sub(b ItemUsage) ItemUsage {
	return a.Add(ItemUsage{Reads: -b.Reads, Writes: -b.Writes, ReadUnits: -b.ReadUnits,
		TableUnits: -b.TableUnits, IndexUnits: -b.IndexUnits, Failed: -b.Failed})
}

// Register adds the counter to a client's middleware stack.
func (c *RequestCounter) Register(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("benchRequestCounter",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			askConsumedCapacity(in.Parameters)
			family := itemFamily(in.Parameters)
			out, md, err := next.HandleInitialize(ctx, in)
			c.record(awsmiddleware.GetServiceID(ctx)+"."+awsmiddleware.GetOperationName(ctx), family, out.Result, err)
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
	u.Items = maps.Clone(c.usage.Items)
	if u.Items == nil {
		u.Items = map[string]ItemUsage{}
	}
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
	d.Items = map[string]ItemUsage{}
	for f, w := range u.Items {
		if w = w.sub(before.Items[f]); w != (ItemUsage{}) {
			d.Items[f] = w
		}
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

// record counts one request of op; family is the item family it read or
// wrote (empty for anything but a DynamoDB item request).
func (c *RequestCounter) record(op, family string, result any, err error) {
	cc, isWrite := consumedCapacity(result)
	read, write := 0.0, 0.0
	if isWrite {
		write = units(cc)
	} else {
		read = units(cc)
	}
	failed := err != nil && (isWrite || isDynamoDBWrite(op))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.usage.Requests == nil {
		c.usage.Requests = map[string]int{}
	}
	c.usage.Requests[op]++
	c.usage.ReadUnits += read
	c.usage.WriteUnits += write
	if failed {
		c.usage.FailedWrites++
	}
	if family == "" {
		return
	}
	if c.usage.Items == nil {
		c.usage.Items = map[string]ItemUsage{}
	}
	w := c.usage.Items[family]
	if isWrite || isDynamoDBWrite(op) {
		w.Writes++
		w.TableUnits, w.IndexUnits = w.TableUnits+tableUnits(cc), w.IndexUnits+indexUnits(cc)
	} else {
		w.Reads++
		w.ReadUnits += read
	}
	if failed {
		w.Failed++
	}
	c.usage.Items[family] = w
}

// itemFamily is the item family a DynamoDB item request names: its
// partition key up to and including the first '#', or the whole key when
// it has none; empty for any other request.
func itemFamily(params any) string {
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
	case *dynamodb.TransactWriteItemsInput:
		return transactionFamily(in.TransactItems)
	default:
		return ""
	}
	return familyOf(key)
}

// familyOf is the family of the item whose key (or whole item) is key.
func familyOf(key map[string]types.AttributeValue) string {
	pk, _ := key[tableschema.PartitionKey].(*types.AttributeValueMemberS)
	if pk == nil {
		return "?"
	}
	if i := strings.IndexByte(pk.Value, '#'); i >= 0 {
		return pk.Value[:i+1]
	}
	return pk.Value
}

// transactionFamily is the family of a transaction's items; the ledger's
// transactions write one item ("RUN", "BUDGET#"), a transaction over
// several families is counted under their names joined by '+'.
func transactionFamily(items []types.TransactWriteItem) string {
	var families []string
	for _, it := range items {
		var f string
		switch {
		case it.Put != nil:
			f = familyOf(it.Put.Item)
		case it.Update != nil:
			f = familyOf(it.Update.Key)
		case it.Delete != nil:
			f = familyOf(it.Delete.Key)
		case it.ConditionCheck != nil:
			f = familyOf(it.ConditionCheck.Key)
		}
		if !slices.Contains(families, f) {
			families = append(families, f)
		}
	}
	slices.Sort(families)
	return strings.Join(families, "+")
}

func isDynamoDBWrite(op string) bool {
	switch op {
	case "DynamoDB.PutItem", "DynamoDB.UpdateItem", "DynamoDB.DeleteItem", "DynamoDB.TransactWriteItems":
		return true
	}
	return false
}

// askConsumedCapacity sets ReturnConsumedCapacity on DynamoDB item inputs.
func askConsumedCapacity(params any) {
	const total = types.ReturnConsumedCapacityIndexes
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
	case *dynamodb.TransactWriteItemsInput:
		in.ReturnConsumedCapacity = total
	}
}

// consumedCapacity extracts the consumed capacity of a DynamoDB output,
// and whether the output is a write's.
func consumedCapacity(result any) (cc *types.ConsumedCapacity, isWrite bool) {
	switch out := result.(type) {
	case *dynamodb.GetItemOutput:
		return out.ConsumedCapacity, false
	case *dynamodb.QueryOutput:
		return out.ConsumedCapacity, false
	case *dynamodb.PutItemOutput:
		return out.ConsumedCapacity, true
	case *dynamodb.UpdateItemOutput:
		return out.ConsumedCapacity, true
	case *dynamodb.DeleteItemOutput:
		return out.ConsumedCapacity, true
	case *dynamodb.TransactWriteItemsOutput:
		return sumCapacity(out.ConsumedCapacity), true
	}
	return nil, false
}

// sumCapacity adds up a transaction's consumed capacity, one entry per
// table it wrote, into one: the total, the tables' and the indexes'.
func sumCapacity(all []types.ConsumedCapacity) *types.ConsumedCapacity {
	if len(all) == 0 {
		return nil
	}
	var total, table float64
	indexes := map[string]types.Capacity{}
	for i := range all {
		c := &all[i]
		total += units(c)
		table += tableUnits(c)
		for name, ic := range c.GlobalSecondaryIndexes {
			indexes[name] = types.Capacity{CapacityUnits: aws.Float64(aws.ToFloat64(indexes[name].CapacityUnits) + aws.ToFloat64(ic.CapacityUnits))}
		}
	}
	return &types.ConsumedCapacity{CapacityUnits: aws.Float64(total), Table: &types.Capacity{CapacityUnits: aws.Float64(table)}, GlobalSecondaryIndexes: indexes}
}

func units(c *types.ConsumedCapacity) float64 {
	if c == nil || c.CapacityUnits == nil {
		return 0
	}
	return *c.CapacityUnits
}

// tableUnits is the table's share of c; the whole of it when c is not
// split by index (a TOTAL answer).
func tableUnits(c *types.ConsumedCapacity) float64 {
	if c == nil {
		return 0
	}
	if c.Table == nil || c.Table.CapacityUnits == nil {
		return units(c) - indexUnits(c)
	}
	return *c.Table.CapacityUnits
}

// indexUnits is the global secondary indexes' share of c.
func indexUnits(c *types.ConsumedCapacity) float64 {
	if c == nil {
		return 0
	}
	n := 0.0
	for _, ic := range c.GlobalSecondaryIndexes {
		if ic.CapacityUnits != nil {
			n += *ic.CapacityUnits
		}
	}
	return n
}
