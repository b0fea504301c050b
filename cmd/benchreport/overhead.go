package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"runtime"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/bench"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/s3event"
)

// overheadConfig is one overhead run: how many images, and the service's
// latency on both sides.
type overheadConfig struct {
	Images, Warmup int
	// Latency is the simulator's answer time; at zero the run measures
	// DynamoDB Local against an instant service, at the service's own
	// latency it measures what users meet.
	Latency time.Duration
	// CompareReuse also runs each image's copy under another key through a
	// handler with reuseResults=off: the difference is what the content
	// identity (the digest over the bytes sent, the content
	// ledger's writes) adds per image.
	CompareReuse bool
}

// overheadResult compares the handler with the floor, per image.
type overheadResult struct {
	Config                 overheadConfig
	Images                 int
	MinBytes, MaxBytes     int
	HandlerWall, FloorWall bench.Stats
	HandlerCPU, FloorCPU   bench.Stats
	// Allocations per image, in the whole process (the in-process S3 server
	// and simulator included, on both sides).
	HandlerAllocs, FloorAllocs         float64
	HandlerAllocBytes, FloorAllocBytes float64
	LogBytesPerImage                   float64
	Usage                              bench.Usage // the handler's AWS requests, all images
	Charged                            int         // credits the simulator charged the handler
	// The floor's parts, to explain the difference.
	FloorGet, FloorPost, FloorPut bench.Stats
	// ReuseOffWall is the handler with reuseResults=off on a copy of each
	// image (CompareReuse), ReuseOffUsage its requests.
	ReuseOffWall  bench.Stats
	ReuseOffUsage bench.Usage
}

// floorParts times the three parts of one floor run.
type floorParts struct{ get, post, put time.Duration }

// measureOverhead runs images through the handler (one SQS message per
// invocation, as Lambda delivers it) and through the floor, interleaved so
// that the load of a shared machine affects both alike: setup, one run per
// image, then collection.
func measureOverhead(ctx context.Context, e *localEnv, st stack, oc overheadConfig, progress func(string, ...any)) (*overheadResult, error) {
	o, err := setupOverhead(e, st, oc)
	if err != nil {
		return nil, err
	}
	defer o.stopSim()
	for i := range oc.Warmup + oc.Images {
		if err := o.runImage(ctx, e, st, i, i >= oc.Warmup); err != nil {
			return nil, err
		}
		if (i+1)%100 == 0 {
			progress("overhead: %d/%d images", i+1, oc.Warmup+oc.Images)
		}
	}
	return o.collect(oc.Images), nil
}

// overheadRun is the overhead stage's handler and what it measured so far.
type overheadRun struct {
	h       *predictor.Handler
	off     *predictor.Handler // reuseResults=off, when CompareReuse
	sim     *geosim.Server     // both sides call it
	simURL  string
	stopSim func()
	q       *sqsqueue.Queue
	httpc   *http.Client
	counter *bench.RequestCounter
	// offCounter counts the reuseResults=off handler's requests.
	offCounter *bench.RequestCounter
	logs       *countingWriter
	prefix     string // keys unique to this run: a second run must not find the first's records
	seed       uint64 // the run's first photo; the photos of no two runs are alike
	res        *overheadResult

	hw, fw, hc, fc, gets, posts, puts, offw []time.Duration
	hAllocs, fAllocs, hBytes, fBytes        uint64
	logBytes                                int64
	usage, offUsage                         bench.Usage
}

// setupOverhead builds the handler the stage measures. The rate is lifted
// (the simulator has no rate limit here): this measures cost per image, not
// pacing; the shared pacer still takes its slot with one write per image,
// as it does deployed.
//
// Each run has its own simulator at the run's latency, so the handler and
// the floor wait for the same service.
func setupOverhead(e *localEnv, st stack, oc overheadConfig) (*overheadRun, error) {
	now := time.Now()
	o := &overheadRun{q: sqsqueue.New(), seed: uint64(now.UnixNano()), httpc: &http.Client{Timeout: time.Minute}, counter: newCounter(),
		logs: &countingWriter{}, prefix: fmt.Sprintf("overhead-%d", now.UnixNano()), res: &overheadResult{Config: oc, MinBytes: 200 << 10, MaxBytes: 500 << 10}}
	var err error
	if o.sim, o.simURL, o.stopSim, err = startSimulator(geosim.WithLatency(oc.Latency)); err != nil {
		return nil, err
	}
	handler := func(name string, extra map[string]string, counter *bench.RequestCounter) (*predictor.Handler, error) {
		s3c, ddbc := e.counted(counter)
		env := functionEnv(st, o.simURL, unpacedRate, 1)
		env[envvars.PipelineName] = fmt.Sprintf("%s-%d", name, time.Now().UnixNano())
		maps.Copy(env, extra)
		pace, err := newPacer(env, ddbc, time.Now)
		if err != nil {
			return nil, err
		}
		return newHandler(env, s3c, ddbc, o.logs, pace, sqsqueue.Visibility{Queue: o.q})
	}
	if o.h, err = handler("overhead", nil, o.counter); err == nil && oc.CompareReuse {
		o.offCounter = newCounter()
		o.off, err = handler("overhead-off", map[string]string{envvars.ReuseResults: predictor.ReuseOff}, o.offCounter)
	}
	if err != nil {
		o.stopSim()
		return nil, err
	}
	return o, nil
}

// runImage uploads image i and runs it through the handler and the floor,
// alternating which goes first; measured keeps the figures (false during
// the warm-up).
func (o *overheadRun) runImage(ctx context.Context, e *localEnv, st stack, i int, measured bool) error {
	size := o.res.MinBytes + int(uint64(i)*7919%uint64(o.res.MaxBytes-o.res.MinBytes))
	// Photos distinct from every other run's too: with reuseResults=content
	// a photo the previous run paid for would be reused, with no call.
	img := fakeJPEG(size, o.seed+uint64(i))
	obj, err := e.put(ctx, fmt.Sprintf("%s/%04d.jpg", o.prefix, i), img)
	if err != nil {
		return err
	}
	payload, msgs, err := sqsEvent(ctx, o.q, obj)
	if err != nil {
		return err
	}
	first, second := o.runHandler, o.runFloor
	if i%2 == 1 {
		first, second = o.runFloor, o.runHandler
	}
	if err := first(ctx, e, st, obj, payload, i, measured); err != nil {
		return err
	}
	if err := second(ctx, e, st, obj, payload, i, measured); err != nil {
		return err
	}
	if err := o.q.Ack(msgs[0].ReceiptHandle); err != nil {
		return err
	}
	if err := checkSucceeded(ctx, e, obj); err != nil {
		return err
	}
	if o.off == nil {
		return nil
	}
	// The same bytes under another key: with reuse off it pays again.
	copyObj, err := e.put(ctx, fmt.Sprintf("%s/%04d-copy.jpg", o.prefix, i), img)
	if err != nil {
		return err
	}
	if err := o.runReuseOff(ctx, copyObj, st, measured); err != nil {
		return err
	}
	return checkSucceeded(ctx, e, copyObj)
}

// checkSucceeded fails unless obj's record is succeeded.
func checkSucceeded(ctx context.Context, e *localEnv, obj s3event.ObjectCreated) error {
	rec, err := e.store.Lookup(ctx, refOf(obj))
	if err != nil || rec == nil || rec.Status != ledger.StatusSucceeded {
		return fmt.Errorf("record of %s: %+v %v", obj.Key, rec, err)
	}
	return nil
}

// runReuseOff invokes the reuseResults=off handler on obj.
func (o *overheadRun) runReuseOff(ctx context.Context, obj s3event.ObjectCreated, st stack, measured bool) error {
	payload, msgs, err := sqsEvent(ctx, o.q, obj)
	if err != nil {
		return err
	}
	u0 := o.offCounter.Snapshot()
	start := time.Now()
	out, err := lambdarun.Invoke(ctx, o.off.Handle, payload, st.Timeout)
	wall := time.Since(start)
	if err != nil {
		return fmt.Errorf("reuse-off handler on %s: %w", obj.Key, err)
	}
	if f, err := batchFailures(out); err != nil || len(f) != 0 {
		return fmt.Errorf("reuse-off handler on %s: failures %v %v", obj.Key, f, err)
	}
	if measured {
		o.offw = append(o.offw, wall)
		o.offUsage = addUsage(o.offUsage, o.offCounter.Snapshot().Sub(u0))
	}
	return o.q.Ack(msgs[0].ReceiptHandle)
}

// runHandler invokes the handler on payload as Lambda would.
func (o *overheadRun) runHandler(ctx context.Context, e *localEnv, st stack, obj s3event.ObjectCreated, payload []byte, _ int, measured bool) error {
	c0, l0, u0 := o.sim.Charged(geosim.DefaultOrg), o.logs.n.Load(), o.counter.Snapshot()
	m0 := memStats()
	start, cpu := time.Now(), bench.CPUTime()
	out, err := lambdarun.Invoke(ctx, o.h.Handle, payload, st.Timeout)
	wall, used := time.Since(start), bench.CPUTime()-cpu
	m1 := memStats()
	if err != nil {
		return fmt.Errorf("handler on %s: %w", obj.Key, err)
	}
	if f, err := batchFailures(out); err != nil || len(f) != 0 {
		return fmt.Errorf("handler on %s: failures %v %v", obj.Key, f, err)
	}
	// The measured path is a paid photo: an answer reused from elsewhere
	// would time a different, shorter path.
	if c := o.sim.Charged(geosim.DefaultOrg) - c0; c != 1 {
		return fmt.Errorf("handler on %s charged %d credits, want 1 (one paid call)", obj.Key, c)
	}
	if measured {
		o.hw, o.hc = append(o.hw, wall), append(o.hc, used)
		o.hAllocs += m1.Mallocs - m0.Mallocs
		o.hBytes += m1.TotalAlloc - m0.TotalAlloc
		o.logBytes += o.logs.n.Load() - l0
		o.usage = addUsage(o.usage, o.counter.Snapshot().Sub(u0))
		o.res.Charged++
	}
	return nil
}

// runFloor does the unavoidable work for the same image.
func (o *overheadRun) runFloor(ctx context.Context, e *localEnv, _ stack, obj s3event.ObjectCreated, _ []byte, i int, measured bool) error {
	m0 := memStats()
	start, cpu := time.Now(), bench.CPUTime()
	parts, err := floor(ctx, e, o.httpc, o.simURL, obj, i)
	wall, used := time.Since(start), bench.CPUTime()-cpu
	m1 := memStats()
	if err != nil {
		return fmt.Errorf("floor on %s: %w", obj.Key, err)
	}
	if measured {
		o.fw, o.fc = append(o.fw, wall), append(o.fc, used)
		o.gets, o.posts, o.puts = append(o.gets, parts.get), append(o.posts, parts.post), append(o.puts, parts.put)
		o.fAllocs += m1.Mallocs - m0.Mallocs
		o.fBytes += m1.TotalAlloc - m0.TotalAlloc
	}
	return nil
}

// collect summarizes the measured images.
func (o *overheadRun) collect(images int) *overheadResult {
	res, n := o.res, float64(images)
	res.Images = images
	res.HandlerWall, res.FloorWall = bench.Summarize(o.hw), bench.Summarize(o.fw)
	res.HandlerCPU, res.FloorCPU = bench.Summarize(o.hc), bench.Summarize(o.fc)
	res.HandlerAllocs, res.FloorAllocs = float64(o.hAllocs)/n, float64(o.fAllocs)/n
	res.HandlerAllocBytes, res.FloorAllocBytes = float64(o.hBytes)/n, float64(o.fBytes)/n
	res.LogBytesPerImage = float64(o.logBytes) / n
	res.FloorGet, res.FloorPost, res.FloorPut = bench.Summarize(o.gets), bench.Summarize(o.posts), bench.Summarize(o.puts)
	res.Usage = o.usage
	res.ReuseOffWall, res.ReuseOffUsage = bench.Summarize(o.offw), o.offUsage
	return res
}

// floor is the unavoidable work for one image: a bare S3 GET, a bare
// net/http multipart POST of the same bytes to the same simulator, and one
// DynamoDB PutItem of the answer.
func floor(ctx context.Context, e *localEnv, httpc *http.Client, simURL string, obj s3event.ObjectCreated, i int) (floorParts, error) {
	var parts floorParts
	t0 := time.Now()
	out, err := e.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(obj.Bucket), Key: aws.String(obj.Key)})
	if err != nil {
		return parts, err
	}
	img, err := io.ReadAll(out.Body)
	out.Body.Close()
	if err != nil {
		return parts, err
	}

	parts.get = time.Since(t0)

	t0 = time.Now()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "image.jpg")
	if err != nil {
		return parts, err
	}
	_, _ = fw.Write(img)
	if err := mw.Close(); err != nil {
		return parts, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, simURL+geosim.PathPredict, &body)
	if err != nil {
		return parts, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set(geosim.KeyHeader, fakeKey)
	resp, err := httpc.Do(req)
	if err != nil {
		return parts, err
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return parts, err
	}
	if resp.StatusCode != http.StatusOK {
		return parts, fmt.Errorf("predict: status %d", resp.StatusCode)
	}

	parts.post = time.Since(t0)

	t0 = time.Now()
	_, err = e.ddb.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(tableName),
		Item: map[string]types.AttributeValue{
			"pk":     &types.AttributeValueMemberS{Value: fmt.Sprintf("FLOOR#%d", i)},
			"sk":     &types.AttributeValueMemberS{Value: "V#1"},
			"answer": &types.AttributeValueMemberS{Value: string(answer)},
		},
	})
	parts.put = time.Since(t0)
	return parts, err
}

func memStats() runtime.MemStats {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

func addUsage(a, b bench.Usage) bench.Usage {
	if a.Requests == nil {
		a.Requests = map[string]int{}
	}
	for op, n := range b.Requests {
		a.Requests[op] += n
	}
	a.ReadUnits += b.ReadUnits
	a.WriteUnits += b.WriteUnits
	a.FailedWrites += b.FailedWrites
	for f, x := range b.Items {
		if a.Items == nil {
			a.Items = map[string]bench.ItemUsage{}
		}
		a.Items[f] = a.Items[f].Add(x)
	}
	return a
}
