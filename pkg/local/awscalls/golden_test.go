package awscalls

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestGoldenUpdateCheckAndShares(t *testing.T) {
	path := filepath.Join(t.TempDir(), "aws-calls", "fn.json")
	soak := []Call{
		{Service: "S3", Operation: "GetObject", Bucket: "b", Key: "k"},
		{Service: "S3", Operation: "GetObject", Bucket: "b", Key: "k", VersionID: "v"},
		{Service: "DynamoDB", Operation: "UpdateItem", TableName: "t", Failed: true},
	}
	sqs := []Call{{Service: "SQS", Operation: "GetQueueUrl", QueueName: "q"}}
	if err := CheckGolden(path, "pkg/local/soak", soak, true); err != nil {
		t.Fatal(err)
	}
	if err := CheckGolden(path, "pkg/predictor", sqs, true); err != nil {
		t.Fatal(err)
	}
	got, err := ReadGolden(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Service: "DynamoDB", Operation: "UpdateItem", Resource: "table", IAMActions: []string{"dynamodb:UpdateItem"}, RecordedBy: map[string][]string{"pkg/local/soak": {"dynamodb:UpdateItem"}}},
		{Service: "S3", Operation: "GetObject", Resource: "object", IAMActions: []string{"s3:GetObject", "s3:GetObjectVersion"}, RecordedBy: map[string][]string{"pkg/local/soak": {"s3:GetObject", "s3:GetObjectVersion"}}},
		{Service: "SQS", Operation: "GetQueueUrl", Resource: "queue", IAMActions: []string{"sqs:GetQueueUrl"}, RecordedBy: map[string][]string{"pkg/predictor": {"sqs:GetQueueUrl"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("golden list:\n got %+v\nwant %+v", got, want)
	}

	// Recorded ⊆ golden passes, for all of it or a part.
	if err := CheckGolden(path, "pkg/local/soak", soak, false); err != nil {
		t.Error(err)
	}
	if err := CheckGolden(path, "pkg/local/soak", soak[:1], false); err != nil {
		t.Error(err)
	}
	// A new operation, a new action of a listed operation, a call on
	// another kind of resource and an unmapped service all fail.
	for _, c := range []Call{
		{Service: "DynamoDB", Operation: "DeleteItem", TableName: "t"},
		{Service: "S3", Operation: "HeadObject", Bucket: "b", Key: "k", VersionID: "v"},
		{Service: "DynamoDB", Operation: "UpdateItem", TableName: "t", IndexName: "i"},
		{Service: "SNS", Operation: "Publish"},
	} {
		err := CheckGolden(path, "pkg/local/soak", append(soak, c), false)
		if err == nil || !strings.Contains(err.Error(), c.Operation) || !strings.Contains(err.Error(), "infra/policy_test.go") {
			t.Errorf("%s %s: check error = %v, want it named with the way to fix it", c.Service, c.Operation, err)
		}
	}

	// The same operation from two packages is listed once, with the
	// actions of both.
	if err := CheckGolden(path, "pkg/other", []Call{{Service: "S3", Operation: "GetObject", Bucket: "b", Key: "k", VersionID: "v"}}, true); err != nil {
		t.Fatal(err)
	}
	// An update replaces exactly the package's share.
	if err := CheckGolden(path, "pkg/local/soak", soak[:1], true); err != nil {
		t.Fatal(err)
	}
	got, _ = ReadGolden(path)
	want = []Entry{
		{Service: "S3", Operation: "GetObject", Resource: "object", IAMActions: []string{"s3:GetObject", "s3:GetObjectVersion"},
			RecordedBy: map[string][]string{"pkg/other": {"s3:GetObjectVersion"}, "pkg/local/soak": {"s3:GetObject"}}},
		{Service: "SQS", Operation: "GetQueueUrl", Resource: "queue", IAMActions: []string{"sqs:GetQueueUrl"}, RecordedBy: map[string][]string{"pkg/predictor": {"sqs:GetQueueUrl"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after the updates:\n got %+v\nwant %+v", got, want)
	}
	if err := CheckGolden(path, "pkg/other", nil, true); err != nil {
		t.Fatal(err)
	}
	got, _ = ReadGolden(path)
	if want := []string{"s3:GetObject"}; len(got) != 2 || !reflect.DeepEqual(got[0].IAMActions, want) {
		t.Errorf("after pkg/other recorded nothing: %+v", got)
	}
	if _, err := os.Stat(path + ".lock"); !os.IsNotExist(err) {
		t.Errorf("the lock file remains: %v", err)
	}
}

func TestGoldenMissingFileIsEmpty(t *testing.T) {
	err := CheckGolden(filepath.Join(t.TempDir(), "none.json"), "pkg/x", []Call{{Service: "SQS", Operation: "SendMessage", QueueURL: "u"}}, false)
	if err == nil || !strings.Contains(err.Error(), "SQS SendMessage (queue) -> sqs:SendMessage") {
		t.Errorf("error = %v", err)
	}
}
