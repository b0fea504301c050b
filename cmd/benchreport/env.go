package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/bench"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/secretkey"
	"github.com/geolocate-aws/geolocate/pkg/shared/configrules"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
	"github.com/geolocate-aws/geolocate/pkg/shared/s3event"
)

// fakeKey is the simulator's key for every run: obviously not a real one.
const fakeKey = "geo_bench_fake_key_1"

const (
	bucketName = "bench-uploads"
	tableName  = "bench-records"
)

// localEnv is the local stand-in for the stack: gofakes3, DynamoDB Local and
// the simulator on 127.0.0.1. Clients made by counted() count their
// requests; the plain ones are for setup and the floor.
type localEnv struct {
	s3srv  *awsparts.S3
	ddbsrv *awsparts.DynamoDB
	s3     *s3.Client
	ddb    *dynamodb.Client
	store  *ledger.Store

	// simURL is an instant simulator for the memory and cold-start
	// stages; the overhead and throughput runs start their own.
	simURL  string
	stopSim func()
}

func startEnv(ctx context.Context) (*localEnv, error) {
	e := &localEnv{}
	var err error
	if e.s3srv, err = awsparts.StartS3(); err != nil {
		return nil, fmt.Errorf("start S3: %w", err)
	}
	if e.ddbsrv, err = awsparts.StartDynamoDB(ctx); err != nil {
		e.close()
		return nil, fmt.Errorf("start DynamoDB Local: %w", err)
	}
	e.s3, e.ddb = e.s3srv.Client(), e.ddbsrv.Client()
	if err := e.s3srv.CreateVersionedBucket(ctx, bucketName); err != nil {
		e.close()
		return nil, err
	}
	// No stream: the bench reads none (cost.go prices the pipe's reads),
	// and DynamoDB Local's writes slow down with every stream record it
	// keeps (awsparts.TableOptions), which would tax each stage more than
	// the one before.
	if err := e.ddbsrv.CreateTable(ctx, tableName, awsparts.WithoutStream); err != nil {
		e.close()
		return nil, err
	}
	e.store = ledger.New(e.ddb, tableName)
	_, e.simURL, e.stopSim, err = startSimulator()
	if err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

// startSimulator starts a simulator with plenty of credits and the given
// options (rate limit, latency) on 127.0.0.1.
func startSimulator(optFns ...func(*geosim.Config)) (*geosim.Server, string, func(), error) {
	optFns = append([]func(*geosim.Config){func(c *geosim.Config) {
		c.DemoKey = fakeKey
		c.Allowance = 1_000_000_000
	}}, optFns...)
	sim := geosim.New(optFns...)
	url, stop, err := sim.Start("127.0.0.1:0")
	if err != nil {
		return nil, "", nil, fmt.Errorf("start simulator: %w", err)
	}
	return sim, url, stop, nil
}

func (e *localEnv) close() {
	if e.stopSim != nil {
		e.stopSim()
	}
	if e.ddbsrv != nil {
		e.ddbsrv.Stop()
	}
	if e.s3srv != nil {
		_ = e.s3srv.Close()
	}
}

// newCounter counts AWS requests, DynamoDB's by item family: what
// reuseResults=content adds to the cost is stated from the content
// ledger's (contentPrefix).
func newCounter() *bench.RequestCounter { return &bench.RequestCounter{} }

// The content items' family (pkg/ledger: "CONTENT#<sha256>").

var contentPrefix = ledger.ContentRef{}.PartitionKey()

// counted returns S3 and DynamoDB clients whose requests c counts.
func (e *localEnv) counted(c *bench.RequestCounter) (*s3.Client, *dynamodb.Client) {
	return e.s3srv.Client(func(o *s3.Options) { o.APIOptions = append(o.APIOptions, c.Register) }),
		e.ddbsrv.Client(func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, c.Register) })
}

// stack is the part of the deployment configuration (cdk.json context)
// the measurements depend on.
type stack struct {
	MemoryMB       int
	BatchSize      int
	Timeout        time.Duration
	MonitorMinutes int
}

// readStack reads the defaults from cdk.json, the file `cdk deploy` uses.
func readStack(root string) (stack, error) {
	b, err := os.ReadFile(filepath.Join(root, "cdk.json"))
	if err != nil {
		return stack{}, fmt.Errorf("read cdk.json: %w", err)
	}
	var doc struct {
		Context struct {
			Memory  int `json:"predictorMemoryMb"`
			Batch   int `json:"batchSize"`
			Timeout int `json:"predictorTimeoutSeconds"`
			Monitor int `json:"monitorScheduleMinutes"`
		} `json:"context"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return stack{}, fmt.Errorf("parse cdk.json: %w", err)
	}
	c := doc.Context
	return stack{MemoryMB: c.Memory, BatchSize: c.Batch, Timeout: time.Duration(c.Timeout) * time.Second,
		MonitorMinutes: c.Monitor}, nil
}

// functionEnv is the environment the stack gives the predictor (see
// infra/functions.go), with the key itself in place of the secret id.
func functionEnv(st stack, apiURL string, ratePerMinute float64, concurrency int) map[string]string {
	return map[string]string{
		envvars.TableName:       tableName,
		envvars.APIURL:          apiURL,
		envvars.APIKey:          fakeKey,
		envvars.ModelFallback:   "true",
		envvars.RatePerMinute:   strconv.FormatFloat(ratePerMinute, 'f', -1, 64),
		envvars.MaxConcurrency:  strconv.Itoa(concurrency),
		envvars.DailyBudget:     "0",
		envvars.ClaimLease:      (st.Timeout + time.Minute).String(),
		envvars.RecordTTLDays:   "0",
		envvars.BucketName:      bucketName,
		envvars.MetricNamespace: metricnames.DefaultNamespace,
		envvars.PipelineName:    "bench",
		envvars.LogLevel:        "INFO",
		envvars.MaxReceiveCount: strconv.Itoa(benchMaxReceiveCount),
	}
}

// unpacedRate is the rate of the stages that measure a cost per image, not
// pacing: the highest the shared pacer carries (a slot every 2 ms), which
// the stack's own rules accept and one instance never reaches, so no call
// waits for its slot while each still takes one, as deployed.
const unpacedRate = configrules.MaxRatePerMinute

// benchMaxReceiveCount is the queues' redrive maxReceiveCount, cdk.json's
// dlqMaxReceiveCount.
const benchMaxReceiveCount = 10

// newHandler builds the predictor's handler as functions/predictor does at
// cold start, on the given clients; logs and metrics go to out. It delays
// the messages it returns through vis (the local queue's), as the deployed
// function does on SQS.
func newHandler(vars map[string]string, objects *s3.Client, ddb *dynamodb.Client, out io.Writer, pace predictor.Pacer, vis predictor.VisibilityChanger) (*predictor.Handler, error) {
	cfg, err := predictor.LoadConfig(func(k string) string { return vars[k] })
	if err != nil {
		return nil, err
	}
	logger := lambdarun.NewLogger(out, cfg.LogLevel)
	keys, err := secretkey.FromSettings("", cfg.APIKey, nil)
	if err != nil {
		return nil, err
	}
	service, err := geoapi.New(cfg.APIURL, func(o *geoapi.Options) { o.Logger = logger })
	if err != nil {
		return nil, err
	}
	return predictor.New(cfg, predictor.Deps{
		Objects:    objects,
		Ledger:     ledger.New(ddb, cfg.TableName),
		Jobs:       jobs.New(ddb, cfg.TableName),
		Service:    service,
		Keys:       keys,
		Pacer:      pace,
		Logger:     logger,
		Metrics:    out,
		Visibility: vis,
	})
}

// newPacer builds the pacer GEO_PACING names with predictor.NewPacer, on
// the instance's clock; optFns tune a shared one further.
func newPacer(vars map[string]string, ddb *dynamodb.Client, clock func() time.Time, optFns ...func(*pacer.Options)) (predictor.Pacer, error) {
	cfg, err := predictor.LoadConfig(func(k string) string { return vars[k] })
	if err != nil {
		return nil, err
	}
	return predictor.NewPacer(cfg, ddb, slog.New(slog.DiscardHandler), append([]func(*pacer.Options){func(o *pacer.Options) { o.Clock = clock }}, optFns...)...)
}

// put uploads body and returns the object as its notification describes it.
func (e *localEnv) put(ctx context.Context, key string, body []byte) (s3event.ObjectCreated, error) {
	out, err := e.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucketName), Key: aws.String(key), Body: bytes.NewReader(body),
	})
	if err != nil {
		return s3event.ObjectCreated{}, fmt.Errorf("put object %s: %w", key, err)
	}
	return s3event.ObjectCreated{Bucket: bucketName, Key: key, Size: int64(len(body)),
		ETag: aws.ToString(out.ETag), VersionID: aws.ToString(out.VersionId), Time: time.Now()}, nil
}

func refOf(obj s3event.ObjectCreated) ledger.ObjectRef {
	return ledger.ObjectRef{Bucket: obj.Bucket, Key: obj.Key, VersionID: obj.VersionID, ETag: strings.Trim(obj.ETag, `"`)}
}

// sqsEvent is the SQS event Lambda would deliver for obj: the S3
// notification as one message, shaped by the local queue.
func sqsEvent(ctx context.Context, q *sqsqueue.Queue, objs ...s3event.ObjectCreated) ([]byte, []events.SQSMessage, error) {
	for _, obj := range objs {
		body, err := s3event.Body(obj)
		if err != nil {
			return nil, nil, err
		}
		q.Send(body)
	}
	msgs := q.Receive(ctx, len(objs), 0)
	if len(msgs) != len(objs) {
		return nil, nil, fmt.Errorf("local queue returned %d of %d messages", len(msgs), len(objs))
	}
	payload, err := json.Marshal(events.SQSEvent{Records: msgs})
	return payload, msgs, err
}

// batchFailures decodes a handler's SQS response.
func batchFailures(out []byte) ([]events.SQSBatchItemFailure, error) {
	var resp events.SQSEventResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, fmt.Errorf("decode batch response %q: %w", out, err)
	}
	return resp.BatchItemFailures, nil
}

// fakeJPEG returns a JPEG of exactly size bytes as a phone writes it (JFIF,
// an EXIF block with a GPS position and camera, XMP) whose scan is random
// entropy-coded data (every 0xFF stuffed, as in a real scan) ending in EOI:
// the pipeline strips its metadata and streams the scan as it would a
// photo's, the simulator only sniffs it, and random data makes every image
// (and its simulated answer) distinct.
func fakeJPEG(size int, seed uint64) []byte {
	seg := func(marker byte, payload []byte) []byte {
		return append([]byte{0xFF, marker, byte((len(payload) + 2) >> 8), byte(len(payload) + 2)}, payload...)
	}
	head := []byte{0xFF, 0xD8}
	head = append(head, seg(0xE0, []byte("JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"))...)
	head = append(head, seg(0xE1, append([]byte("Exif\x00\x00"), exiftest.Harbour().Bytes()...))...)
	head = append(head, seg(0xE1, []byte("http://ns.adobe.com/xap/1.0/\x00<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"/>"))...)
	head = append(head, seg(0xDA, []byte{1, 1, 0, 0, 63, 0})...)
	b := make([]byte, size)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	for i := 0; i+8 <= size; i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for i := len(head); i < size-2; i++ {
		if b[i] == 0xFF {
			b[i+1] = 0x00 // stuffed
		}
	}
	copy(b, head)
	b[size-2], b[size-1] = 0xFF, 0xD9
	return b
}

// countingWriter counts bytes written and discards them: the log volume
// CloudWatch Logs would ingest.
type countingWriter struct{ n atomic.Int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n.Add(int64(len(p)))
	return len(p), nil
}

// moduleRoot walks up from the working directory to the directory of go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// countingVisibility counts the visibility changes the handlers make: each
// is an SQS request (ChangeMessageVisibility).
type countingVisibility struct {
	next predictor.VisibilityChanger
	n    *atomic.Int64
}

func (c countingVisibility) ChangeVisibility(ctx context.Context, msg events.SQSMessage, d time.Duration) error {
	c.n.Add(1)
	return c.next.ChangeVisibility(ctx, msg, d)
}
