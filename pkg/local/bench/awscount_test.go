package bench

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

func TestRequestCounterCountsS3Operations(t *testing.T) {
	srv, err := awsparts.StartS3()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	if err := srv.CreateBucket(ctx, "counted"); err != nil {
		t.Fatal(err)
	}
	var c RequestCounter
	client := srv.Client(func(o *s3.Options) { o.APIOptions = append(o.APIOptions, c.Register) })

	if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("counted"), Key: aws.String("a"), Body: bytes.NewReader([]byte("hello"))}); err != nil {
		t.Fatal(err)
	}
	before := c.Snapshot()
	for range 2 {
		out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("counted"), Key: aws.String("a")})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, out.Body)
		out.Body.Close()
	}
	if _, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("counted"), Key: aws.String("missing")}); err == nil {
		t.Fatal("HEAD of a missing object succeeded")
	}
	d := c.Snapshot().Sub(before)
	if d.Count("S3.GetObject") != 2 || d.Count("S3.HeadObject") != 1 || d.Count("S3.PutObject") != 0 {
		t.Errorf("requests after the PUT = %v, want 2 GetObject and 1 (failed) HeadObject", d.Requests)
	}
	if got := c.Snapshot().Count("S3.PutObject", "S3.GetObject"); got != 3 {
		t.Errorf("total PUT+GET = %d, want 3", got)
	}
}

func TestConsumedCapacity(t *testing.T) {
	in := &dynamodb.UpdateItemInput{}
	askConsumedCapacity(in)
	if in.ReturnConsumedCapacity != types.ReturnConsumedCapacityIndexes {
		t.Errorf("UpdateItem not asked for consumed capacity by index")
	}
	get := &dynamodb.GetItemInput{}
	askConsumedCapacity(get)
	if get.ReturnConsumedCapacity != types.ReturnConsumedCapacityIndexes {
		t.Errorf("GetItem not asked for consumed capacity")
	}

	var c RequestCounter
	c.record("DynamoDB.GetItem", "", &dynamodb.GetItemOutput{ConsumedCapacity: &types.ConsumedCapacity{CapacityUnits: aws.Float64(1)}}, nil)
	c.record("DynamoDB.UpdateItem", "OBJ#", &dynamodb.UpdateItemOutput{ConsumedCapacity: &types.ConsumedCapacity{CapacityUnits: aws.Float64(2)}}, nil)
	c.record("DynamoDB.PutItem", "OBJ#", &dynamodb.PutItemOutput{}, nil) // no figure returned
	c.record("DynamoDB.UpdateItem", "PACE#", nil, context.Canceled)      // a failed conditional write
	u := c.Snapshot()
	if u.ReadUnits != 1 || u.WriteUnits != 2 || u.FailedWrites != 1 || u.Count("DynamoDB.UpdateItem") != 2 {
		t.Errorf("usage = %+v", u)
	}
	// A TOTAL answer (no split) counts as the table's.
	if w := u.Items["OBJ#"]; w != (ItemUsage{Writes: 2, TableUnits: 2}) {
		t.Errorf("OBJ# writes = %+v, want 2 requests, 2 table units", w)
	}
	if w := u.Items["PACE#"]; w != (ItemUsage{Writes: 1, Failed: 1}) {
		t.Errorf("PACE# writes = %+v, want 1 failed request", w)
	}
}

// TestWritesSplitByItemAndIndex: a write's units go to the family of the
// key it wrote, split into the table's and the indexes' as DynamoDB
// reports them (ReturnConsumedCapacity INDEXES), and Sub keeps the split.
func TestWritesSplitByItemAndIndex(t *testing.T) {
	put := &dynamodb.PutItemInput{Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "OBJ#bucket#a.jpg"}, "sk": &types.AttributeValueMemberS{Value: "V#1"}}}
	update := &dynamodb.UpdateItemInput{Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "CONTENT#ab12"}, "sk": &types.AttributeValueMemberS{Value: "REQ#x"}}}
	get := &dynamodb.GetItemInput{Key: update.Key}
	if f := itemFamily(put); f != "OBJ#" {
		t.Errorf("family of a record put = %q", f)
	}
	if f := itemFamily(update); f != "CONTENT#" {
		t.Errorf("family of a content update = %q", f)
	}
	if f := itemFamily(get); f != "CONTENT#" {
		t.Errorf("family of a content read = %q", f)
	}
	if f := itemFamily(&dynamodb.QueryInput{}); f != "" {
		t.Errorf("family of a query = %q, want none: it names no item", f)
	}
	split := func(table, index float64) *types.ConsumedCapacity {
		return &types.ConsumedCapacity{CapacityUnits: aws.Float64(table + index),
			Table:                  &types.Capacity{CapacityUnits: aws.Float64(table)},
			GlobalSecondaryIndexes: map[string]types.Capacity{"by-status": {CapacityUnits: aws.Float64(index)}}}
	}
	var c RequestCounter
	c.record("DynamoDB.UpdateItem", "OBJ#", &dynamodb.UpdateItemOutput{ConsumedCapacity: split(1, 1)}, nil)
	before := c.Snapshot()
	c.record("DynamoDB.PutItem", "OBJ#", &dynamodb.PutItemOutput{ConsumedCapacity: split(2, 3)}, nil)
	c.record("DynamoDB.UpdateItem", "CONTENT#", &dynamodb.UpdateItemOutput{ConsumedCapacity: split(1, 0)}, nil)
	c.record("DynamoDB.GetItem", "CONTENT#", &dynamodb.GetItemOutput{ConsumedCapacity: &types.ConsumedCapacity{CapacityUnits: aws.Float64(0.5)}}, nil)
	d := c.Snapshot().Sub(before)
	if w := d.Items["OBJ#"]; w != (ItemUsage{Writes: 1, TableUnits: 2, IndexUnits: 3}) {
		t.Errorf("OBJ# writes after the claim = %+v, want the put's 2 table and 3 index units", w)
	}
	if w := d.Items["CONTENT#"]; w != (ItemUsage{Reads: 1, Writes: 1, ReadUnits: 0.5, TableUnits: 1}) {
		t.Errorf("CONTENT# usage = %+v, want one write of 1 unit and one read of 0.5", w)
	}
	if d.WriteUnits != 6 {
		t.Errorf("write units after the claim = %v, want 6", d.WriteUnits)
	}
}

func TestMain(m *testing.M) { awspartstest.Main(m) }

// TestRequestCounterCountsTransactionUnits: DynamoDB Local answers
// TransactWriteItems with its consumed capacity when asked, and the
// counter takes it, under the family of the item written: a run's credit
// reservation (a one-item transaction under 1 KB) is 2 units, a
// transactional put of a 2.5 KB record with a by-status key 6 in the table
// and 6 in the index, and a refused reservation counts as a failed write.
func TestRequestCounterCountsTransactionUnits(t *testing.T) {
	_, table := awspartstest.DynamoDB(t, awsparts.WithoutStream)
	ctx := context.Background()
	var c RequestCounter
	client := awspartstest.SharedDynamoDB(t).Client(func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, c.Register) })
	store := ledger.New(client, table)
	if _, _, err := store.StartRun(ctx, ledger.Run{Name: "r", Price: 1, Cap: 1, Selection: "status=succeeded"}); err != nil {
		t.Fatal(err)
	}
	before := c.Snapshot()
	for want := range []bool{true, false} {
		ok, err := store.ReserveRunCredits(ctx, "r", 1)
		if err != nil || ok != (want == 0) {
			t.Fatalf("reservation %d under a cap of 1: %t, %v", want+1, ok, err)
		}
	}
	d := c.Snapshot().Sub(before)
	if w := d.Items[ledger.RunPartition]; w != (ItemUsage{Writes: 2, TableUnits: 2, Failed: 1}) {
		t.Errorf("RUN usage of a granted and a refused reservation = %+v, want 2 writes, 2 table units, 1 failed", w)
	}
	if d.Count("DynamoDB.TransactWriteItems") != 2 || d.WriteUnits != 2 || d.FailedWrites != 1 {
		t.Errorf("usage = %+v", d)
	}

	before = c.Snapshot()
	item := map[string]types.AttributeValue{
		tableschema.PartitionKey:            &types.AttributeValueMemberS{Value: "OBJ#b#big.jpg"},
		tableschema.SortKey:                 &types.AttributeValueMemberS{Value: "V#1"},
		tableschema.StatusIndexPartitionKey: &types.AttributeValueMemberS{Value: "succeeded#2026-11-27"},
		tableschema.StatusIndexSortKey:      &types.AttributeValueMemberS{Value: "2026-11-27T10:00:00Z"},
		"blob":                              &types.AttributeValueMemberS{Value: strings.Repeat("a", 2400)},
	}
	if size := ItemSize(item); size <= 2048 || size > 3072 {
		t.Fatalf("item of %d bytes, want between 2 and 3 KB", size)
	}
	if _, err := client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(table), Item: item}}}}); err != nil {
		t.Fatal(err)
	}
	if w := c.Snapshot().Sub(before).Items["OBJ#"]; w != (ItemUsage{Writes: 1, TableUnits: 6, IndexUnits: 6}) {
		t.Errorf("transactional put of a 3 KB record = %+v, want 6 table and 6 index units (2 per KB each)", w)
	}
}

func TestTransactionFamily(t *testing.T) {
	key := func(pk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{tableschema.PartitionKey: &types.AttributeValueMemberS{Value: pk}}
	}
	in := &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{Key: key("RUN")}}, {Put: &types.Put{Item: key("BUDGET#2026-11-27")}}, {ConditionCheck: &types.ConditionCheck{Key: key("RUN")}}}}
	if f := itemFamily(in); f != "BUDGET#+RUN" {
		t.Errorf("family of a transaction over a run and a budget = %q, want BUDGET#+RUN", f)
	}
	if f := itemFamily(&dynamodb.TransactWriteItemsInput{TransactItems: in.TransactItems[:1]}); f != "RUN" {
		t.Errorf("family of a run's reservation = %q, want RUN", f)
	}
}
