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

// TestBackfillDryRunCountsLatestVersions: the dry run lists here what the
// job would send, every latest version under the prefix, and sends
// nothing and creates no job.
func TestBackfillDryRunCountsLatestVersions(t *testing.T) {
	s := newJobStack(t, nil)
	objects := map[string]string{"photos/sea view+1 100% été.jpg": "unicode", "other/skip.jpg": "outside the prefix"}
	for i := range 23 {
		objects[fmt.Sprintf("photos/img-%02d.jpg", i)] = fmt.Sprintf("image %d", i)
	}
	putObjects(t, s.s3, s.bucket, objects)
	// Overwrite one object: only its latest version counts.
	putObjects(t, s.s3, s.bucket, map[string]string{"photos/img-00.jpg": "newer"})

	r := runCLI(t, nil, nil, "backfill", "--prefix", "photos/", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stderr, "backfill: 24 listed, would send 24, 0 already processed") {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	if len(s.queues.sent) != 0 || len(s.functions.invocations()) != 0 {
		t.Errorf("a dry run sent %d message(s) and started the feeder %d time(s)", len(s.queues.sent), len(s.functions.invocations()))
	}
	if list, _ := s.jobs.List(context.Background()); len(list) != 0 {
		t.Errorf("a dry run created %d job(s)", len(list))
	}
}

func TestBackfillDryRunSkipsFinishedObjects(t *testing.T) {
	s := newJobStack(t, nil)
	puts := putObjects(t, s.s3, s.bucket, map[string]string{"done.jpg": "a", "todo.jpg": "b", "retry.jpg": "c"})
	ref := func(key string) ledger.ObjectRef {
		return ledger.ObjectRef{Bucket: s.bucket, Key: key, VersionID: aws.ToString(puts[key].VersionId)}
	}
	ctx := context.Background()
	if err := s.records.Reject(ctx, ref("done.jpg"), "not_an_image", "", ledger.ObjectInfo{}); err != nil {
		t.Fatal(err)
	}
	claim, _, err := s.records.Claim(ctx, ref("retry.jpg"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.records.Fail(ctx, claim, "rate_limited", "429", true); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, nil, nil, "backfill", "--bucket", s.bucket, "--table", s.table, "--dry-run")
	if r.code != 0 || !strings.Contains(r.stderr, "3 listed, would send 2, 1 already processed") {
		t.Errorf("exit %d:\n%s", r.code, r.stderr)
	}
}

// TestBackfillRequeuesUnknownOutcomesOnlyWhenAsked: --requeue-unknown
// counts the outcome_unknown records among those to send in a dry run
// (reopening none), and makes the job a requeueing one.
func TestBackfillRequeuesUnknownOutcomesOnlyWhenAsked(t *testing.T) {
	s := newJobStack(t, nil)
	puts := putObjects(t, s.s3, s.bucket, map[string]string{"lost.jpg": "a", "done.jpg": "b"})
	now := time.Now()
	store := ledger.New(s.ddb, s.table, func(o *ledger.Options) { o.Clock = func() time.Time { return now } })
	ref := func(key string) ledger.ObjectRef {
		return ledger.ObjectRef{Bucket: s.bucket, Key: key, VersionID: aws.ToString(puts[key].VersionId)}
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

	if r := runCLI(t, nil, nil, "backfill", "--dry-run"); r.code != 0 || !strings.Contains(r.stderr, "would send 0, 2 already processed") {
		t.Fatalf("without the flag: exit %d: %s", r.code, r.stderr)
	}
	r := runCLI(t, nil, nil, "backfill", "--dry-run", "--requeue-unknown")
	if r.code != 0 || !strings.Contains(r.stderr, "would send 1 (1 to reopen), 1 already processed") {
		t.Errorf("with the flag: exit %d:\n%s", r.code, r.stderr)
	}
	if rec, err := store.Lookup(ctx, ref("lost.jpg")); err != nil || rec.Retryable {
		t.Errorf("record = %+v, %v; a dry run reopens nothing", rec, err)
	}

	if r := runCLI(t, nil, nil, "backfill", "--requeue-unknown"); r.code != 0 {
		t.Fatalf("job: exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if job := s.onlyJob(t); !job.Requeue || !strings.Contains(what(job), "(requeue-unknown)") {
		t.Errorf("job %+v: want a requeueing backfill", job.Spec)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
