package main

import (
	"math"

	"github.com/geolocate-aws/geolocate/pkg/local/bench"
)

// platformLogBytes estimates the lines Lambda itself writes per invocation
// (START, END, REPORT), which CloudWatch Logs ingests with the function's.
const platformLogBytes = 350

// secretCacheTTLMinutes is secretkey's default cache lifetime.
const secretCacheTTLMinutes = 5

// streamPollsPerSecond is how often the results pipe reads the table's
// stream (one shard at this volume): AWS documents four polls a second per
// shard for Lambda's DynamoDB triggers and no rate for Pipes, so Lambda's
// is assumed. The pipe polls whether or not anything is written: the
// polls made while 1,000 images are processed are charged to them here,
// and docs/events.md gives the cost of an idle month.
const streamPollsPerSecond = 4

// perImageUsage derives one image's consumption from the throughput run:
// real batching, rate limiting and service latency, so Lambda duration
// includes the time spent waiting on the service and the limiter, which
// Lambda bills.
func perImageUsage(t *throughputResult, st stack) bench.PerImage {
	n := float64(max(t.Succeeded, 1))
	u := t.Usage
	invocationsPerImage := float64(t.Invocations) / n
	// Secrets Manager: each instance fetches at cold start and then once per
	// cache lifetime while it runs; 1,000 images at the achieved rate keep N
	// instances busy for 1000/rate minutes.
	var secrets, streamReads float64
	if t.AchievedPerMinute > 0 {
		minutes := 1000 / t.AchievedPerMinute
		secrets = float64(t.Config.Instances) * (1 + math.Ceil(minutes/secretCacheTTLMinutes)) / 1000
		streamReads = minutes * 60 * streamPollsPerSecond / 1000
	}
	return bench.PerImage{
		Credits:            float64(t.Charged) / n,
		BilledSeconds:      t.BilledSeconds / n,
		MemoryMB:           st.MemoryMB,
		Invocations:        invocationsPerImage,
		DynamoDBWriteUnits: (u.WriteUnits + float64(u.FailedWrites)) / n,
		DynamoDBReadUnits:  u.ReadUnits / n,
		S3Gets:             float64(u.Count("S3.GetObject", "S3.HeadObject")) / n,
		// S3's SendMessage of the notification, then per batch one receive and
		// one DeleteMessageBatch by the event source.
		SQSRequests:  1 + 2*invocationsPerImage,
		SecretsCalls: secrets,
		LogBytes:     (float64(t.LogBytes) + platformLogBytes*float64(t.Invocations)) / n,
		// Each image's final record is one result event: one pipe request
		// (its filter drops the other writes, which are not billed) and one
		// custom event on the bus, both well under 64 KB.
		StreamReads:  streamReads,
		ResultEvents: 1,
	}
}
