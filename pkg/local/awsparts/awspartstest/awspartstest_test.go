package awspartstest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
)

func TestMain(m *testing.M) { awspartstest.Main(m) }

func TestDynamoDBGivesEachCallAFreshTable(t *testing.T) {
	ctx := context.Background()
	client, first := awspartstest.DynamoDB(t)
	_, second := awspartstest.DynamoDB(t)
	if first == second {
		t.Fatalf("two calls returned the same table %q", first)
	}
	if a, b := awspartstest.SharedDynamoDB(t), awspartstest.SharedDynamoDB(t); a != b {
		t.Error("SharedDynamoDB started a second instance")
	}
	for _, table := range []string{first, second} {
		out, err := client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table)})
		if err != nil {
			t.Fatalf("Scan %s: %v", table, err)
		}
		if out.Count != 0 {
			t.Errorf("table %s is not empty", table)
		}
	}
}

func TestS3GivesAVersionedBucket(t *testing.T) {
	ctx := context.Background()
	client, bucket := awspartstest.S3(t)
	out, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: strings.NewReader("x")})
	if err != nil {
		t.Fatalf("PutObject: %v", err)
	}
	if aws.ToString(out.VersionId) == "" {
		t.Error("bucket is not versioned")
	}
	v, err := client.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(bucket)})
	if err != nil || v.Status != "Enabled" {
		t.Errorf("GetBucketVersioning = %q, %v; want Enabled", v.Status, err)
	}
}

func TestS3UnversionedGivesAnUnversionedBucket(t *testing.T) {
	ctx := context.Background()
	client, bucket := awspartstest.S3Unversioned(t)
	v, err := client.GetBucketVersioning(ctx, &s3.GetBucketVersioningInput{Bucket: aws.String(bucket)})
	if err != nil || v.Status != "" {
		t.Fatalf("GetBucketVersioning = %q, %v; want versioning never enabled", v.Status, err)
	}
	out, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: strings.NewReader("x")})
	if err != nil {
		t.Fatalf("PutObject: %v", err)
	}
	if out.VersionId != nil {
		t.Errorf("PutObject reported version id %q on an unversioned bucket", *out.VersionId)
	}
	if _, other := awspartstest.S3Unversioned(t); other == bucket {
		t.Errorf("two calls returned the same bucket %q", bucket)
	}
}
