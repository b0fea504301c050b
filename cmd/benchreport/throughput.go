package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/bench"
	"github.com/geolocate-aws/geolocate/pkg/geosim"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/localpipeline"
	"github.com/geolocate-aws/geolocate/pkg/localqueue"
)

// throughputConfig is the load: the service's limit and latency, and the
// pipeline's shape.
type throughputConfig struct {
	RatePerMinute float64       // R: the simulator's limit and GEO_RATE_PER_MINUTE
	SimBurst      int           // the simulator's token bucket burst
	Latency       time.Duration // L: the simulator's latency per prediction
	Instances     int           // N: concurrent function instances (GEO_MAX_CONCURRENCY)
	BatchSize     int
	Duration      time.Duration // how long uploads arrive, at rate R
	RetryDelay    time.Duration // local shortening of the visibility timeout for failed messages
}

type throughputResult struct {
	Config            throughputConfig
	Uploads           int
	Succeeded         int
	OtherFinal        int // rejected or failed records
	DeadLetters       int
	Lost              int // neither a final record nor a dead letter
	Calls, Status429  int
	Charged           int
	AchievedPerMinute float64
	UploadToRecord    bench.Stats
	Invocations       int
	BilledSeconds     float64 // sum over invocations, each rounded up to 1 ms
	LogBytes          int64
	Usage             bench.Usage
	Elapsed           time.Duration
}

// measureThroughput uploads images at rate R for the configured duration
// while N instances, each its own handler configured as the stack
// configures it, drain the queue against a rate-limited simulator.
func measureThroughput(ctx context.Context, e *localEnv, st stack, tc throughputConfig, progress func(string, ...any)) (*throughputResult, error) {
	sim, simURL, stopSim, err := startSimulator(
		geosim.WithRateLimit(tc.RatePerMinute, tc.SimBurst), geosim.WithLatency(tc.Latency))
	if err != nil {
		return nil, err
	}
	defer stopSim()

	var counter bench.RequestCounter
	s3c, ddbc := e.counted(&counter)
	logs := &countingWriter{}
	queue := localqueue.New(
		localqueue.WithVisibilityTimeout(6*st.Timeout), // the stack's queue setting
		localqueue.WithMaxReceiveCount(10))             // cdk.json dlqMaxReceiveCount

	var (
		mu          sync.Mutex
		invocations int
		billed      float64
	)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var pollers sync.WaitGroup
	for range tc.Instances {
		// One handler per instance: each Lambda instance has its own rate
		// limiter, at R/N.
		h, err := newHandler(functionEnv(st, simURL, tc.RatePerMinute, tc.Instances), s3c, ddbc, logs)
		if err != nil {
			return nil, err
		}
		p := &localqueue.Poller{
			Queue: queue, Handler: h.Handle, Concurrency: 1, BatchSize: tc.BatchSize,
			Timeout: st.Timeout, RetryDelay: tc.RetryDelay,
			OnBatch: func(r localqueue.BatchResult) {
				mu.Lock()
				invocations++
				billed += bench.BilledSeconds(r.Duration.Seconds())
				mu.Unlock()
			},
		}
		pollers.Go(func() { _ = p.Run(runCtx) })
	}

	total := int(tc.RatePerMinute * tc.Duration.Minutes())
	interval := time.Duration(float64(time.Minute) / tc.RatePerMinute)
	uploads := make([]localpipeline.ObjectCreated, 0, total)
	img := fakeJPEG(300<<10, 7)
	start := time.Now()
	// Keys unique to this run: a second run must not find the first's records.
	prefix := fmt.Sprintf("throughput-%d/", start.UnixNano())
	for i := range total {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			time.Sleep(wait)
		}
		// Distinct bytes per image, cheaply: the header stays, a counter
		// changes the content.
		copy(img[32:], fmt.Sprintf("image-%08d", i))
		obj, err := e.put(ctx, fmt.Sprintf("%s%05d.jpg", prefix, i), img)
		if err != nil {
			return nil, err
		}
		body, err := localpipeline.S3EventBody(obj)
		if err != nil {
			return nil, err
		}
		queue.Send(body)
		uploads = append(uploads, obj)
		if (i+1)%(total/4+1) == 0 {
			progress("throughput: %d/%d uploads, queue depth %d", i+1, total, queue.Depth())
		}
	}
	drainBy := time.Now().Add(2 * time.Minute)
	for queue.Len() > 0 && time.Now().Before(drainBy) && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	elapsed := time.Since(start)
	stop()
	pollers.Wait()

	res := &throughputResult{Config: tc, Uploads: total, Invocations: invocations, BilledSeconds: billed,
		LogBytes: logs.n.Load(), Usage: counter.Snapshot(), Elapsed: elapsed, Charged: sim.Charged(geosim.DefaultOrg)}
	for _, c := range sim.Calls() {
		if c.Endpoint != geosim.PathPredict {
			continue
		}
		res.Calls++
		if c.Status == http.StatusTooManyRequests {
			res.Status429++
		}
	}
	dead := map[string]bool{}
	for _, m := range queue.DeadLetters() {
		dead[m.Body] = true
	}
	res.DeadLetters = len(dead)
	var latencies []time.Duration
	var done []time.Time
	for _, obj := range uploads {
		rec, err := e.store.Lookup(ctx, refOf(obj))
		if err != nil {
			return nil, err
		}
		switch {
		case rec != nil && rec.Status == ledger.StatusSucceeded:
			res.Succeeded++
			latencies = append(latencies, rec.UpdatedAt.Sub(obj.Time))
			done = append(done, rec.UpdatedAt)
		case rec != nil && rec.Status != ledger.StatusInProgress:
			res.OtherFinal++
		default:
			body, _ := localpipeline.S3EventBody(obj)
			if !dead[body] {
				res.Lost++
			}
		}
	}
	res.UploadToRecord = bench.Summarize(latencies)
	if len(done) > 1 {
		slices.SortFunc(done, func(a, b time.Time) int { return a.Compare(b) })
		span := done[len(done)-1].Sub(done[0])
		res.AchievedPerMinute = float64(len(done)-1) / span.Minutes()
	}
	return res, nil
}
