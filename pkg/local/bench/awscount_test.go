package bench

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
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
