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
	if in.ReturnConsumedCapacity != types.ReturnConsumedCapacityTotal {
		t.Errorf("UpdateItem not asked for consumed capacity")
	}
	get := &dynamodb.GetItemInput{}
	askConsumedCapacity(get)
	if get.ReturnConsumedCapacity != types.ReturnConsumedCapacityTotal {
		t.Errorf("GetItem not asked for consumed capacity")
	}

	var c RequestCounter
	c.record("DynamoDB.GetItem", "", &dynamodb.GetItemOutput{ConsumedCapacity: &types.ConsumedCapacity{CapacityUnits: aws.Float64(1)}}, nil)
	c.record("DynamoDB.UpdateItem", "", &dynamodb.UpdateItemOutput{ConsumedCapacity: &types.ConsumedCapacity{CapacityUnits: aws.Float64(2)}}, nil)
	c.record("DynamoDB.PutItem", "", &dynamodb.PutItemOutput{}, nil) // no figure returned
	c.record("DynamoDB.UpdateItem", "", nil, context.Canceled)       // a failed conditional write
	u := c.Snapshot()
	if u.ReadUnits != 1 || u.WriteUnits != 2 || u.FailedWrites != 1 || u.Count("DynamoDB.UpdateItem") != 2 {
		t.Errorf("usage = %+v", u)
	}
}

// The items of a prefix are counted apart as well as in the totals, from
// the partition key of the request, and Sub keeps them apart.
func TestRequestCounterCountsAPrefixApart(t *testing.T) {
	c := RequestCounter{KeyAttribute: "pk", Prefixes: []string{"CONTENT#"}}
	content := &dynamodb.UpdateItemInput{Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "CONTENT#ab"}}}
	object := &dynamodb.PutItemInput{Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "OBJ#b/k"}}}
	one := &types.ConsumedCapacity{CapacityUnits: aws.Float64(1)}
	c.record("DynamoDB.UpdateItem", c.prefixOf(content), &dynamodb.UpdateItemOutput{ConsumedCapacity: one}, nil)
	before := c.Snapshot()
	c.record("DynamoDB.UpdateItem", c.prefixOf(content), nil, context.Canceled)
	c.record("DynamoDB.PutItem", c.prefixOf(object), &dynamodb.PutItemOutput{ConsumedCapacity: one}, nil)
	u := c.Snapshot()
	if got := u.ByPrefix["CONTENT#"]; got != (ItemUsage{Requests: 2, WriteUnits: 1, FailedWrites: 1}) {
		t.Errorf("content usage = %+v", got)
	}
	if u.WriteUnits != 2 || u.FailedWrites != 1 || len(u.ByPrefix) != 1 {
		t.Errorf("totals = %+v", u)
	}
	if d := u.Sub(before).ByPrefix["CONTENT#"]; d != (ItemUsage{Requests: 1, FailedWrites: 1}) {
		t.Errorf("content usage since the first write = %+v", d)
	}
	if p := c.prefixOf(&dynamodb.QueryInput{}); p != "" {
		t.Errorf("a query has no item key, got prefix %q", p)
	}
}
