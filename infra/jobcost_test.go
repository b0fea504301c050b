package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/bench"
	"github.com/geolocate-aws/geolocate/pkg/shared/jobmsg"
)

// The job engine's own AWS usage per object, measured from the code's
// requests on DynamoDB Local (write units as DynamoDB reports them): the
// figures docs/jobs.md's "## Cost" prices for a 1,000,000-object job.
// A backfill of jobCostObjects versions at the stack's default rate (30 a
// minute) runs to done on a simulated clock, one feeder run a minute; each
// message the feeder sends ends, as the predictor ends it, with the job's
// counter update (jobs.Store.AddEnd). Nothing else of the pipeline runs:
// its cost per photo is the cost section's of cmd/benchreport/REPORT.md.

// jobCostObjects: three listing pages of 1,000 and a partial fourth, so
// chunk and page boundaries count as in a large job.
const jobCostObjects = 3500

// versionLister serves ListObjectVersions over n versions of realistic
// names (archive keys, 32-character version ids, quoted MD5 ETags),
// 1,000 a page like S3.
type versionLister struct {
	n        int
	mu       sync.Mutex
	requests int
}

func (l *versionLister) key(i int) string { return fmt.Sprintf("archive/2019/06/IMG_%06d.jpg", i) }

func (l *versionLister) ListObjectVersions(_ context.Context, in *s3.ListObjectVersionsInput, _ ...func(*s3.Options)) (*s3.ListObjectVersionsOutput, error) {
	l.mu.Lock()
	l.requests++
	l.mu.Unlock()
	start := 0
	if in.KeyMarker != nil {
		for start < l.n && l.key(start) <= *in.KeyMarker {
			start++
		}
	}
	page := 1000
	if in.MaxKeys != nil && *in.MaxKeys > 0 {
		page = int(*in.MaxKeys)
	}
	out := &s3.ListObjectVersionsOutput{}
	end := min(start+page, l.n)
	for i := start; i < end; i++ {
		out.Versions = append(out.Versions, s3types.ObjectVersion{
			Key: aws.String(l.key(i)), VersionId: aws.String(fmt.Sprintf("3sL4kqtJlcpXroDTDmJ%013d", i)),
			ETag: aws.String(fmt.Sprintf(`"%032x"`, i)), Size: aws.Int64(3_000_000), IsLatest: aws.Bool(true),
			LastModified: aws.Time(time.Date(2019, 6, 1, 0, 0, 0, 0, time.UTC)),
		})
	}
	if end < l.n {
		out.IsTruncated = aws.Bool(true)
		out.NextKeyMarker = aws.String(l.key(end - 1))
		out.NextVersionIdMarker = out.Versions[len(out.Versions)-1].VersionId
	}
	return out, nil
}

// countingSender accepts every message and keeps them for the predictor's
// stand-in to end.
type countingSender struct {
	requests int
	pending  []jobmsg.Object
}

func (s *countingSender) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	s.requests++
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		o, ok, err := jobmsg.Parse([]byte(aws.ToString(e.MessageBody)))
		if err != nil || !ok {
			return nil, fmt.Errorf("not a job message: %v", err)
		}
		s.pending = append(s.pending, o)
		out.Successful = append(out.Successful, sqstypes.SendMessageBatchResultEntry{Id: e.Id, MessageId: aws.String(strconv.Itoa(len(s.pending)))})
	}
	return out, nil
}

// jobUsage is a measured job's usage per object.
type jobUsage struct {
	feederRuns, listRequests, sendRequests float64
	// feeder is the feeder's DynamoDB usage (job item, chunks, the day's
	// spend, the active list), ends the predictor's counter updates.
	feeder, ends bench.Usage
	objects      int
}

func measureJob(t *testing.T) jobUsage {
	t.Helper()
	ddb, table := awspartstest.DynamoDB(t, awsparts.WithoutStream)
	var feederCount, endCount bench.RequestCounter
	counted := func(c *bench.RequestCounter) *dynamodb.Client {
		return dynamodb.New(ddb.Options(), func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, c.Register) })
	}
	now := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	ctx := context.Background()
	// The CLI's creation and the loop's reads are not the engine's: uncounted.
	operator := jobs.New(ddb, table, func(o *jobs.Options) { o.Clock = clock })
	job, err := operator.Create(ctx, jobs.Spec{Kind: jobs.KindBackfill, Bucket: "archive-bucket"})
	if err != nil {
		t.Fatal(err)
	}
	lister, sender := &versionLister{n: jobCostObjects}, &countingSender{}
	store := jobs.New(counted(&feederCount), table, func(o *jobs.Options) { o.Clock = clock })
	ends := jobs.New(counted(&endCount), table, func(o *jobs.Options) { o.Clock = clock })
	feeder := jobs.NewFeeder(store, lister, sender, "https://sqs.local/queue", func(o *jobs.FeederOptions) {
		o.Now = clock
		o.RatePerMinute = 30
		o.WindowMinutes = 15
	})
	u := jobUsage{objects: jobCostObjects}
	for minute := 0; ; minute++ {
		if minute > 3*jobCostObjects { // far beyond objects / rate
			t.Fatalf("the job is not done after %d minutes", minute)
		}
		if _, err := feeder.Run(ctx); err != nil {
			t.Fatal(err)
		}
		u.feederRuns++
		got, err := operator.Get(ctx, job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State == jobs.StateDone {
			if got.Done != jobCostObjects {
				t.Fatalf("done with %d objects, want %d", got.Done, jobCostObjects)
			}
			break
		}
		// What was sent ends within the minute, as the predictor ends it.
		for _, o := range sender.pending {
			if err := ends.AddEnd(ctx, o.Job, jobs.OutcomeDone, 1, now); err != nil {
				t.Fatal(err)
			}
		}
		sender.pending = nil
		now = now.Add(time.Minute)
	}
	u.listRequests, u.sendRequests = float64(lister.requests), float64(sender.requests)
	u.feeder, u.ends = feederCount.Snapshot(), endCount.Snapshot()
	return u
}

// TestJobEngineUsagePerObject measures what docs/jobs.md's cost rests on
// and holds the figures it states: per object at most jobCostWrites write
// units and jobCostReads read units of the feeder, jobCostEndWrites of the
// predictor's counter update, SendMessageBatch requests of 10 messages
// (less a partial batch a run) and a listing request per 1,000 objects.
func TestJobEngineUsagePerObject(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a job on DynamoDB Local for simulated hours")
	}
	u := measureJob(t)
	n := float64(u.objects)
	feederWrites := (u.feeder.WriteUnits + float64(u.feeder.FailedWrites)) / n
	endWrites := (u.ends.WriteUnits + float64(u.ends.FailedWrites)) / n
	t.Logf("%d objects, %.0f feeder runs: per object %.4f feeder write units, %.4f feeder read units, %.4f end write units; "+
		"%.5f ListObjectVersions, %.4f SendMessageBatch requests; feeder requests %v, end requests %v",
		u.objects, u.feederRuns, feederWrites, u.feeder.ReadUnits/n, endWrites, u.listRequests/n, u.sendRequests/n, u.feeder.Requests, u.ends.Requests)
	for fam, iu := range u.feeder.Items {
		t.Logf("feeder item family %q: %d writes, %.1f table units, %.1f index units, %d reads", fam, iu.Writes, iu.TableUnits, iu.IndexUnits, iu.Reads)
	}
	if feederWrites > jobCostWrites {
		t.Errorf("the feeder writes %.4f units per object, docs/jobs.md says at most %.2f", feederWrites, jobCostWrites)
	}
	if reads := u.feeder.ReadUnits / n; reads > jobCostReads {
		t.Errorf("the feeder reads %.4f units per object, docs/jobs.md says at most %.2f", reads, jobCostReads)
	}
	if endWrites > jobCostEndWrites {
		t.Errorf("the predictor's counter update writes %.4f units per object, docs/jobs.md says at most %.2f", endWrites, jobCostEndWrites)
	}
	// Ten messages a request, less a partial batch per run.
	if per := u.sendRequests / n; per > 0.1+u.feederRuns/n {
		t.Errorf("%.4f SendMessageBatch requests per object: batches are not filled", per)
	}
	if pages := (u.objects + 999) / 1000; u.listRequests > float64(pages) {
		t.Errorf("%.0f ListObjectVersions requests for %d objects, want one per 1,000 (%d)", u.listRequests, u.objects, pages)
	}
}

// The per-object figures docs/jobs.md states (upper bounds the test holds).
const (
	jobCostWrites    = 0.5
	jobCostReads     = 2.5
	jobCostEndWrites = 1.0
)
