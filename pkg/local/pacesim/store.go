package pacesim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/truora/minidyn/aws-v2/client"

	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// DynamoDB's documented limits the store enforces (docs/benchmarks.md cites
// the pages): a partition serves at most 1,000 write units and 3,000 read
// units a second, whatever the table's mode; a write unit is one write of
// up to 1 KB, an UpdateItem is sized by the larger of the item before and
// after, and a conditional write whose condition fails still consumes
// units, sized by the item as it is; a strongly consistent read of up to
// 4 KB is one read unit. Beyond a partition's limit a request is refused
// with ProvisionedThroughputExceededException (reason
// TableWriteKeyRangeThroughputExceeded), consuming nothing, and the SDK
// retries it.
const (
	PartitionWriteUnits = 1000
	PartitionReadUnits  = 3000
	writeUnitBytes      = 1024
	readUnitBytes       = 4096
)

// StoreLatency is the schedule store's timing. DynamoDB documents
// "single-digit millisecond" latency and no per-item figure; these are
// the model's assumptions, stated in docs/benchmarks.md.
type StoreLatency struct {
	// A request's round trip, uncontended: Base plus a log-normal part of
	// median Median and shape Sigma (half each way).
	Base, Median time.Duration
	Sigma        float64
	// PerWriteUnit is how long an item is busy applying one write unit:
	// writes to one item are applied one at a time, in the order they
	// arrive, each on the item as the writes before it left it.
	PerWriteUnit time.Duration
}

// DefaultStoreLatency: a round trip of 4.5 ms at the median and about
// 10 ms at p99, and an item applying 1,000 write units a second, the
// partition's limit (one item cannot be written faster than its partition).
var DefaultStoreLatency = StoreLatency{Base: 2 * time.Millisecond, Median: 2500 * time.Microsecond, Sigma: 0.5,
	PerWriteUnit: time.Millisecond}

// StoreStats are the store's counters for the schedule's partition.
type StoreStats struct {
	Writes      int64 // write requests that reached the table (conditional failures included)
	Conflicts   int64 // of which conditional failures
	Throttled   int64 // requests refused for the partition's throughput (each retried by the SDK or failed)
	Failed      int64 // requests that failed after the SDK's last attempt
	WriteUnits  float64
	Reads       int64
	ReadUnits   float64
	PeakWriteUS float64       // the most write units consumed in any one second
	WaitP99     time.Duration // the p99 of a write's wait for the item (queueing behind others)
}

// store is a DynamoDB table holding the schedule items, as the pacer sees
// it through the SDK: minidyn (an in-memory DynamoDB whose condition and
// update expressions follow DynamoDB's) applies each request, and the
// store adds the latency, the per-item order and the partition's limits on
// the scheduler's clock. One partition: every schedule item of a run is
// counted against it (K items of one name may hash to several partitions
// on AWS; counting them together is the conservative reading).
type store struct {
	s     *sched
	db    *client.Client
	table string
	lat   StoreLatency
	rng   *rand.Rand
	// The SDK's retry policy of the predictor's DynamoDB client.
	retryer     *retry.Standard
	busyUntil   map[string]time.Time // per item
	writeWindow window
	readWindow  window
	waits       []time.Duration
	st          StoreStats
}

func newStore(s *sched, rng *rand.Rand, lat StoreLatency) (*store, error) {
	db := client.NewClient()
	const table = "results"
	if err := client.AddTable(context.Background(), db, table, tableschema.PartitionKey, tableschema.SortKey); err != nil {
		return nil, fmt.Errorf("pacesim: create the table: %w", err)
	}
	return &store{s: s, db: db, table: table, lat: lat, rng: rng,
		retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = predictor.DynamoDBMaxAttempts
			o.MaxBackoff = predictor.DynamoDBMaxBackoff
		}),
		busyUntil: map[string]time.Time{}}, nil
}

// client is the store as the instances' DynamoDB client (pacer.DynamoDBAPI):
// a request sleeps the actor that sends it, the one running.
type storeClient struct{ st *store }

func (st *store) client() storeClient { return storeClient{st: st} }

func (c storeClient) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	a := c.st.s.cur
	var out *dynamodb.UpdateItemOutput
	err := c.st.withRetries(a, func() error {
		var err error
		out, err = c.st.update(a, in)
		return err
	})
	return out, err
}

func (c storeClient) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	a := c.st.s.cur
	var out *dynamodb.GetItemOutput
	err := c.st.withRetries(a, func() error {
		var err error
		out, err = c.st.get(a, in)
		return err
	})
	return out, err
}

// withRetries is the SDK's retry loop for throttling: up to MaxAttempts,
// sleeping the standard retryer's delay between attempts.
func (st *store) withRetries(a *actor, try func() error) error {
	for attempt := 1; ; attempt++ {
		err := try()
		var pte *types.ProvisionedThroughputExceededException
		if !errors.As(err, &pte) {
			return err
		}
		if attempt >= st.retryer.MaxAttempts() {
			st.st.Failed++
			return fmt.Errorf("operation error DynamoDB: exceeded maximum number of attempts, %d: %w", attempt, err)
		}
		d, derr := st.retryer.RetryDelay(attempt, err)
		if derr != nil {
			return derr
		}
		if err := a.sleep(d); err != nil {
			return err
		}
	}
}

func (st *store) roundTrip() time.Duration {
	l := st.lat
	return l.Base + time.Duration(float64(l.Median)*math.Exp(l.Sigma*st.rng.NormFloat64()))
}

// update is one UpdateItem attempt: the request travels half the round
// trip, is refused if the partition has no write units left in the last
// second, else waits for the item's writes before it, is applied, and the
// answer travels back.
func (st *store) update(a *actor, in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
	rt := st.roundTrip()
	if err := a.sleep(rt / 2); err != nil {
		return nil, err
	}
	now := st.s.now
	key := itemKey(in.Key)
	before := st.item(in.Key)
	// Admission is decided on the item's size before: an update grows the
	// schedule item by a few bytes at most, never across a unit.
	if st.writeWindow.sum(now)+units(itemSize(before), writeUnitBytes) > PartitionWriteUnits {
		st.st.Throttled++
		if err := a.sleep(rt / 2); err != nil {
			return nil, err
		}
		return nil, throttled("TableWriteKeyRangeThroughputExceeded")
	}
	out, err := st.db.UpdateItem(context.Background(), in)
	after := st.item(in.Key)
	var ccf *types.ConditionalCheckFailedException
	u := units(max(itemSize(before), itemSize(after)), writeUnitBytes)
	if errors.As(err, &ccf) {
		st.st.Conflicts++
		u = units(itemSize(before), writeUnitBytes)
	} else if err != nil {
		return nil, fmt.Errorf("pacesim: the store refused an update: %w", err)
	}
	st.st.Writes++
	st.st.WriteUnits += u
	st.writeWindow.add(now, u)
	st.st.PeakWriteUS = max(st.st.PeakWriteUS, st.writeWindow.sum(now))
	start := now
	if b := st.busyUntil[key]; b.After(now) {
		start = b
	}
	done := start.Add(time.Duration(u * float64(st.lat.PerWriteUnit)))
	st.busyUntil[key] = done
	st.waits = append(st.waits, start.Sub(now))
	if err := a.sleepUntil(done.Add(rt / 2)); err != nil {
		return nil, err
	}
	return out, err
}

// get is one strongly consistent GetItem attempt (reads do not wait for
// the item's writes: a read sees the item as the writes applied so far
// left it).
func (st *store) get(a *actor, in *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
	rt := st.roundTrip()
	if err := a.sleep(rt / 2); err != nil {
		return nil, err
	}
	now := st.s.now
	u := units(itemSize(st.item(in.Key)), readUnitBytes)
	if !aws.ToBool(in.ConsistentRead) {
		u /= 2
	}
	if st.readWindow.sum(now)+u > PartitionReadUnits {
		st.st.Throttled++
		if err := a.sleep(rt / 2); err != nil {
			return nil, err
		}
		return nil, throttled("TableReadKeyRangeThroughputExceeded")
	}
	out, err := st.db.GetItem(context.Background(), in)
	if err != nil {
		return nil, fmt.Errorf("pacesim: the store refused a read: %w", err)
	}
	st.st.Reads++
	st.st.ReadUnits += u
	st.readWindow.add(now, u)
	if err := a.sleep(rt / 2); err != nil {
		return nil, err
	}
	return out, nil
}

func throttled(reason string) error {
	return &types.ProvisionedThroughputExceededException{
		Message:           aws.String("Throughput exceeds the current capacity of your table or index."),
		ThrottlingReasons: []types.ThrottlingReason{{Reason: aws.String(reason)}},
	}
}

// item is the stored item under key, nil when none (read without latency:
// the store's own bookkeeping).
func (st *store) item(key map[string]types.AttributeValue) map[string]types.AttributeValue {
	out, err := st.db.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(st.table), Key: key})
	if err != nil {
		return nil
	}
	return out.Item
}

func (st *store) stats() StoreStats {
	s := st.st
	s.WaitP99 = percentile(st.waits, 0.99)
	return s
}

func itemKey(key map[string]types.AttributeValue) string {
	var pk, sk string
	if v, ok := key[tableschema.PartitionKey].(*types.AttributeValueMemberS); ok {
		pk = v.Value
	}
	if v, ok := key[tableschema.SortKey].(*types.AttributeValueMemberS); ok {
		sk = v.Value
	}
	return pk + "\x00" + sk
}

// itemSize is DynamoDB's item size: each attribute's name plus its value,
// a number taking one byte per two significant digits and one more
// ("Item sizes and formats" in the Developer Guide).
func itemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name)
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			n += len(v.Value)
		case *types.AttributeValueMemberN:
			digits := 0
			for _, r := range v.Value {
				if r >= '0' && r <= '9' {
					digits++
				}
			}
			n += (digits+1)/2 + 1
		default:
			n += 8
		}
	}
	return n
}

// units is the capacity units of a request on an item of size bytes: one
// per started unit of unit bytes, at least one.
func units(size, unit int) float64 { return float64(max((size+unit-1)/unit, 1)) }

// window sums units consumed over the last second.
type window struct {
	at    []time.Time
	units []float64
	total float64
}

func (w *window) add(now time.Time, u float64) {
	w.sum(now)
	w.at = append(w.at, now)
	w.units = append(w.units, u)
	w.total += u
}

func (w *window) sum(now time.Time) float64 {
	drop := 0
	for drop < len(w.at) && !w.at[drop].After(now.Add(-time.Second)) {
		w.total -= w.units[drop]
		drop++
	}
	w.at, w.units = w.at[drop:], w.units[drop:]
	return w.total
}
