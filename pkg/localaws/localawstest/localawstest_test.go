package localawstest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/localaws/localawstest"
)

func TestMain(m *testing.M) { localawstest.Main(m) }

func TestDynamoDBGivesEachCallAFreshTable(t *testing.T) {
	ctx := context.Background()
	client, first := localawstest.DynamoDB(t)
	_, second := localawstest.DynamoDB(t)
	if first == second {
		t.Fatalf("two calls returned the same table %q", first)
	}
	if a, b := localawstest.SharedDynamoDB(t), localawstest.SharedDynamoDB(t); a != b {
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
	client, bucket := localawstest.S3(t)
	out, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: strings.NewReader("x")})
	if err != nil {
		t.Fatalf("PutObject: %v", err)
	}
	if aws.ToString(out.VersionId) == "" {
		t.Error("bucket is not versioned")
	}
}
