package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// TestBackfillJobAgainstTheServedLocalStack is the real-time
// measurement through the CLI, with local --serve's export line: a backfill
// of 300 photos of another bucket of the local S3 at ratePerMinute=120 and
// jobWindowMinutes=1. The product requires (issue 47) that the command
// returns in under 10 s, that the queue never holds more than about a
// minute of calls, that every photo is recorded and that the job shows
// done; then a reprocess of 10 of them runs as a job too and pays exactly
// its 10 credits.
func TestBackfillJobAgainstTheServedLocalStack(t *testing.T) {
	if testing.Short() {
		t.Skip("300 photos at 120 a minute through the served stack: about four minutes")
	}
	const n = 300
	stack := serveLocalStack(t, "cli-jobs", map[string]string{envvars.RatePerMinute: "120", envvars.JobWindowMinutes: "1"})
	env, progress := stack.env, stack.progress
	ctx := context.Background()
	s3c := stack.s3Client()
	sqsc := sqs.NewFromConfig(stack.awsConfig(), func(o *sqs.Options) { o.BaseEndpoint = aws.String(env["AWS_ENDPOINT_URL_SQS"]) })

	// B is any bucket of the local S3 but the stack's: its objects are
	// never announced, only the job brings them to the queue. Distinct
	// pixels, so that no answer is reused and every photo is a call.
	const bucket = "archive-b"
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
	for i := range n {
		body := exiftest.JPEG(nil, exiftest.Gradient(16+i%40, 12+i/40), 0)
		if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(fmt.Sprintf("old/p%04d.jpg", i)),
			Body: bytes.NewReader(body)}); err != nil {
			t.Fatal(err)
		}
	}

	// The queue's depth while the jobs run: what is waiting, in flight or
	// delayed, as GetQueueAttributes reports it.
	pollCtx, stopPolling := context.WithCancel(ctx)
	var mu sync.Mutex
	peak, readings := 0, 0
	var polling sync.WaitGroup
	polling.Add(1)
	go func() {
		defer polling.Done()
		for pollCtx.Err() == nil {
			out, err := sqsc.GetQueueAttributes(pollCtx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(env["QUEUE_URL"]),
				AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
					sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible, sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed}})
			if err == nil {
				depth := 0
				for _, v := range out.Attributes {
					k, _ := strconv.Atoi(v)
					depth += k
				}
				mu.Lock()
				peak, readings = max(peak, depth), readings+1
				mu.Unlock()
			}
			select {
			case <-pollCtx.Done():
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	defer func() { stopPolling(); polling.Wait() }()

	begin := time.Now()
	r := runCLI(t, env, nil, "backfill", "--bucket", bucket)
	returned := time.Since(begin)
	if r.code != exitOK {
		t.Fatalf("backfill: exit %d\nstdout:\n%s\nstderr:\n%s\nserve:\n%s", r.code, r.stdout, r.stderr, progress.String())
	}
	if returned >= 10*time.Second {
		t.Errorf("backfill returned after %v, want under 10 s (issue 47)", returned)
	}
	id := createdJob(t, r.stdout)
	backfill := waitJobDone(t, env, id, 8*time.Minute, progress)
	total := time.Since(begin)
	if backfill.Kind != jobs.KindBackfill || backfill.Listed != n || backfill.Done != n {
		t.Errorf("backfill job: %+v, want %d listed and done", backfill, n)
	}
	if r := runCLI(t, env, nil, "jobs"); r.code != exitOK || !regexp.MustCompile(`(?m)^`+regexp.QuoteMeta(id)+`\s+backfill\s+done\s+300\s+0\s`).MatchString(r.stdout) {
		t.Errorf("jobs: exit %d, want job %s done with 300 ended\nstdout:\n%s\nstderr:\n%s", r.code, id, r.stdout, r.stderr)
	}
	mu.Lock()
	backfillPeak, backfillReadings := peak, readings
	mu.Unlock()
	// About a minute of calls: the window (1 minute at the job's rate)
	// plus one SendMessageBatch of the next feeder run.
	bound := int(backfill.FeedRate) + 10
	if backfillPeak > bound || backfillPeak == 0 {
		t.Errorf("the queue held up to %d messages (%d readings), want at most about a minute of calls (%d) and some", backfillPeak, backfillReadings, bound)
	}

	rows := resultsOf(t, env)
	succeeded := 0
	for _, row := range rows {
		if row.Bucket == bucket && row.Run == "" && row.Status == "succeeded" {
			succeeded++
		}
		if row.DeadLetter {
			t.Errorf("dead letter: %+v", row)
		}
	}
	if succeeded != n {
		t.Errorf("%d of the %d objects of s3://%s recorded succeeded", succeeded, n, bucket)
	}
	t.Logf("backfill of %d photos at ratePerMinute=120, jobWindowMinutes=1: returned in %v, listing done=%v; fed at %.1f calls a minute; queue peak %d (bound %d, %d readings); done after %v",
		n, returned.Round(time.Millisecond), backfill.ListingDone, backfill.FeedRate, backfillPeak, bound, backfillReadings, total.Round(time.Second))

	// A reprocess run over 10 of them: a job too, paid once per photo.
	begin = time.Now()
	r = runCLI(t, env, nil, "reprocess", "--default-model", "--sample", "10", "--max-credits", "10", "--run", "again", "--credits-per-call", "1")
	if r.code != exitOK {
		t.Fatalf("reprocess: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	rerun := waitJobDone(t, env, createdJob(t, r.stdout), 4*time.Minute, progress)
	if rerun.Kind != jobs.KindReprocess || rerun.Listed != 10 || rerun.Ended() != 10 || rerun.CreditsSpent != 10 {
		t.Errorf("reprocess job: %+v, want 10 listed and ended, 10 credits", rerun)
	}
	final := 0
	for _, row := range resultsOf(t, env) {
		if row.Run == "again" && (row.Status == "succeeded" || row.Status == "rejected" || row.Status == "failed") {
			final++
		}
	}
	if final != 10 {
		t.Errorf("%d final records of run again, want 10", final)
	}
	if r := runCLI(t, env, nil, "runs"); r.code != exitOK || !regexp.MustCompile(`(?m)^again\s+\(default model\)\s+10\s+10\s+10\s+0\s`).MatchString(r.stdout) {
		t.Errorf("runs: exit %d, want run again with cap 10, 10 spent, 10 done\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("reprocess of 10 (run again): done after %v, %d credits", time.Since(begin).Round(time.Second), rerun.CreditsSpent)
}

// createdJob is the job id of backfill's or reprocess's "job ID created:" line.
func createdJob(t *testing.T, stdout string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^job (\S+) created: `).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no job created:\n%s", stdout)
	}
	return m[1]
}

// waitJobDone reads jobs show ID --json until the job is done.
func waitJobDone(t *testing.T, env map[string]string, id string, timeout time.Duration, progress fmt.Stringer) jobs.Job {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		r := runCLI(t, env, nil, "jobs", "show", id, "--json")
		var job jobs.Job
		if r.code == exitOK {
			if err := json.Unmarshal([]byte(r.stdout), &job); err != nil {
				t.Fatalf("jobs show --json: %v\n%s", err, r.stdout)
			}
			if job.State == jobs.StateDone {
				return job
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s not done after %v: exit %d\nstdout:\n%s\nstderr:\n%s\nserve (tail):\n%s", id, timeout, r.code, r.stdout, r.stderr, tail(progress.String(), 4000))
		}
		time.Sleep(2 * time.Second)
	}
}

// resultsOf is every record of the table, each run's too.
func resultsOf(t *testing.T, env map[string]string) []resultRow {
	t.Helper()
	r := runCLI(t, env, nil, "results", "--json", "--history", "--limit", "0", "--since", "1h")
	var rows []resultRow
	if r.code != exitOK {
		t.Fatalf("results: exit %d\n%s", r.code, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("results --json: %v", err)
	}
	return rows
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[strings.LastIndexByte(s[:len(s)-n], '\n')+1:]
}
