package predictor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/syncbuf"
	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
	"github.com/geolocate-aws/geolocate/pkg/secretkey/secretkeytest"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awscalls"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
	"github.com/geolocate-aws/geolocate/pkg/secretkey"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// TestMain checks the calls recorded by awscalls_test.go against the
// predictor's golden list (-update-aws-calls rewrites this package's share).
func TestMain(m *testing.M) {
	os.Exit(awscalls.FinishMain(awspartstest.Run(m), "../../testdata/aws-calls/predictor.json", "pkg/predictor", predictorCalls.Calls()))
}

// testEnv is the predictor wired to real local parts: gofakes3, DynamoDB
// Local and the service simulator.
type testEnv struct {
	t       testing.TB
	s3      *s3.Client
	bucket  string
	ddb     *dynamodb.Client
	store   *ledger.Store
	sim     *geosim.Server
	keys    *fakeKeys
	h       *Handler
	cfg     Config
	logs    *syncbuf.Buffer
	metrics *syncbuf.Buffer
	// visibility records delayed messages (budget deferrals).
	visibility *fakeVisibility
	// requests counts the handler's own S3 and DynamoDB requests (not the
	// test's: store and s3 above are not counted).
	requests *requestCounter
	// objects is the handler's S3 client; tests may wrap it to inject
	// failures before building a handler.
	objects ObjectStore
	// clock, when set (useFakeClock), is the handlers' and their pacers'
	// clock, and their sleeps move it.
	clock *fakeClock
	// lastPut is the upload of the last put.
	lastPut upload
	// jobs is the table's jobs (the handlers' Deps.Jobs); runJobs the
	// reprocess job of each run the test sends messages of (runJob).
	jobs    *jobs.Store
	runJobs map[string]string
	// queue, when set (useQueue), receives the handlers' message delays
	// instead of visibility.
	queue *sqsqueue.Queue
	// wrapService and wrapLedger, when set, wrap the handlers' service
	// client and ledger (to inject faults).
	wrapService func(Service) Service
	wrapLedger  func(Ledger) Ledger
	pacerOpts   []func(*pacer.Options) // tune the shared pacer newHandler builds
}

// fakeClock is a simulated clock whose Sleep moves it on at once, so a
// handler's waits take no real time and are seen by everything reading it.
// For one worker at a time: concurrent sleeps would add up.
type fakeClock struct {
	*simclock.Clock
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d > 0 {
		c.Advance(d)
	}
	return nil
}

// useFakeClock rebuilds the handler on clk (its pacer included); pass the
// same clock to the simulator (geosim.WithClock) to see calls on it.
func (e *testEnv) useFakeClock(clk *simclock.Clock) {
	e.clock = &fakeClock{Clock: clk}
	e.h = e.newHandler(e.cfg)
}

// newTestEnv builds an environment; edit adjusts the configuration.
func newTestEnv(t testing.TB, edit func(*Config), simOpts ...func(*geosim.Config)) *testEnv {
	t.Helper()
	s3c, bucket := awspartstest.S3(t)
	ddb, table := awspartstest.DynamoDB(t)

	simOpts = append([]func(*geosim.Config){func(c *geosim.Config) { c.DemoKey = fakeKey }}, simOpts...)
	sim := geosim.New(simOpts...)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)

	cfg := Config{
		TableName: table, APIKey: fakeKey, APIURL: srv.URL,
		ModelFallback: true, RatePerMinute: 1e6, MaxConcurrency: 1, ClaimLease: DefaultClaimLease,
		BucketName: bucket, MetricNamespace: metricnames.DefaultNamespace, PipelineName: "test", LogLevel: "debug",
		MaxImageBytes: imageformat.DefaultMaxImageBytes, FinishReserve: DefaultFinishReserve,
		MaxServerDelay: DefaultMaxServerDelay,
	}
	if edit != nil {
		edit(&cfg)
	}
	e := &testEnv{
		t: t, s3: s3c, bucket: bucket, sim: sim, cfg: cfg,
		ddb:        ddb,
		store:      ledger.New(ddb, table),
		jobs:       jobs.New(ddb, table),
		runJobs:    map[string]string{},
		keys:       newFakeKeys(t, fakeKey),
		logs:       &syncbuf.Buffer{},
		metrics:    &syncbuf.Buffer{},
		visibility: &fakeVisibility{},
		requests:   &requestCounter{},
	}
	e.objects = countingObjects{ObjectStore: s3c, n: e.requests}
	e.h = e.newHandler(cfg)
	t.Cleanup(e.assertNoKeyInLogs)
	return e
}

func (e *testEnv) newHandler(cfg Config, optFns ...func(*Options)) *Handler {
	e.t.Helper()
	logger := newJSONLogger(e.logs, "debug")
	client, err := geoapi.New(cfg.APIURL, func(o *geoapi.Options) {
		o.Logger = logger
		o.MaxAttempts = 2
		o.BaseBackoff, o.MaxBackoff = time.Millisecond, 5*time.Millisecond
	})
	if err != nil {
		e.t.Fatal(err)
	}
	// The shipped pacer (shared, on the table) unless the test sets
	// cfg.Pacing; its writes are not counted with the per-object requests.
	pacerOpts := slices.Clone(e.pacerOpts)
	if e.clock != nil {
		pacerOpts = append(pacerOpts, func(o *pacer.Options) { o.Clock = e.clock.Now })
		optFns = append([]func(*Options){func(o *Options) { o.Clock, o.Sleep = e.clock.Now, e.clock.Sleep }}, optFns...)
	}
	pace, err := NewPacer(cfg, e.ddb, logger, pacerOpts...)
	if err != nil {
		e.t.Fatal(err)
	}
	var visibility VisibilityChanger = e.visibility
	if e.queue != nil {
		visibility = sqsqueue.Visibility{Queue: e.queue}
	}
	var service Service = client
	if e.wrapService != nil {
		service = e.wrapService(service)
	}
	var store Ledger = ledger.New(countingDynamoDB{DynamoDBAPI: e.ddb, n: e.requests}, cfg.TableName)
	if e.wrapLedger != nil {
		store = e.wrapLedger(store)
	}
	h, err := New(cfg, Deps{
		Objects: e.objects, Ledger: store,
		Service: service, Keys: e.keys, Pacer: pace,
		Logger: logger, Metrics: e.metrics, Visibility: visibility,
		Jobs: e.jobs,
	}, optFns...)
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

// assertNoKeyInLogs checks every log line and metric of the test: no key
// the test used may appear.
func (e *testEnv) assertNoKeyInLogs() {
	all := e.logs.String() + e.metrics.String()
	for _, k := range e.keys.all() {
		if strings.Contains(all, k) {
			e.t.Errorf("an API key appears in the logs or metrics")
		}
	}
}

// put uploads body under key and returns the upload its notification
// would describe.
func (e *testEnv) put(key string, body []byte) upload {
	e.t.Helper()
	out, err := e.s3.PutObject(context.Background(), &s3.PutObjectInput{
		Bucket: aws.String(e.bucket), Key: aws.String(key), Body: bytes.NewReader(body),
	})
	if err != nil {
		e.t.Fatalf("put %s: %v", key, err)
	}
	e.lastPut = upload{Bucket: e.bucket, Key: key, VersionID: aws.ToString(out.VersionId),
		ETag: trimETag(aws.ToString(out.ETag)), Size: int64(len(body)), SizeKnown: true}
	return e.lastPut
}

// invoke runs the handler on payload as Lambda would, through
// aws-lambda-go's decoding, with a request id and a deadline, and returns
// the response as Lambda would post it.
func (e *testEnv) invoke(payload []byte) ([]byte, error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: "req-" + e.t.Name()})
	return lambda.NewHandler(e.h.Handle).Invoke(ctx, payload)
}

// invokeSQS runs the handler on an SQS batch and returns the ids of the
// messages to retry.
func (e *testEnv) invokeSQS(batch []byte) []string {
	e.t.Helper()
	out, err := e.invoke(batch)
	if err != nil {
		e.t.Fatalf("SQS invocation returned an error: %v", err)
	}
	var resp events.SQSEventResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		e.t.Fatalf("response %s: %v", out, err)
	}
	ids := []string{}
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

func (e *testEnv) record(u upload) *ledger.Record {
	e.t.Helper()
	rec, err := e.store.Lookup(context.Background(), ledger.ObjectRef{Bucket: u.Bucket, Key: u.Key, VersionID: u.VersionID, ETag: u.ETag})
	if err != nil {
		e.t.Fatal(err)
	}
	return rec
}

func (e *testEnv) predictCalls() []geosim.Call {
	var calls []geosim.Call
	for _, c := range e.sim.Calls() {
		if c.Endpoint == geosim.PathPredict {
			calls = append(calls, c)
		}
	}
	return calls
}

// metricSum adds up a metric over the invocations so far, counting only the
// documents without a Reason dimension (the totals).
func (e *testEnv) metricSum(name string) float64 {
	return sumMetric(e.t, e.metrics.String(), name, "", "")
}

// metricReason adds up a metric's values for one Reason.
func (e *testEnv) metricReason(name, reason string) float64 {
	return sumMetric(e.t, e.metrics.String(), name, reason, "")
}

// metricModel adds up a metric's values published with ModelId = model.
func (e *testEnv) metricModel(name, model string) float64 {
	return sumMetric(e.t, e.metrics.String(), name, "", model)
}

// sumMetric adds up name's values of the lines with exactly this Reason
// and ModelId ("" for none): a total, or one breakdown.
func sumMetric(t testing.TB, out, name, reason, model string) float64 {
	t.Helper()
	var sum float64
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var doc map[string]any
		if err := json.Unmarshal(sc.Bytes(), &doc); err != nil {
			t.Fatalf("metrics line is not JSON: %q", sc.Text())
		}
		if got, _ := doc[metricnames.DimReason].(string); got != reason {
			continue
		}
		if got, _ := doc[metricnames.DimModelID].(string); got != model {
			continue
		}
		switch v := doc[name].(type) {
		case float64:
			sum += v
		case []any:
			for _, x := range v {
				f, _ := x.(float64)
				sum += f
			}
		}
	}
	return sum
}

// logLines returns the decoded log lines whose msg is msg.
func (e *testEnv) logLines(msg string) []map[string]any {
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(e.logs.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			e.t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		if line["msg"] == msg {
			lines = append(lines, line)
		}
	}
	return lines
}

// s3Event builds a direct S3 event notification, URL-encoding keys as S3
// does.
func s3Event(ups ...upload) []byte {
	var ev events.S3Event
	for _, u := range ups {
		ev.Records = append(ev.Records, events.S3EventRecord{
			EventVersion: "2.1", EventSource: sourceS3, AWSRegion: "us-east-1",
			EventTime: time.Date(2026, 11, 22, 10, 15, 30, 0, time.UTC), EventName: "ObjectCreated:Put",
			S3: events.S3Entity{
				SchemaVersion: "1.0",
				Bucket:        events.S3Bucket{Name: u.Bucket, Arn: "arn:aws:s3:::" + u.Bucket},
				Object:        events.S3Object{Key: encodeS3Key(u.Key), Size: u.Size, ETag: u.ETag, VersionID: u.VersionID},
			},
		})
	}
	b, _ := json.Marshal(ev)
	return b
}

// encodeS3Key encodes a key the way S3 notifications do: form encoding,
// a space becomes "+".
func encodeS3Key(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c == ' ':
			b.WriteByte('+')
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("-_.*/", c) >= 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// sqsMessage is one message of a test batch: an id and a body.
type sqsMessage struct {
	id   string
	body string
	// receives is the message's ApproximateReceiveCount; 0 means 1, a
	// first delivery.
	receives int
}

func uploadMessage(id string, ups ...upload) sqsMessage {
	return sqsMessage{id: id, body: string(s3Event(ups...))}
}

func sqsBatch(msgs ...sqsMessage) []byte {
	var ev events.SQSEvent
	for _, m := range msgs {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: m.id, ReceiptHandle: "handle-" + m.id, Body: m.body,
			Attributes:     map[string]string{"ApproximateReceiveCount": strconv.Itoa(max(m.receives, 1))},
			EventSource:    sourceSQS,
			EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:geolocate-uploads", AWSRegion: "us-east-1",
		})
	}
	b, _ := json.Marshal(ev)
	return b
}

// testJPEG encodes a small gradient JPEG; seed makes distinct images.
func testJPEG(t testing.TB, seed int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for y := 0; y < 48; y++ {
		for x := 0; x < 64; x++ {
			img.Set(x, y, color.RGBA{uint8(x*4 + seed), uint8(y * 5), uint8(seed * 7), 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fakeKeys is the real Secrets Manager provider on the fake, counting
// refreshes.
type fakeKeys struct {
	*secretkey.SecretsManagerProvider
	sm        *secretkeytest.SecretsManager
	refreshes atomic.Int32
}

func newFakeKeys(t testing.TB, key string) *fakeKeys {
	t.Helper()
	sm := secretkeytest.New("", key)
	p, err := secretkey.NewSecretsManager(sm, "geolocate/test-key", func(o *secretkey.SecretsManagerOptions) { o.TTL = time.Hour })
	if err != nil {
		t.Fatal(err)
	}
	return &fakeKeys{SecretsManagerProvider: p, sm: sm}
}

func (f *fakeKeys) Refresh(ctx context.Context) (string, error) {
	f.refreshes.Add(1)
	return f.SecretsManagerProvider.Refresh(ctx)
}

// rotate stores a new secret value, as an operator does after regenerating
// the key; the provider's cache keeps the old one until a refresh.
func (f *fakeKeys) rotate(key string) {
	f.sm.Rotate(key)
}

func (f *fakeKeys) refreshCount() int { return int(f.refreshes.Load()) }

func (f *fakeKeys) all() []string {
	return f.sm.Values()
}

// fakeVisibility records ChangeVisibility calls.
type fakeVisibility struct {
	mu      sync.Mutex
	delayed map[string]time.Duration
}

func (f *fakeVisibility) ChangeVisibility(_ context.Context, msg events.SQSMessage, d time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.delayed == nil {
		f.delayed = map[string]time.Duration{}
	}
	f.delayed[msg.MessageId] = d
	return nil
}

func (e *testEnv) storeClient() *dynamodb.Client { return e.ddb }

// deleteVersion permanently deletes one object version.
func (e *testEnv) deleteVersion(u upload) {
	e.t.Helper()
	_, err := e.s3.DeleteObject(context.Background(), &s3.DeleteObjectInput{
		Bucket: aws.String(u.Bucket), Key: aws.String(u.Key), VersionId: u.s3Version(),
	})
	if err != nil {
		e.t.Fatalf("delete %s: %v", u.Key, err)
	}
}
