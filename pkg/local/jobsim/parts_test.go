package jobsim

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// The bucket pages as S3 does: 1,000 versions a page, resumed from the
// markers, every key once, in order.
func TestTheBucketListsEveryVersionOnceInPages(t *testing.T) {
	b := &bucket{name: "b", prefix: "p/", n: 2345}
	in := &s3.ListObjectVersionsInput{Bucket: aws.String("b"), Prefix: aws.String("p/")}
	seen, pages := 0, 0
	for {
		out, err := b.ListObjectVersions(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, v := range out.Versions {
			if got, want := aws.ToString(v.Key), b.key(seen); got != want {
				t.Fatalf("version %d is %s, want %s", seen, got, want)
			}
			seen++
		}
		if !aws.ToBool(out.IsTruncated) {
			break
		}
		in.KeyMarker, in.VersionIdMarker = out.NextKeyMarker, out.NextVersionIdMarker
	}
	if seen != b.n || pages != 3 {
		t.Errorf("listed %d versions in %d pages, want %d in 3", seen, pages, b.n)
	}
}

// The queue keeps SQS's rules: a delayed message is invisible until its
// delay, a message received maxReceiveCount times dead-letters on the next
// receive, and one past its retention is deleted silently.
func TestTheQueueDelaysDeadLettersAndExpires(t *testing.T) {
	l := newLoop(epoch)
	q := newQueue(l, time.Hour, time.Minute, 2)
	q.onVisible = func() {}
	s := sender{q: q, url: "u"}
	if _, err := s.SendMessageBatch(context.Background(), &sqs.SendMessageBatchInput{QueueUrl: aws.String("u"),
		Entries: []types.SendMessageBatchRequestEntry{{Id: aws.String("a"), MessageBody: aws.String("x"), DelaySeconds: 30}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SendMessageBatch(context.Background(), &sqs.SendMessageBatchInput{QueueUrl: aws.String("u"),
		Entries: []types.SendMessageBatchRequestEntry{{Id: aws.String("a"), MessageBody: aws.String("x"), DelaySeconds: 901}}}); err == nil {
		t.Error("DelaySeconds 901 accepted, want SQS's refusal")
	}
	if got := q.receive(10); len(got) != 0 {
		t.Fatalf("received %d before the delay", len(got))
	}
	l.now = epoch.Add(30 * time.Second)
	for i := range 2 {
		if got := q.receive(10); len(got) != 1 {
			t.Fatalf("receive %d: %d messages, want 1", i+1, len(got))
		}
		l.now = l.now.Add(time.Minute)
	}
	if got := q.receive(10); len(got) != 0 || q.st.DeadLettered != 1 {
		t.Errorf("third receive: %d messages, %d dead-lettered; want none and 1", len(got), q.st.DeadLettered)
	}
	q.send("y", false, 0)
	l.now = l.now.Add(time.Hour)
	if got := q.receive(10); len(got) != 0 || q.st.Expired != 1 || q.depth() != 0 {
		t.Errorf("after the retention: %d received, %d expired, depth %d; want 0, 1, 0", len(got), q.st.Expired, q.depth())
	}
}
