package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
)

// fakeQueues records SendMessageBatch calls; refuse names message bodies
// (by key substring) SQS refuses, failOnce those it refuses only once.
type fakeQueues struct {
	mu       sync.Mutex
	calls    int
	sent     []string // bodies, per queue URL order
	urls     []string
	refuse   string
	failOnce map[string]bool
	attrs    map[string]map[string]string
}

func (f *fakeQueues) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if len(in.Entries) > 10 {
		return nil, fmt.Errorf("AWS.SimpleQueueService.TooManyEntriesInBatchRequest: %d entries", len(in.Entries))
	}
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		body := aws.ToString(e.MessageBody)
		fail := f.refuse != "" && strings.Contains(body, f.refuse)
		for k := range f.failOnce {
			if strings.Contains(body, k) {
				fail = true
				delete(f.failOnce, k)
			}
		}
		if fail {
			out.Failed = append(out.Failed, sqstypes.BatchResultErrorEntry{Id: e.Id, Code: aws.String("InternalError"), Message: aws.String("try again"), SenderFault: false})
			continue
		}
		f.sent = append(f.sent, body)
		f.urls = append(f.urls, aws.ToString(in.QueueUrl))
		out.Successful = append(out.Successful, sqstypes.SendMessageBatchResultEntry{Id: e.Id, MessageId: aws.String(fmt.Sprint(len(f.sent)))})
	}
	return out, nil
}

func (f *fakeQueues) GetQueueAttributes(_ context.Context, in *sqs.GetQueueAttributesInput, _ ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	attrs, ok := f.attrs[aws.ToString(in.QueueUrl)]
	if !ok {
		return nil, fmt.Errorf("AWS.SimpleQueueService.NonExistentQueue: %s", aws.ToString(in.QueueUrl))
	}
	return &sqs.GetQueueAttributesOutput{Attributes: attrs}, nil
}

// decoded is a sent body read back as the predictor reads it: an S3 event
// notification, decoded by aws-lambda-go, with the URL-decoded key.
func decoded(t *testing.T, body string) events.S3EventRecord {
	t.Helper()
	var ev events.S3Event
	if err := jsonUnmarshal(body, &ev); err != nil {
		t.Fatalf("body is not an S3 event: %v\n%s", err, body)
	}
	if len(ev.Records) != 1 {
		t.Fatalf("%d records in %s", len(ev.Records), body)
	}
	r := ev.Records[0]
	if r.EventSource != "aws:s3" || !strings.HasPrefix(r.EventName, "ObjectCreated:") || r.EventVersion != "2.1" {
		t.Errorf("event source/name/version = %q %q %q", r.EventSource, r.EventName, r.EventVersion)
	}
	return r
}

func putObjects(t *testing.T, client *s3.Client, bucket string, objects map[string]string) map[string]*s3.PutObjectOutput {
	t.Helper()
	out := map[string]*s3.PutObjectOutput{}
	for key, body := range objects {
		o, err := client.PutObject(context.Background(), &s3.PutObjectInput{
			Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body),
		})
		if err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
		out[key] = o
	}
	return out
}

func TestBackfillSendsEveryObjectAsAnS3Event(t *testing.T) {
	s3c, bucket := awspartstest.S3(t)
	objects := map[string]string{}
	for i := range 23 { // three batches: 10 + 10 + 3
		objects[fmt.Sprintf("photos/img-%02d.jpg", i)] = fmt.Sprintf("image %d", i)
	}
	objects["photos/sea view+1 100% été.jpg"] = "unicode"
	objects["other/skip.jpg"] = "outside the prefix"
	puts := putObjects(t, s3c, bucket, objects)
	// Overwrite one object: only its latest version is sent.
	puts["photos/img-00.jpg"] = putObjects(t, s3c, bucket, map[string]string{"photos/img-00.jpg": "newer"})["photos/img-00.jpg"]

	queues := &fakeQueues{failOnce: map[string]bool{"img-05": true}}
	useAWS(t, &awsClients{objects: s3c, queues: queues, stacks: fakeStacks{name: "Geo", outputs: map[string]string{
		outputQueueURL: "https://sqs.example/queue",
	}}})

	r := runCLI(t, nil, nil, "backfill", "--stack", "Geo", "--bucket", bucket, "--prefix", "photos/")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if len(queues.sent) != 24 {
		t.Fatalf("sent %d messages, want 24 (every latest object under the prefix, one retried)", len(queues.sent))
	}
	if queues.calls != 4 {
		t.Errorf("%d SendMessageBatch calls, want 3 batches + 1 retry", queues.calls)
	}
	seen := map[string]bool{}
	for i, body := range queues.sent {
		if queues.urls[i] != "https://sqs.example/queue" {
			t.Errorf("sent to %s", queues.urls[i])
		}
		rec := decoded(t, body)
		key := rec.S3.Object.URLDecodedKey
		put, ok := puts[key]
		if !ok || key == "other/skip.jpg" {
			t.Errorf("sent unexpected key %q", key)
			continue
		}
		seen[key] = true
		if rec.S3.Bucket.Name != bucket || rec.S3.Object.Size != int64(len(objects[key])) && key != "photos/img-00.jpg" {
			t.Errorf("%s: bucket %q size %d", key, rec.S3.Bucket.Name, rec.S3.Object.Size)
		}
		// The version id is what makes a backfill hit the original record.
		if rec.S3.Object.VersionID != aws.ToString(put.VersionId) || rec.S3.Object.VersionID == "" {
			t.Errorf("%s: version %q, want the latest %q", key, rec.S3.Object.VersionID, aws.ToString(put.VersionId))
		}
		if rec.S3.Object.ETag != strings.Trim(aws.ToString(put.ETag), `"`) {
			t.Errorf("%s: etag %q, want %q", key, rec.S3.Object.ETag, aws.ToString(put.ETag))
		}
	}
	if len(seen) != 24 {
		t.Errorf("%d distinct keys sent, want 24", len(seen))
	}
	if !strings.Contains(r.stderr, "24 listed, sent 24, 0 already processed") {
		t.Errorf("progress/summary missing:\n%s", r.stderr)
	}
}

func TestBackfillSkipsFinishedObjectsWhenTheTableIsKnown(t *testing.T) {
	s3c, bucket := awspartstest.S3(t)
	ddb, table := awspartstest.DynamoDB(t)
	puts := putObjects(t, s3c, bucket, map[string]string{"done.jpg": "a", "todo.jpg": "b", "retry.jpg": "c"})
	store := ledger.New(ddb, table)
	ref := func(key string) ledger.ObjectRef {
		return ledger.ObjectRef{Bucket: bucket, Key: key, VersionID: aws.ToString(puts[key].VersionId)}
	}
	if err := store.Reject(context.Background(), ref("done.jpg"), "not_an_image", "", ledger.ObjectInfo{}); err != nil {
		t.Fatal(err)
	}
	claim, _, err := store.Claim(context.Background(), ref("retry.jpg"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Fail(context.Background(), claim, "rate_limited", "429", true); err != nil {
		t.Fatal(err)
	}

	queues := &fakeQueues{}
	useAWS(t, &awsClients{objects: s3c, queues: queues, tables: ddb, stacks: fakeStacks{name: "Geo"}})
	r := runCLI(t, nil, nil, "backfill", "--bucket", bucket, "--queue-url", "q", "--table", table)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var keys []string
	for _, body := range queues.sent {
		keys = append(keys, decoded(t, body).S3.Object.URLDecodedKey)
	}
	if strings.Join(sortedCopy(keys), ",") != "retry.jpg,todo.jpg" {
		t.Errorf("sent %v, want the unfinished objects only", keys)
	}
	if !strings.Contains(r.stderr, "3 listed, sent 2, 1 already processed") {
		t.Errorf("summary missing:\n%s", r.stderr)
	}

	t.Run("dry run sends nothing", func(t *testing.T) {
		queues := &fakeQueues{}
		useAWS(t, &awsClients{objects: s3c, queues: queues, tables: ddb, stacks: fakeStacks{name: "Geo"}})
		r := runCLI(t, nil, nil, "backfill", "--bucket", bucket, "--table", table, "--dry-run")
		if r.code != 0 || len(queues.sent) != 0 || queues.calls != 0 {
			t.Errorf("exit %d, %d calls: %s", r.code, queues.calls, r.stderr)
		}
		if !strings.Contains(r.stderr, "would send 2") {
			t.Errorf("summary missing:\n%s", r.stderr)
		}
	})
}

func TestBackfillRequeuesUnknownOutcomesOnlyWhenAsked(t *testing.T) {
	s3c, bucket := awspartstest.S3(t)
	ddb, table := awspartstest.DynamoDB(t)
	puts := putObjects(t, s3c, bucket, map[string]string{"lost.jpg": "a", "done.jpg": "b"})
	now := time.Now()
	store := ledger.New(ddb, table, func(o *ledger.Options) { o.Clock = func() time.Time { return now } })
	ref := func(key string) ledger.ObjectRef {
		return ledger.ObjectRef{Bucket: bucket, Key: key, VersionID: aws.ToString(puts[key].VersionId)}
	}
	ctx := context.Background()
	if err := store.Reject(ctx, ref("done.jpg"), "not_an_image", "", ledger.ObjectInfo{}); err != nil {
		t.Fatal(err)
	}
	// An attempt claimed lost.jpg and vanished; its lease expired.
	if _, _, err := store.Claim(ctx, ref("lost.jpg"), time.Minute); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	expired, _, err := store.Claim(ctx, ref("lost.jpg"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.MarkOutcomeUnknown(ctx, expired.Record); err != nil {
		t.Fatal(err)
	}

	queues := &fakeQueues{}
	useAWS(t, &awsClients{objects: s3c, queues: queues, tables: ddb, stacks: fakeStacks{name: "Geo"}})
	if r := runCLI(t, nil, nil, "backfill", "--bucket", bucket, "--queue-url", "q", "--table", table); r.code != 0 || len(queues.sent) != 0 {
		t.Fatalf("without the flag: exit %d, sent %d: %s", r.code, len(queues.sent), r.stderr)
	}
	r := runCLI(t, nil, nil, "backfill", "--bucket", bucket, "--queue-url", "q", "--table", table, "--requeue-unknown")
	if r.code != 0 || len(queues.sent) != 1 || decoded(t, queues.sent[0]).S3.Object.URLDecodedKey != "lost.jpg" {
		t.Fatalf("with the flag: exit %d, sent %v: %s", r.code, queues.sent, r.stderr)
	}
	if !strings.Contains(r.stderr, "sent 1 (1 reopened), 1 already processed") {
		t.Errorf("summary missing:\n%s", r.stderr)
	}
	if rec, err := store.Lookup(ctx, ref("lost.jpg")); err != nil || !rec.Retryable {
		t.Errorf("record = %+v, %v; want reopened (retryable)", rec, err)
	}
}

func TestBackfillReportsRefusedMessages(t *testing.T) {
	s3c, bucket := awspartstest.S3(t)
	putObjects(t, s3c, bucket, map[string]string{"a.jpg": "a", "poison.jpg": "b"})
	queues := &fakeQueues{refuse: "poison"}
	useAWS(t, &awsClients{objects: s3c, queues: queues, stacks: fakeStacks{name: "Geo"}})
	r := runCLI(t, nil, nil, "backfill", "--bucket", bucket, "--queue-url", "q")
	if r.code == 0 || !strings.Contains(r.stderr, "1 message(s) refused") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
