package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/bench"
	"github.com/geolocate-aws/geolocate/pkg/local/ddbstream"
	"github.com/geolocate-aws/geolocate/pkg/local/jobcost"
	"github.com/geolocate-aws/geolocate/pkg/local/pipes"
	"github.com/geolocate-aws/geolocate/pkg/shared/resultevents"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// jobCostResult is the jobcost stage (issue 47): what the job engine and
// the results pipe's enrichment add to the cost section's figures.
type jobCostResult struct {
	// Job is a backfill of -jobcost-objects versions at JobRate run
	// to done by the real feeder on DynamoDB Local (pkg/local/jobcost).
	Job     jobcost.Usage
	JobRate float64
	// EnrichRecords are the final records of the bench's table the
	// results pipe's filter passes; EnrichOne and EnrichTen the median
	// time of the enrichment (the JSON in, resultevents.Enrich, the JSON
	// out, as the function does) over one of them and over a full batch
	// of ten.
	EnrichRecords        int
	EnrichOne, EnrichTen time.Duration
	Elapsed              time.Duration
}

// jobCostTable holds the measured job's items, apart from the records.
const jobCostTable = "bench-jobs"

// jobCostRate is the job's stack rate: the default, the service's public
// backend's 30 a minute, where a job runs longest.
const jobCostRate = 30

// measureJobCost runs the job (on a table of its own) and times the
// enrichment over the records the earlier stages left in the bench's
// table: run it after throughput.
func measureJobCost(ctx context.Context, e *localEnv, objects int, progress func(string, ...any)) (*jobCostResult, error) {
	start := time.Now()
	if err := e.ddbsrv.CreateTable(ctx, jobCostTable, awsparts.WithoutStream); err != nil {
		return nil, fmt.Errorf("jobcost: create table: %w", err)
	}
	res := &jobCostResult{JobRate: jobCostRate}
	var err error
	if res.Job, err = jobcost.Measure(ctx, e.ddb, jobCostTable, jobcost.Config{Objects: objects, RatePerMinute: jobCostRate}); err != nil {
		return nil, fmt.Errorf("jobcost: %w", err)
	}
	progress("jobcost: %d objects to done in %d feeder runs", res.Job.Objects, res.Job.FeederRuns)
	records, err := pipeRecords(ctx, e.ddb, tableName)
	if err != nil {
		return nil, fmt.Errorf("jobcost: the enrichment's records: %w", err)
	}
	if len(records) == 0 {
		return nil, fmt.Errorf("jobcost: no final record in %s passes the results pipe's filter: run the throughput stage first", tableName)
	}
	res.EnrichRecords = len(records)
	if res.EnrichOne, err = enrichTime(records, 1); err != nil {
		return nil, err
	}
	if res.EnrichTen, err = enrichTime(records, 10); err != nil {
		return nil, err
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// pipeRecords are the bench table's items as the results pipe receives
// them from the stream (each as a MODIFY record with its new image),
// those the pipe's filter passes.
func pipeRecords(ctx context.Context, client *dynamodb.Client, table string) ([][]byte, error) {
	pipe, err := pipes.ResultsPipe(nil)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	p := dynamodb.NewScanPaginator(client, &dynamodb.ScanInput{TableName: aws.String(table)})
	for p.HasMorePages() && len(out) < 1000 {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for i, item := range page.Items {
			keys := map[string]types.AttributeValue{tableschema.PartitionKey: item[tableschema.PartitionKey], tableschema.SortKey: item[tableschema.SortKey]}
			rec, err := ddbstream.ItemRecord(strconv.Itoa(len(out)+i), keys, item, awsparts.Region)
			if err != nil {
				return nil, err
			}
			if _, ok, err := pipe.Apply(rec, time.Now()); err != nil {
				return nil, err
			} else if ok {
				out = append(out, rec)
			}
		}
	}
	return out, nil
}

// enrichTime is the median time of the enrichment over batches of size
// records, taken in turn from records, over at least 200 batches.
func enrichTime(records [][]byte, size int) (time.Duration, error) {
	var times []time.Duration
	for i := 0; len(times) < max(200, len(records)/size); i++ {
		batch := []byte{'['}
		for j := range size {
			if j > 0 {
				batch = append(batch, ',')
			}
			batch = append(batch, records[(i*size+j)%len(records)]...)
		}
		batch = append(batch, ']')
		began := time.Now()
		if _, err := pipes.EnrichResults(batch); err != nil {
			return 0, fmt.Errorf("jobcost: enrich: %w", err)
		}
		times = append(times, time.Since(began))
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}

// enrichUsage is the enrichment's share of an image at achieved calls a
// minute: the pipe polls the stream streamPollsPerSecond times a second
// and invokes the enrichment once per poll that found records, with up to
// resultevents.PipeBatchSize of them, so a batch holds the records written between
// two polls (at least one). Each invocation bills its time rounded up to
// the millisecond, and Lambda writes its START/END/REPORT lines.
func (j *jobCostResult) enrichUsage(u bench.PerImage, achievedPerMinute float64) bench.PerImage {
	if j == nil || u.ResultEvents == 0 {
		return u
	}
	batch := math.Min(math.Max(achievedPerMinute/60/streamPollsPerSecond, 1), resultevents.PipeBatchSize)
	// The time of a batch between one record and ten, by the two measured.
	per := j.EnrichOne.Seconds() + (j.EnrichTen-j.EnrichOne).Seconds()*(batch-1)/9
	u.EnrichInvocations = u.ResultEvents / batch
	u.EnrichBilledSeconds = u.EnrichInvocations * bench.BilledSeconds(per)
	u.EnrichMemoryMB = resultevents.EnrichmentMemoryMB
	u.EnrichLogBytes = u.EnrichInvocations * platformLogBytes
	return u
}

// jobLines is the job engine's usage per object: the feeder's runs and
// requests and the predictor's counter update and job state read, priced
// with the cost section's prices.
func (j *jobCostResult) jobLines() ([]bench.CostLine, float64) {
	u, n, pr := j.Job, float64(j.Job.Objects), bench.ListPrices
	per := 1e6 / n // per 1,000,000 objects
	lines := []bench.CostLine{
		{Item: "Listing: ListObjectVersions (1,000 versions a page)", Quantity: float64(u.ListRequests) * per, Unit: "request", UnitPrice: s3ListPrice},
		{Item: "Feeder DynamoDB writes (job item, manifest chunks)", Quantity: (u.Feeder.WriteUnits + float64(u.Feeder.FailedWrites)) * per, Unit: "WRU", UnitPrice: pr.DynamoDBWriteUnit},
		{Item: "Feeder DynamoDB reads (records, chunks, job items)", Quantity: u.Feeder.ReadUnits * per, Unit: "RRU", UnitPrice: pr.DynamoDBReadUnit},
		{Item: "Counter update as each object ends (predictor)", Quantity: (u.Ends.WriteUnits + float64(u.Ends.FailedWrites)) * per, Unit: "WRU", UnitPrice: pr.DynamoDBWriteUnit},
		{Item: "The predictor's read of the job's state per message (a GetItem under 4 KB, from the code)", Quantity: 1e6, Unit: "RRU", UnitPrice: pr.DynamoDBReadUnit},
		{Item: "SendMessageBatch (10 messages a request)", Quantity: float64(u.SendRequests) * per, Unit: "request", UnitPrice: pr.SQSRequest},
		{Item: "Feeder Lambda requests (one run a minute)", Quantity: float64(u.FeederRuns) * per, Unit: "invocation", UnitPrice: pr.LambdaRequest},
		{Item: fmt.Sprintf("Feeder Lambda compute (%d MB, arm64; its runs' time against DynamoDB Local)", jobs.FeederMemoryMB),
			Quantity: u.FeederBilledSeconds * per * jobs.FeederMemoryMB / 1024, Unit: "GB-second", UnitPrice: pr.LambdaGBSecondARM},
		{Item: "Feeder logs (Lambda's START/END/REPORT lines and about 1 KB of its own a run)", Quantity: float64(u.FeederRuns) * per * (platformLogBytes + 1024) / (1 << 30), Unit: "GB", UnitPrice: pr.LogsIngestionGB},
	}
	var total float64
	for i := range lines {
		lines[i].USD = lines[i].Quantity * lines[i].UnitPrice
		total += lines[i].USD
	}
	return lines, total
}

// s3ListPrice is S3 Standard's price of a LIST request
// (https://aws.amazon.com/s3/pricing/: $0.005 per 1,000).
const s3ListPrice = 0.005 / 1000

// jobCostRows is the headline's job row: what a 1,000,000-object backfill
// costs in AWS at the default rate, the engine and the pipeline.
func (r *results) jobCostRows() []row {
	j, t := r.JobCost, r.RealRate
	if j == nil || t == nil {
		return nil
	}
	_, engine := j.jobLines()
	pipeline := r.jobPipelinePer1000() * 1000
	return []row{{
		figure:   fmt.Sprintf("(47) AWS cost of a 1,000,000-object backfill job at %.0f/min (besides its credits)", j.JobRate),
		measured: fmt.Sprintf("$%.2f: job engine $%.2f + pipeline $%.2f (with the enrichment)", engine+pipeline, engine, pipeline),
		target:   "none set", verdict: "info", why: "see the jobs' cost section",
	}}
}

// jobPipelinePer1000 is the pipeline's AWS cost per 1,000 photos a job
// feeds at the real rate: the cost section's, less S3's notification
// SendMessage, which the job's SendMessageBatch replaces.
func (r *results) jobPipelinePer1000() float64 {
	u := r.perImageUsage(r.RealRate)
	u.SQSRequests--
	_, total := bench.ListPrices.Per1000(u)
	return total
}

func (r *results) jobCostSection(p func(string, ...any)) {
	j := r.JobCost
	if j == nil {
		return
	}
	u, n := j.Job, float64(j.Job.Objects)
	p("\n## Cost of a backfill job (issue 47)\n\n")
	p("`pkg/local/jobcost` runs a backfill of %d object versions (realistic names, 1,000 a listing page) at the stack's default rate (%.0f a minute; the job feeds at `jobs.Rate`, %.1f a minute) to done: the real feeder (`jobs.Feeder`) once a simulated minute on DynamoDB Local, every message it sends ending within the minute with the predictor's counter update (`jobs.Store.AddEnd`). %d feeder runs, %.4f write and %.4f read units of the feeder and %.4f write units of the counter updates per object, %.5f listing and %.4f SendMessageBatch requests per object; the feeder's runs took %.0f ms each on average against DynamoDB Local (its latency, not DynamoDB's). Priced for 1,000,000 objects with the cost section's prices (S3 LIST $0.005 per 1,000):\n\n",
		u.Objects, j.JobRate, jobs.Rate(j.JobRate), u.FeederRuns, (u.Feeder.WriteUnits+float64(u.Feeder.FailedWrites))/n, u.Feeder.ReadUnits/n,
		(u.Ends.WriteUnits+float64(u.Ends.FailedWrites))/n, float64(u.ListRequests)/n, float64(u.SendRequests)/n, 1000*u.FeederBilledSeconds/float64(max(u.FeederRuns, 1)))
	lines, engine := j.jobLines()
	p("| Item | Per 1,000,000 objects | USD |\n|---|---|---|\n")
	for _, l := range lines {
		p("| %s | %s %s | %.3f |\n", l.Item, quantity(l.Quantity), l.Unit, l.USD)
	}
	p("| **Job engine** | | **%.2f** |\n\n", engine)
	p("The results pipe's enrichment (`functions/resultevents`, %d MB), now a line of the cost section's table: over %d final records of this run's table as the pipe receives them, the function's work (the records' JSON in, `resultevents.Enrich`, the JSON out) takes %v at the median for one record and %v for a batch of ten; Lambda bills each invocation to the next millisecond. The pipe invokes it once per stream poll that found records (%d polls a second assumed, as for Lambda's own DynamoDB triggers): at 30 a minute one record a batch, at 600 a minute about %.1f.\n\n",
		resultevents.EnrichmentMemoryMB, j.EnrichRecords, j.EnrichOne.Round(time.Microsecond), j.EnrichTen.Round(time.Microsecond), streamPollsPerSecond, 600.0/60/streamPollsPerSecond)
	if r.RealRate != nil {
		pipeline := r.jobPipelinePer1000() * 1000
		p("With the pipeline per photo at %.0f a minute (the cost section's $%.4f per 1,000 with the enrichment, less S3's notification SendMessage that the job's SendMessageBatch replaces): **$%.2f of AWS for 1,000,000 photos** (job engine $%.2f, pipeline $%.2f), besides 1,000,000 credits. docs/jobs.md prices the same job from these figures.\n",
			r.RealRate.Config.RatePerMinute, pipeline/1000, engine+pipeline, engine, pipeline)
	}
}

// quantity is a cost line's quantity as a count (48,860) from 100 up, and
// with four significant digits below (0.0663).
func quantity(q float64) string {
	if q >= 100 {
		return bench.Thousands(int(math.Round(q)))
	}
	return fmt.Sprintf("%.4g", q)
}
