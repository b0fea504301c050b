package awscalls

import (
	"context"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// fakeAWS is a configuration whose clients get 200 and an empty JSON object
// for every request (404 for the S3 key "missing"), without any network,
// and report to rec.
func fakeAWS(rec *Recorder) aws.Config {
	return aws.Config{
		Region:      "us-east-1",
		Credentials: aws.AnonymousCredentials{},
		Retryer:     func() aws.Retryer { return aws.NopRetryer{} },
		HTTPClient: smithyhttp.ClientDoFunc(func(r *http.Request) (*http.Response, error) {
			status := http.StatusOK
			if strings.HasSuffix(r.URL.Path, "/missing") {
				status = http.StatusNotFound
			}
			return &http.Response{
				StatusCode: status,
				Header:     http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
				Body:       io.NopCloser(strings.NewReader("{}")),
				Request:    r,
			}, nil
		}),
		APIOptions: []func(*middleware.Stack) error{rec.Register},
	}
}

func TestRecorderRecordsResourcesAndIAMActions(t *testing.T) {
	var rec Recorder
	cfg := fakeAWS(&rec)
	ctx := context.Background()
	s3c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	ddb := dynamodb.NewFromConfig(cfg)
	sm := secretsmanager.NewFromConfig(cfg)
	q := sqs.NewFromConfig(cfg)

	if out, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("uploads"), Key: aws.String("in/a.jpg"), VersionId: aws.String("v1")}); err != nil {
		t.Fatal(err)
	} else {
		out.Body.Close()
	}
	if _, err := s3c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("uploads"), Key: aws.String("missing")}); err == nil {
		t.Fatal("HEAD of the missing key succeeded")
	}
	if _, err := ddb.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("results"), IndexName: aws.String("status-index")}); err != nil {
		t.Fatal(err)
	}
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "k"}}
	if _, err := ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{TableName: aws.String("results"), Key: key, UpdateExpression: aws.String("SET a = :a")}},
		{ConditionCheck: &types.ConditionCheck{TableName: aws.String("results"), Key: key, ConditionExpression: aws.String("attribute_exists(a)")}},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("geo/key")}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String("https://sqs.us-east-1.amazonaws.com/111122223333/q"), ReceiptHandle: aws.String("h")}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String("https://sqs.us-east-1.amazonaws.com/111122223333/q"),
		Entries: []sqstypes.SendMessageBatchRequestEntry{{Id: aws.String("0"), MessageBody: aws.String("{}")}}}); err != nil {
		t.Fatal(err)
	}

	want := []Call{
		{Service: "S3", Operation: "GetObject", Bucket: "uploads", Key: "in/a.jpg", VersionID: "v1"},
		{Service: "S3", Operation: "HeadObject", Bucket: "uploads", Key: "missing", Failed: true},
		{Service: "DynamoDB", Operation: "Query", TableName: "results", IndexName: "status-index"},
		{Service: "DynamoDB", Operation: "TransactWriteItems", TableName: "results", ItemOperations: []string{"UpdateItem", "ConditionCheckItem"}},
		{Service: "Secrets Manager", Operation: "GetSecretValue", SecretID: "geo/key"},
		{Service: "SQS", Operation: "ChangeMessageVisibility", QueueURL: "https://sqs.us-east-1.amazonaws.com/111122223333/q"},
		{Service: "SQS", Operation: "SendMessageBatch", QueueURL: "https://sqs.us-east-1.amazonaws.com/111122223333/q"},
	}
	got := rec.Calls()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("calls:\n got %+v\nwant %+v", got, want)
	}
	var actions []string
	for _, c := range got {
		actions = append(actions, c.IAMActions()...)
	}
	wantActions := []string{"s3:GetObjectVersion", "s3:GetObject", "dynamodb:Query", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem", "secretsmanager:GetSecretValue", "sqs:ChangeMessageVisibility", "sqs:SendMessage"}
	if !reflect.DeepEqual(actions, wantActions) {
		t.Errorf("IAM actions = %v, want %v", actions, wantActions)
	}
	rec.Reset()
	if n := len(rec.Calls()); n != 0 {
		t.Errorf("after Reset %d calls remain", n)
	}
}
