package predictor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
)

// Failure semantics as Lambda, S3 and a real service have them: each test
// here failed on the first version of the predictor.

// useUnversionedBucket points e at a new bucket with versioning off, S3's
// default and what an existing bucket (existingBucketName) may well be.
func useUnversionedBucket(e *testEnv) {
	e.t.Helper()
	bucket := fmt.Sprintf("unversioned-%d", time.Now().UnixNano())
	if _, err := e.s3.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		e.t.Fatal(err)
	}
	e.bucket = bucket
	e.cfg.BucketName = bucket
	e.h = e.newHandler(e.cfg)
}

func (e *testEnv) deleteCurrent(key string) {
	e.t.Helper()
	if _, err := e.s3.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(e.bucket), Key: aws.String(key)}); err != nil {
		e.t.Fatal(err)
	}
}

func TestUnversionedDeletedThenReuploadedIsGeolocated(t *testing.T) {
	e := newTestEnv(t, nil)
	useUnversionedBucket(e)
	image := testJPEG(t, 301)

	first := e.put("holiday.jpg", image)
	if first.VersionID != "" && first.VersionID != "null" {
		t.Fatalf("the unversioned bucket gave version id %q", first.VersionID)
	}
	e.deleteCurrent("holiday.jpg")
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", first))); len(failed) != 0 {
		t.Fatalf("the event of a deleted object was returned for retry: %v", failed)
	}
	if rec := e.record(first); rec == nil || rec.Status != ledger.StatusRejected || rec.ErrorCode != ReasonObjectNotFound || rec.Final() {
		t.Fatalf("record after the delete = %+v, want rejected object_not_found, not final", rec)
	}

	again := e.put("holiday.jpg", image) // the same bytes: the same key and ETag
	if again.ETag != first.ETag {
		t.Fatalf("ETag changed: %s -> %s", first.ETag, again.ETag)
	}
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m2", again))); len(failed) != 0 {
		t.Fatalf("re-upload returned for retry: %v", failed)
	}
	if rec := e.record(again); rec.Status != ledger.StatusSucceeded {
		t.Fatalf("re-upload record = %+v, want succeeded", rec)
	}
	if n := len(e.predictCalls()); n != 1 {
		t.Errorf("%d calls, want 1", n)
	}
}

func TestUnversionedOverwrittenABAIsGeolocated(t *testing.T) {
	e := newTestEnv(t, nil)
	useUnversionedBucket(e)
	a, b := testJPEG(t, 302), testJPEG(t, 303)

	upA := e.put("street.jpg", a)
	upB := e.put("street.jpg", b) // overwritten before A's event is processed
	if failed := e.invokeSQS(sqsBatch(uploadMessage("a1", upA), uploadMessage("b", upB))); len(failed) != 0 {
		t.Fatalf("failures %v", failed)
	}
	upA2 := e.put("street.jpg", a) // A again, same ETag as the first A
	if failed := e.invokeSQS(sqsBatch(uploadMessage("a2", upA2))); len(failed) != 0 {
		t.Fatalf("failures %v", failed)
	}
	for name, u := range map[string]upload{"A": upA2, "B": upB} {
		if rec := e.record(u); rec.Status != ledger.StatusSucceeded {
			t.Errorf("%s: record %+v, want succeeded", name, rec)
		}
	}
	if n := len(e.predictCalls()); n != 2 {
		t.Errorf("%d calls, want 2 (B, then A once)", n)
	}
	// A redelivery of the last event is a no-op.
	e.invokeSQS(sqsBatch(uploadMessage("a2", upA2)))
	if n := len(e.predictCalls()); n != 2 {
		t.Errorf("%d calls after a redelivery, want 2", n)
	}
}

func TestVersionedDeletedVersionIsFinal(t *testing.T) {
	e := newTestEnv(t, nil)
	u := e.put("gone.jpg", testJPEG(t, 304))
	if u.VersionID == "" {
		t.Fatal("the versioned test bucket gave no version id")
	}
	e.deleteVersion(u)
	e.invokeSQS(sqsBatch(uploadMessage("m1", u)))
	if rec := e.record(u); rec.Status != ledger.StatusRejected || rec.ErrorCode != ReasonObjectNotFound || !rec.Final() {
		t.Fatalf("record = %+v, want a final rejection: S3 never reuses a version id", rec)
	}
}

func TestGatewayErrorAfterChargeIsOutcomeUnknownAndNeverRetried(t *testing.T) {
	e := newTestEnv(t, nil)
	e.sim.SetFaults(geosim.Faults{GatewayErrorAfterChargeRate: 1})
	u := e.put("gateway.jpg", testJPEG(t, 305))
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", u))); len(failed) != 0 {
		t.Fatalf("a maybe-charged call was returned for retry: %v", failed)
	}
	rec := e.record(u)
	if rec.Status != ledger.StatusFailed || rec.ErrorCode != CodeOutcomeUnknown || !rec.Final() {
		t.Fatalf("record = %+v, want failed outcome_unknown, final", rec)
	}
	if n := len(e.predictCalls()); n != 1 {
		t.Fatalf("%d uploads of one object version, want 1 (a 502/504 after the body is never retried)", n)
	}
	e.sim.ResetFaults()
	e.invokeSQS(sqsBatch(uploadMessage("m1", u)))
	if n := len(e.predictCalls()); n != 1 {
		t.Errorf("%d uploads after a redelivery, want 1", n)
	}
	if c := e.sim.Charged(geosim.DefaultOrg); c != 1 {
		t.Errorf("charged %d, want 1", c)
	}
}

// invokeWithin runs the handler with a Lambda deadline d from now and
// returns when it returned.
func (e *testEnv) invokeWithin(d time.Duration, payload []byte) (events.SQSEventResponse, time.Time, time.Time) {
	e.t.Helper()
	var batch events.SQSEvent
	if err := json.Unmarshal(payload, &batch); err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	deadline, _ := ctx.Deadline()
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: "req-" + e.t.Name()})
	out, err := e.h.Handle(ctx, batch)
	if err != nil {
		e.t.Fatalf("handler error: %v", err)
	}
	return out, time.Now(), deadline
}

func TestSlowServiceIsCutOffBeforeTheDeadlineAndRecorded(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.FinishReserve = 2 * time.Second })
	e.h = e.newHandler(e.cfg, func(o *Options) { o.Parallelism = 1; o.MinCallTime = 500 * time.Millisecond })
	e.sim.SetFaults(geosim.Faults{Latency: 10 * time.Second}) // far slower than the time left
	slow := e.put("slow.jpg", testJPEG(t, 306))
	later := e.put("later.jpg", testJPEG(t, 307))

	out, returned, deadline := e.invokeWithin(4*time.Second, sqsBatch(uploadMessage("m1", slow), uploadMessage("m2", later)))
	if !returned.Before(deadline.Add(-responseMargin / 2)) {
		t.Fatalf("handler returned %s after the deadline margin", returned.Sub(deadline.Add(-responseMargin)))
	}
	rec := e.record(slow)
	if rec == nil || !rec.Final() || rec.ErrorCode != CodeOutcomeUnknown {
		t.Fatalf("record of the cut-off call = %+v, want final outcome_unknown (the whole image was sent)", rec)
	}
	if !rec.UpdatedAt.Before(deadline) {
		t.Errorf("recorded at %s, after the deadline %s", rec.UpdatedAt, deadline)
	}
	// The second object could not get MinCallTime: untouched and returned.
	resp := out
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m2" {
		t.Fatalf("failures = %+v, want [m2]", resp.BatchItemFailures)
	}
	if rec := e.record(later); rec != nil {
		t.Errorf("the object with no time left was touched: %+v", rec)
	}
	if n := len(e.predictCalls()); n != 1 {
		t.Errorf("%d calls, want 1", n)
	}
}

// front answers the predictions itself with status and body, and passes
// everything else to the simulator.
func (e *testEnv) frontService(status int, body string) *atomic.Int32 {
	e.t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != geosim.PathPredict {
			e.sim.ServeHTTP(w, r)
			return
		}
		n.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	e.t.Cleanup(srv.Close)
	e.cfg.APIURL = srv.URL
	e.h = e.newHandler(e.cfg)
	return &n
}

func TestTopNValidationNamingTheModelIsNotARetirement(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.ModelID = "geo-v2"; c.TopN = 5 })
	calls := e.frontService(http.StatusUnprocessableEntity,
		`{"message_code":"invalid_top_n","message":"top_n 5 is not allowed for model geo-v2"}`)
	u := e.put("topn.jpg", testJPEG(t, 308))
	e.invokeSQS(sqsBatch(uploadMessage("m1", u)))
	if rec := e.record(u); rec.Status != ledger.StatusFailed || rec.ErrorCode != CodeValidation {
		t.Fatalf("record = %+v, want failed validation_error", rec)
	}
	if calls.Load() != 1 {
		t.Errorf("%d calls, want 1: no fallback call for a 422 that is not a retirement", calls.Load())
	}
	if e.h.modelRetired.Load() {
		t.Error("the instance switched to the default model on a top_n error")
	}
	if e.metricSum(metricModelFallbacks) != 0 {
		t.Error("a fallback was counted")
	}
}

func TestServiceRefusingTheSizeIsRejectedTooLarge(t *testing.T) {
	e := newTestEnv(t, nil)
	e.frontService(http.StatusRequestEntityTooLarge, `{"message_code":"file_too_large","message":"image exceeds 10 MB"}`)
	u := e.put("big.jpg", testJPEG(t, 309))
	e.invokeSQS(sqsBatch(uploadMessage("m1", u)))
	if rec := e.record(u); rec.Status != ledger.StatusRejected || rec.ErrorCode != ReasonTooLarge {
		t.Fatalf("record = %+v, want rejected too_large", rec)
	}
	if e.metricReason(metricImagesFailed, CodeRejectedByService) != 0 {
		t.Error("counted as a generic failure")
	}
}

func TestSizeLimitIsConfigurable(t *testing.T) {
	img := testJPEG(t, 310)
	e := newTestEnv(t, func(c *Config) { c.MaxImageBytes = int64(len(img)) - 1; c.Oversize = OversizeReject })
	u := e.put("limit.jpg", img)
	e.invokeSQS(sqsBatch(uploadMessage("m1", u)))
	if rec := e.record(u); rec.Status != ledger.StatusRejected || rec.ErrorCode != ReasonTooLarge {
		t.Fatalf("record = %+v, want rejected too_large", rec)
	}
	if n := len(e.predictCalls()); n != 0 {
		t.Errorf("%d calls, want 0", n)
	}
}

// flakyDynamoDB fails the first failures result writes (PutItem, which
// Complete uses): with throttling before the write, or, when lostAnswer,
// after the write landed (the answer was lost).
type flakyDynamoDB struct {
	ledger.DynamoDBAPI
	failures   int32
	lostAnswer bool
	n          atomic.Int32
}

func (f *flakyDynamoDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if f.n.Add(1) > f.failures {
		return f.DynamoDBAPI.PutItem(ctx, in, optFns...)
	}
	if f.lostAnswer {
		if _, err := f.DynamoDBAPI.PutItem(ctx, in, optFns...); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("read response: %w", errors.New("connection reset by peer"))
	}
	return nil, &types.ProvisionedThroughputExceededException{Message: aws.String("throughput exceeded")}
}

func TestResultSurvivesTransientDynamoDBFailures(t *testing.T) {
	for _, lost := range []bool{false, true} {
		t.Run(fmt.Sprintf("answer_lost=%t", lost), func(t *testing.T) {
			e := newTestEnv(t, nil)
			flaky := &flakyDynamoDB{DynamoDBAPI: e.ddb, failures: 4, lostAnswer: lost}
			h, err := New(e.cfg, Deps{Objects: e.objects, Ledger: ledger.New(flaky, e.cfg.TableName),
				Service: e.h.deps.Service, Keys: e.keys, Logger: e.h.deps.Logger, Metrics: e.metrics})
			if err != nil {
				t.Fatal(err)
			}
			e.h = h
			u := e.put("flaky.jpg", testJPEG(t, 311))
			if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", u))); len(failed) != 0 {
				t.Fatalf("failures %v", failed)
			}
			if rec := e.record(u); rec.Status != ledger.StatusSucceeded {
				t.Fatalf("record = %+v, want succeeded", rec)
			}
			if got := flaky.n.Load(); got != 5 {
				t.Errorf("%d result writes, want 5 (4 failed, then one)", got)
			}
			if e.metricSum(metricImagesSucceeded) != 1 || e.metricSum(metricImagesFailed) != 0 {
				t.Errorf("ImagesSucceeded %v ImagesFailed %v, want 1 and 0",
					e.metricSum(metricImagesSucceeded), e.metricSum(metricImagesFailed))
			}
		})
	}
}

func TestSuccessIsNotCountedUntilRecorded(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.FinishReserve = 2 * time.Second })
	flaky := &flakyDynamoDB{DynamoDBAPI: e.ddb, failures: 1 << 30}
	h, err := New(e.cfg, Deps{Objects: e.objects, Ledger: ledger.New(flaky, e.cfg.TableName),
		Service: e.h.deps.Service, Keys: e.keys, Logger: e.h.deps.Logger, Metrics: e.metrics},
		func(o *Options) { o.MinCallTime = 100 * time.Millisecond })
	if err != nil {
		t.Fatal(err)
	}
	e.h = h
	u := e.put("never.jpg", testJPEG(t, 312))
	e.invokeWithin(3*time.Second, sqsBatch(uploadMessage("m1", u)))
	if got := e.metricSum(metricImagesSucceeded); got != 0 {
		t.Errorf("ImagesSucceeded = %v for a result that was never recorded", got)
	}
	if got := e.metricSum(metricCreditsConsumed); got != 1 {
		t.Errorf("CreditsConsumed = %v, want 1: the credit was spent", got)
	}
}

// sqsBatchReceived is sqsBatch with every message at its receive count.
func sqsBatchReceived(count int, msgs ...sqsMessage) []byte {
	var ev events.SQSEvent
	_ = json.Unmarshal(sqsBatch(msgs...), &ev)
	for i := range ev.Records {
		ev.Records[i].Attributes["ApproximateReceiveCount"] = fmt.Sprint(count)
	}
	b, _ := json.Marshal(ev)
	return b
}

func TestRetryableStatesAreWaitingAndDeadLettersSaySo(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.MaxReceiveCount = 3 })
	// A new stack's secret holds a random placeholder until the operator
	// puts the key in.
	e.keys = newFakeKeys(t, "Placeholder0generated0at0deploy")
	e.h = e.newHandler(e.cfg)
	u := e.put("placeholder.jpg", testJPEG(t, 313))

	if failed := e.invokeSQS(sqsBatchReceived(1, uploadMessage("m1", u))); len(failed) != 1 {
		t.Fatalf("failures %v, want the message returned", failed)
	}
	rec := e.record(u)
	if rec == nil || rec.Status != ledger.StatusWaiting || rec.ErrorCode != retryKeyUnavailable || rec.DeadLetter {
		t.Fatalf("record = %+v, want waiting key_unavailable, not dead-lettered", rec)
	}
	if !strings.Contains(rec.ErrorMessage, "placeholder") {
		t.Errorf("error message %q does not tell the operator what to do", rec.ErrorMessage)
	}

	e.invokeSQS(sqsBatchReceived(3, uploadMessage("m1", u))) // the last receive
	if rec := e.record(u); rec.Status != ledger.StatusWaiting || !rec.DeadLetter {
		t.Fatalf("record = %+v, want waiting and dead_letter", rec)
	}
	if e.metricReason(metricDeadLettered, retryKeyUnavailable) != 1 {
		t.Error("ImagesDeadLettered not counted")
	}
	if n := len(e.predictCalls()); n != 0 {
		t.Errorf("%d calls with the placeholder key, want 0", n)
	}

	// The operator puts the key in; the next read of the secret (here a
	// new instance) takes it, and the redriven message is processed.
	e.keys = newFakeKeys(t, fakeKey)
	e.h = e.newHandler(e.cfg)
	e.invokeSQS(sqsBatchReceived(1, uploadMessage("m1", u)))
	if rec := e.record(u); rec.Status != ledger.StatusSucceeded || rec.DeadLetter {
		t.Fatalf("after the redrive: %+v, want succeeded without dead_letter", rec)
	}
}

func TestDeadLetterWithoutAClaimCreatesAWaitingRecord(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.MaxReceiveCount = 2 })
	e.h = e.newHandler(e.cfg, func(o *Options) { o.MinCallTime = time.Hour }) // never time to call
	u := e.put("late.jpg", testJPEG(t, 314))
	e.invokeSQS(sqsBatchReceived(2, uploadMessage("m1", u)))
	rec := e.record(u)
	if rec == nil || rec.Status != ledger.StatusWaiting || !rec.DeadLetter || rec.ErrorCode != retryDeadline {
		t.Fatalf("record = %+v, want waiting, dead_letter, deadline_near", rec)
	}
}
