// Package jobcost measures the job engine's own AWS usage per object: a
// backfill of Config.Objects versions runs to done on a simulated clock,
// the real feeder (jobs.Feeder) once a simulated minute against a real
// DynamoDB (DynamoDB Local in tests and `make bench`), every message it
// sends ending within the minute as the predictor ends it (the job's
// counter update, jobs.Store.AddEnd). The S3 listing and the queue are
// stand-ins that count their requests. Nothing else of the pipeline runs:
// its cost per photo is cmd/benchreport's cost section.
//
// infra/jobcost_test.go holds the figures docs/jobs.md prices;
// cmd/benchreport prices the same measurement in REPORT.md. It is test
// tooling and never ships in a Lambda.
package jobcost

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/local/bench"
	"github.com/geolocate-aws/geolocate/pkg/shared/jobmsg"
)

// Config is one measured job.
type Config struct {
	// Objects is the versions listed; DefaultObjects (three pages of 1,000
	// and a partial fourth, so chunk and page boundaries count as in a
	// large job) if 0.
	Objects int
	// RatePerMinute is the stack's rate; 30 (the default) if 0.
	RatePerMinute float64
	// WindowMinutes is jobWindowMinutes; jobs.DefaultWindowMinutes if 0.
	WindowMinutes int
	// Start is the simulated clock's start; a fixed date if zero.
	Start time.Time
}

// DefaultObjects is Config.Objects' default.
const DefaultObjects = 3500

// Usage is a measured job's usage, in all (divide by Objects for a figure
// per object).
type Usage struct {
	Objects int
	// FeederRuns are the feeder's runs to done, one a simulated minute;
	// FeederBilledSeconds their wall time each rounded up to the
	// millisecond, as Lambda bills (against DynamoDB Local's latency, not
	// DynamoDB's).
	FeederRuns          int
	FeederBilledSeconds float64
	// ListRequests are ListObjectVersions requests, SendRequests
	// SendMessageBatch requests.
	ListRequests, SendRequests int
	// Feeder is the feeder's DynamoDB usage (job item, chunks, the day's
	// spend, the active list, the consistent reads of records); Ends the
	// predictor's counter updates as each object ends.
	Feeder, Ends bench.Usage
}

// Measure runs one backfill job over cfg.Objects versions to done on the
// table (the results table's schema) through client. The job's creation
// and the loop's own reads are the operator's, not the engine's: they are
// not counted.
func Measure(ctx context.Context, client *dynamodb.Client, table string, cfg Config) (Usage, error) {
	if cfg.Objects <= 0 {
		cfg.Objects = DefaultObjects
	}
	if cfg.RatePerMinute <= 0 {
		cfg.RatePerMinute = 30
	}
	if cfg.WindowMinutes <= 0 {
		cfg.WindowMinutes = jobs.DefaultWindowMinutes
	}
	now := cfg.Start
	if now.IsZero() {
		now = time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	}
	clock := func() time.Time { return now }
	var feederCount, endCount bench.RequestCounter
	counted := func(c *bench.RequestCounter) *dynamodb.Client {
		return dynamodb.New(client.Options(), func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, c.Register) })
	}
	operator := jobs.New(client, table, func(o *jobs.Options) { o.Clock = clock })
	job, err := operator.Create(ctx, jobs.Spec{Kind: jobs.KindBackfill, Bucket: "archive-bucket"})
	if err != nil {
		return Usage{}, fmt.Errorf("create the job: %w", err)
	}
	lister, sender := &versionLister{n: cfg.Objects}, &countingSender{}
	store := jobs.New(counted(&feederCount), table, func(o *jobs.Options) { o.Clock = clock })
	ends := jobs.New(counted(&endCount), table, func(o *jobs.Options) { o.Clock = clock })
	feeder := jobs.NewFeeder(store, lister, sender, "https://sqs.local/queue", func(o *jobs.FeederOptions) {
		o.Now = clock
		o.RatePerMinute = cfg.RatePerMinute
		o.WindowMinutes = cfg.WindowMinutes
	})
	u := Usage{Objects: cfg.Objects}
	// Far beyond objects at the job's rate: a job that never ends is an
	// error, not a hang.
	limit := 3*int(float64(cfg.Objects)/jobs.Rate(cfg.RatePerMinute, 0)) + 10
	for {
		if u.FeederRuns > limit {
			return u, fmt.Errorf("job %s is not done after %d feeder runs", job.ID, u.FeederRuns)
		}
		began := time.Now()
		if _, err := feeder.Run(ctx); err != nil {
			return u, fmt.Errorf("feeder run %d: %w", u.FeederRuns+1, err)
		}
		u.FeederBilledSeconds += bench.BilledSeconds(time.Since(began).Seconds())
		u.FeederRuns++
		got, err := operator.Get(ctx, job.ID)
		if err != nil {
			return u, err
		}
		if got.State == jobs.StateDone {
			if got.Done != int64(cfg.Objects) {
				return u, fmt.Errorf("job %s done with %d objects, want %d", job.ID, got.Done, cfg.Objects)
			}
			break
		}
		// What was sent ends within the minute, as the predictor ends it.
		for _, o := range sender.take() {
			if err := ends.AddEnd(ctx, o.Job, jobs.OutcomeDone, 1, now); err != nil {
				return u, fmt.Errorf("end %s: %w", o.Pos, err)
			}
		}
		now = now.Add(time.Minute)
	}
	u.ListRequests, u.SendRequests = lister.count(), sender.count()
	u.Feeder, u.Ends = feederCount.Snapshot(), endCount.Snapshot()
	return u, nil
}

// versionLister serves ListObjectVersions over n versions of realistic
// names (archive keys, 32-character version ids, quoted MD5 ETags), 1,000
// a page like S3, with S3's next-markers.
type versionLister struct {
	n        int
	mu       sync.Mutex
	requests int
}

func (l *versionLister) key(i int) string { return fmt.Sprintf("archive/2019/06/IMG_%06d.jpg", i) }

func (l *versionLister) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.requests
}

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
	mu       sync.Mutex
	requests int
	pending  []jobmsg.Object
}

func (s *countingSender) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

func (s *countingSender) take() []jobmsg.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.pending
	s.pending = nil
	return out
}

func (s *countingSender) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		o, ok, err := jobmsg.Parse([]byte(aws.ToString(e.MessageBody)))
		if err != nil || !ok {
			return nil, errors.Join(errors.New("not a job message"), err)
		}
		s.pending = append(s.pending, o)
		out.Successful = append(out.Successful, sqstypes.SendMessageBatchResultEntry{Id: e.Id, MessageId: aws.String(strconv.Itoa(len(s.pending)))})
	}
	return out, nil
}
