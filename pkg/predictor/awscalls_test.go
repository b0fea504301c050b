package predictor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awscalls"

	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
)

// predictorCalls records the calls the predictor's code makes here on real
// SDK clients: SQS (SQSVisibility), which the soak does not use, and the
// S3 and DynamoDB calls of paths the soak does not take.
// harness_test.go's TestMain checks them against the predictor's golden
// list, which pkg/local/soak shares.
var predictorCalls awscalls.Recorder

// recordTo adds predictorCalls to a client's middleware.
func recordTo(stack *[]func(*middleware.Stack) error) {
	*stack = append(slices.Clip(*stack), predictorCalls.Register)
}

// fakeSQS answers the AWS JSON 1.0 protocol of SQS for the operations
// SQSVisibility uses, and refuses any other, as SQS refuses an action the
// role may not take.
type fakeSQS struct {
	mu       sync.Mutex
	requests []fakeSQSRequest
}

type fakeSQSRequest struct {
	Target string
	Body   map[string]any
}

const fakeQueueURL = "https://sqs.us-east-1.amazonaws.com/123456789012/geolocate-uploads"

func (f *fakeSQS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	target := r.Header.Get("X-Amz-Target")
	f.mu.Lock()
	f.requests = append(f.requests, fakeSQSRequest{Target: target, Body: body})
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	switch target {
	case "AmazonSQS.GetQueueUrl":
		if body["QueueName"] != "geolocate-uploads" || body["QueueOwnerAWSAccountId"] != "123456789012" {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}`)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"QueueUrl": fakeQueueURL})
	case "AmazonSQS.ChangeMessageVisibility":
		if body["QueueUrl"] != fakeQueueURL {
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}`)
			return
		}
		io.WriteString(w, `{}`)
	default:
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"__type":"com.amazonaws.sqs#InvalidAction","message":"not served by the fake"}`)
	}
}

// TestBudgetDeferralCallsSQS defers a message on an exhausted budget
// through the handler and SQSVisibility on a real SQS client, so the calls
// the function makes on SQS are recorded as the SDK makes them.
func TestBudgetDeferralCallsSQS(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.DailyBudget = 1 })
	clock := simclock.New(time.Date(2031, 3, 4, 0, 30, 0, 0, time.UTC))
	if ok, err := e.store.ReserveCredits(t.Context(), ledger.Day(clock.Now()), 1, 1); err != nil || !ok {
		t.Fatalf("fill the day's budget: %v %v", ok, err)
	}
	fake := &fakeSQS{}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	client := sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  aws.AnonymousCredentials{},
		APIOptions:   []func(*middleware.Stack) error{predictorCalls.Register},
	})
	h := e.handlerWith(NewSQSVisibility(client), ledger.New(e.ddb, e.cfg.TableName), clock.Now)

	var ev events.SQSEvent
	if err := json.Unmarshal(sqsBatch(uploadMessage("m1", e.put("deferred.jpg", testJPEG(t, 5)))), &ev); err != nil {
		t.Fatal(err)
	}
	if failed := invokeBatch(t, h, ev.Records); len(failed) != 1 {
		t.Fatalf("failures %v, want the deferred message returned", failed)
	}

	var targets []string
	for _, r := range fake.requests {
		targets = append(targets, strings.TrimPrefix(r.Target, "AmazonSQS."))
	}
	if strings.Join(targets, " ") != "GetQueueUrl ChangeMessageVisibility" {
		t.Fatalf("SQS requests %v, want GetQueueUrl then ChangeMessageVisibility", targets)
	}
	change := fake.requests[1].Body
	if change["ReceiptHandle"] != "handle-m1" {
		t.Errorf("ChangeMessageVisibility of %v, want the message's receipt handle", change["ReceiptHandle"])
	}
	if secs, _ := change["VisibilityTimeout"].(float64); secs < 11*3600 || secs > 12*3600 {
		t.Errorf("VisibilityTimeout %v s, want the 12-hour cap less the margin", change["VisibilityTimeout"])
	}
	for _, c := range predictorCalls.Calls() {
		if c.Service == "SQS" && c.Failed {
			t.Errorf("recorded a failed call: %+v", c)
		}
	}
}

// conditionWithoutItem drops the item DynamoDB returns with a failed
// condition, as a table that does not return it would: the ledger then
// reads the record (GetItem).
type conditionWithoutItem struct{ ledger.DynamoDBAPI }

func (c conditionWithoutItem) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	out, err := c.DynamoDBAPI.UpdateItem(ctx, in, optFns...)
	if ccf := (*types.ConditionalCheckFailedException)(nil); errors.As(err, &ccf) {
		ccf.Item = nil
	}
	return out, err
}

// TestPathsTheSoakDoesNotTakeCallAWS runs the handler on real S3 and
// DynamoDB clients for the calls the soak never makes: a HEAD for an
// EventBridge notification without the size, and the consistent read of
// the record when a failed claim does not return it (a redelivery).
func TestPathsTheSoakDoesNotTakeCallAWS(t *testing.T) {
	e := newTestEnv(t, nil)
	logger := newJSONLogger(e.logs, "debug")
	client, err := geoapi.New(e.cfg.APIURL, func(o *geoapi.Options) { o.Logger = logger })
	if err != nil {
		t.Fatal(err)
	}
	objects := s3.New(e.s3.Options(), func(o *s3.Options) { recordTo(&o.APIOptions) })
	ddb := dynamodb.New(e.ddb.Options(), func(o *dynamodb.Options) { recordTo(&o.APIOptions) })
	h, err := New(e.cfg, Deps{
		Objects: objects, Ledger: ledger.New(conditionWithoutItem{ddb}, e.cfg.TableName),
		Service: client, Keys: e.keys, Logger: logger, Metrics: e.metrics,
	})
	if err != nil {
		t.Fatal(err)
	}
	// Without the size, with and without the version id (HEAD of a
	// version, HEAD of the current object).
	u := e.put("no-size.jpg", testJPEG(t, 12))
	u2 := e.put("no-size-no-version.jpg", testJPEG(t, 13))
	body := fmt.Sprintf(`{"source":"aws.s3","detail-type":"Object Created","detail":{"bucket":{"name":%q},"object":{"key":%q,"etag":%q,"version-id":%q}}}`,
		u.Bucket, u.Key, u.ETag, u.VersionID)
	body2 := fmt.Sprintf(`{"source":"aws.s3","detail-type":"Object Created","detail":{"bucket":{"name":%q},"object":{"key":%q}}}`, u2.Bucket, u2.Key)
	var ev events.SQSEvent
	if err := json.Unmarshal(sqsBatch(sqsMessage{id: "m1", body: body}, sqsMessage{id: "m2", body: body2}), &ev); err != nil {
		t.Fatal(err)
	}
	before := len(predictorCalls.Calls())
	for i := range 2 { // the delivery, then a redelivery of the same message
		if failed := invokeBatch(t, h, ev.Records); len(failed) != 0 {
			t.Fatalf("delivery %d: failures %v", i+1, failed)
		}
	}
	if rec, err := e.store.Lookup(t.Context(), ledger.ObjectRef{Bucket: u.Bucket, Key: u.Key, VersionID: u.VersionID, ETag: u.ETag}); err != nil || rec == nil || rec.Status != ledger.StatusSucceeded {
		t.Fatalf("record after two deliveries: %+v, %v", rec, err)
	}
	if n := e.sim.CallCount(); n != 2 {
		t.Errorf("%d service calls, want 2", n)
	}
	var ops []string
	for _, c := range predictorCalls.Calls()[before:] {
		ops = append(ops, c.Service+" "+c.Operation)
	}
	for _, want := range []string{"S3 HeadObject", "S3 GetObject", "DynamoDB UpdateItem", "DynamoDB PutItem", "DynamoDB GetItem"} {
		if !slices.Contains(ops, want) {
			t.Errorf("no %s recorded (recorded %v)", want, ops)
		}
	}
}
