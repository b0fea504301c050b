package awsapi

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
)

func TestSQSThroughTheSDKClient(t *testing.T) {
	ctx := context.Background()
	cfg, _ := serve(t, NewSQS())
	client := sqs.NewFromConfig(cfg)

	if _, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("uploads-dlq")}); err != nil {
		t.Fatal(err)
	}
	created, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("uploads"), Attributes: map[string]string{
		"VisibilityTimeout": "30",
		"RedrivePolicy":     `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:uploads-dlq","maxReceiveCount":"2"}`,
	}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("uploads")})
	if err != nil || aws.ToString(got.QueueUrl) != aws.ToString(created.QueueUrl) {
		t.Fatalf("GetQueueUrl = %v, %v; CreateQueue said %s", aws.ToString(got.QueueUrl), err, aws.ToString(created.QueueUrl))
	}
	url := created.QueueUrl
	dlq, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("uploads-dlq")})
	if err != nil {
		t.Fatal(err)
	}

	var missing *types.QueueDoesNotExist
	if _, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("nope")}); !errors.As(err, &missing) {
		t.Errorf("GetQueueUrl of a missing queue: %v, want QueueDoesNotExist", err)
	}

	// The SDK checks every MD5 of a send and a receive: a wrong one fails.
	if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("now")}); err != nil {
		t.Fatal(err)
	}
	batch, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: url, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("later"), DelaySeconds: 600},
		{Id: aws.String("b"), MessageBody: aws.String("too late"), DelaySeconds: 901},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(batch.Successful) != 1 || aws.ToString(batch.Successful[0].Id) != "a" || len(batch.Failed) != 1 || aws.ToString(batch.Failed[0].Id) != "b" {
		t.Fatalf("SendMessageBatch = %+v / %+v, want a sent and b (901 s) refused", batch.Successful, batch.Failed)
	}
	if _, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: url, Entries: make([]types.SendMessageBatchRequestEntry, 11)}); err == nil {
		t.Error("a batch of 11 was accepted")
	}

	attrs := func(q *string) map[string]string {
		t.Helper()
		out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q, AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Attributes
	}
	if a := attrs(url); a[AttrMessages] != "1" || a[AttrMessagesDelayed] != "1" || a[AttrMessagesNotVisible] != "0" {
		t.Errorf("attributes after two sends = %v, want 1 visible and 1 delayed", a)
	}

	// Received twice without a delete (visibility 0 makes it visible at
	// once), the third receive moves it to the dead-letter queue.
	for i := 1; i <= 2; i++ {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 0})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) != 1 || aws.ToString(out.Messages[0].Body) != "now" || out.Messages[0].Attributes["ApproximateReceiveCount"] != strconv.Itoa(i) {
			t.Fatalf("receive %d = %+v", i, out.Messages)
		}
		if _, err := client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: url, ReceiptHandle: out.Messages[0].ReceiptHandle, VisibilityTimeout: 0}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url, WaitTimeSeconds: 1})
	if err != nil || len(out.Messages) != 0 {
		t.Fatalf("third receive = %+v, %v; want none (dead-lettered)", out.Messages, err)
	}
	if a := attrs(dlq.QueueUrl); a[AttrMessages] != "1" {
		t.Errorf("dead-letter queue attributes = %v, want 1 message", a)
	}
	if a := attrs(url); a["RedrivePolicy"] == "" || a["QueueArn"] != "arn:aws:sqs:us-east-1:000000000000:uploads" {
		t.Errorf("queue attributes = %v, want its ARN and redrive policy", a)
	}
	if _, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: dlq.QueueUrl}); err == nil {
		t.Error("a receive on the local dead-letter view succeeded")
	}
}

func TestSQSDeletesAndServesAnAddedQueue(t *testing.T) {
	ctx := context.Background()
	s := NewSQS()
	q := sqsqueue.New(sqsqueue.WithVisibilityTimeout(time.Minute))
	cfg, endpoint := serve(t, s)
	s.AddQueue("uploads", q, 0, "")
	client := sqs.NewFromConfig(cfg)
	url := aws.String(s.QueueURL(endpoint, "uploads"))

	q.Send("one")
	q.Send("two")
	out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url, MaxNumberOfMessages: 10})
	if err != nil || len(out.Messages) != 2 {
		t.Fatalf("receive = %+v, %v", out, err)
	}
	if _, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: url, ReceiptHandle: out.Messages[0].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	del, err := client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: url, Entries: []types.DeleteMessageBatchRequestEntry{
		{Id: aws.String("x"), ReceiptHandle: out.Messages[1].ReceiptHandle}}})
	if err != nil || len(del.Successful) != 1 {
		t.Fatalf("DeleteMessageBatch = %+v, %v", del, err)
	}
	if q.Len() != 0 {
		t.Errorf("queue holds %d message(s) after deleting both", q.Len())
	}
	// Deleted since: SQS says so to a visibility change.
	if _, err := client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: url, ReceiptHandle: out.Messages[0].ReceiptHandle, VisibilityTimeout: 5}); err == nil {
		t.Error("visibility change of a deleted message succeeded")
	}
}
