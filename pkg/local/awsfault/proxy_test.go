package awsfault_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/geolocate-aws/geolocate/pkg/local/awsfault"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/secretkey/secretkeytest"
)

func TestMain(m *testing.M) { awspartstest.Main(m) }

// clientConfig reaches endpoint with one attempt, so each test sees the
// fault itself rather than the SDK's retries of it.
func clientConfig(endpoint string) aws.Config {
	return aws.Config{
		Region:           "us-east-1",
		Credentials:      credentials.NewStaticCredentialsProvider("AKIDFAKEFAKEFAKE", "fake-secret", ""),
		BaseEndpoint:     aws.String(endpoint),
		RetryMaxAttempts: 1,
	}
}

func start(t *testing.T, svc awsfault.Service, backend string) *awsfault.Proxy {
	t.Helper()
	p, err := awsfault.Start(svc, backend, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// apiError returns the service's error code and HTTP status.
func apiError(t *testing.T, err error) (string, int) {
	t.Helper()
	var apiErr smithy.APIError
	var respErr *smithyhttp.ResponseError
	if !errors.As(err, &apiErr) || !errors.As(err, &respErr) {
		t.Fatalf("error %v is not an API error with a response", err)
	}
	return apiErr.ErrorCode(), respErr.HTTPStatusCode()
}

type table struct {
	direct, viaProxy *dynamodb.Client
	name             string
	proxy            *awsfault.Proxy
}

func newTable(t *testing.T) table {
	direct, name := awspartstest.DynamoDB(t)
	p := start(t, awsfault.DynamoDB, aws.ToString(direct.Options().BaseEndpoint))
	return table{direct: direct, viaProxy: dynamodb.NewFromConfig(clientConfig(p.URL())), name: name, proxy: p}
}

func (tb table) put(id string) error {
	_, err := tb.viaProxy.PutItem(context.Background(), &dynamodb.PutItemInput{
		TableName: aws.String(tb.name),
		Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: id}, "sk": &types.AttributeValueMemberS{Value: "v"},
		},
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	})
	return err
}

// stored reports whether the backend holds the item, read without the proxy.
func (tb table) stored(t *testing.T, id string) bool {
	t.Helper()
	out, err := tb.direct.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(tb.name), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: id}, "sk": &types.AttributeValueMemberS{Value: "v"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item != nil
}

func TestDynamoDBErrorsAreTheServiceErrors(t *testing.T) {
	tb := newTable(t)
	for _, c := range []struct {
		fault  awsfault.Fault
		status int
		typed  func(error) bool
	}{
		{awsfault.DynamoDBThrottling, 400, func(err error) bool { var e *types.ThrottlingException; return errors.As(err, &e) }},
		{awsfault.DynamoDBThroughputExceeded, 400, func(err error) bool {
			var e *types.ProvisionedThroughputExceededException
			return errors.As(err, &e)
		}},
		{awsfault.DynamoDBTransactionConflict, 400, func(err error) bool {
			var e *types.TransactionConflictException
			return errors.As(err, &e)
		}},
		{awsfault.DynamoDBInternalError, 500, func(err error) bool { var e *types.InternalServerError; return errors.As(err, &e) }},
	} {
		t.Run(c.fault.Code, func(t *testing.T) {
			tb.proxy.SetRules(awsfault.At(1, c.fault).On("PutItem"))
			id := "err-" + c.fault.Code
			err := tb.put(id)
			if code, status := apiError(t, err); code != c.fault.Code || status != c.status || !c.typed(err) {
				t.Errorf("error %v: code %s status %d; want the SDK's typed %s with %d", err, code, status, c.fault.Code, c.status)
			}
			if tb.stored(t, id) {
				t.Error("the refused write reached the table")
			}
		})
	}
}

func TestAnswerLostAppliesTheWrite(t *testing.T) {
	tb := newTable(t)
	tb.proxy.SetRules(awsfault.At(1, awsfault.LostAnswer).On("PutItem"))
	err := tb.put("lost")
	if err == nil {
		t.Fatal("the client got an answer")
	}
	if !tb.stored(t, "lost") {
		t.Fatal("the write whose answer was lost is not in the table")
	}
	// A blind retry of the conditional write now fails its condition: the
	// hazard the ledger's owner tokens exist for.
	tb.proxy.SetRules()
	var failed *types.ConditionalCheckFailedException
	if err := tb.put("lost"); !errors.As(err, &failed) {
		t.Errorf("retry of an applied conditional write: %v; want ConditionalCheckFailedException", err)
	}
	if s := tb.proxy.Stats(); s.Injected["PutItem: answer lost"] != 1 || s.Requests["PutItem"] != 2 {
		t.Errorf("stats %+v", s)
	}
}

func TestResetBeforeTheBackendAppliesNothing(t *testing.T) {
	tb := newTable(t)
	tb.proxy.SetRules(awsfault.At(1, awsfault.ResetBeforeBackend))
	if err := tb.put("reset"); err == nil {
		t.Fatal("the client got an answer")
	}
	tb.proxy.SetRules()
	if tb.stored(t, "reset") {
		t.Error("a request reset before the backend was applied")
	}
	if err := tb.put("reset"); err != nil {
		t.Errorf("after the fault: %v", err)
	}
}

func TestRulesMatchOperationsAndRates(t *testing.T) {
	tb := newTable(t)
	tb.proxy.SetRules(awsfault.At(0.5, awsfault.DynamoDBThrottling).On("PutItem"))
	throttled := 0
	for i := range 200 {
		if err := tb.put(fmt.Sprintf("rate-%d", i)); err != nil {
			throttled++
		}
	}
	if throttled < 70 || throttled > 130 {
		t.Errorf("%d of 200 writes throttled at rate 0.5", throttled)
	}
	// GetItem is not named by the rule.
	if tb.stored(t, "none") {
		t.Fatal("unexpected item")
	}
	if _, err := tb.viaProxy.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(tb.name),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "x"}, "sk": &types.AttributeValueMemberS{Value: "v"},
		},
	}); err != nil {
		t.Errorf("GetItem through a PutItem rule: %v", err)
	}
	if s := tb.proxy.Stats(); s.Injected["PutItem: ThrottlingException"] != throttled || s.Requests["GetItem"] != 1 {
		t.Errorf("stats %+v, %d throttled", s, throttled)
	}
}

func s3Proxy(t *testing.T) (*s3.Client, *awsfault.Proxy, string) {
	direct, bucket := awspartstest.S3(t)
	p := start(t, awsfault.S3, aws.ToString(direct.Options().BaseEndpoint))
	c := s3.NewFromConfig(clientConfig(p.URL()), func(o *s3.Options) { o.UsePathStyle = true })
	return c, p, bucket
}

func TestS3SlowDownAndMidBodyReset(t *testing.T) {
	c, p, bucket := s3Proxy(t)
	ctx := context.Background()
	body := bytes.Repeat([]byte("0123456789"), 10_000)
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("k/photo 1.jpg"), Body: bytes.NewReader(body)}); err != nil {
		t.Fatalf("put through a transparent proxy: %v", err)
	}
	get := func() ([]byte, error) {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("k/photo 1.jpg")})
		if err != nil {
			return nil, err
		}
		defer out.Body.Close()
		return io.ReadAll(out.Body)
	}
	if got, err := get(); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("get through a transparent proxy: %d bytes, %v", len(got), err)
	}

	p.SetRules(awsfault.At(1, awsfault.S3SlowDown).On("GetObject", "HeadObject"))
	_, err := get()
	if code, status := apiError(t, err); code != "SlowDown" || status != 503 {
		t.Errorf("GetObject: %s %d; want SlowDown 503", code, status)
	}
	_, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: aws.String("k/photo 1.jpg")})
	if _, status := apiError(t, err); status != 503 {
		t.Errorf("HeadObject: status %d; want 503", status)
	}

	p.SetRules(awsfault.At(1, awsfault.MidBodyReset).On("GetObject"))
	got, err := get()
	if err == nil || len(got) >= len(body) {
		t.Errorf("mid-body reset: read %d of %d bytes, error %v; want a short read and an error", len(got), len(body), err)
	}
	p.SetRules()
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: aws.String("k/photo 1.jpg")})
	if err != nil || aws.ToInt64(head.ContentLength) != int64(len(body)) {
		t.Errorf("HeadObject after the faults: %v, length %d", err, aws.ToInt64(head.ContentLength))
	}
}

func TestSecretsManagerThrottling(t *testing.T) {
	fake := secretkeytest.New("geolocate/key", "geo_test_fake_key_1")
	backend := httptest.NewServer(fake)
	t.Cleanup(backend.Close)
	p := start(t, awsfault.SecretsManager, backend.URL)
	c := secretsmanager.NewFromConfig(clientConfig(p.URL()))
	ctx := context.Background()
	in := &secretsmanager.GetSecretValueInput{SecretId: aws.String("geolocate/key")}
	out, err := c.GetSecretValue(ctx, in)
	if err != nil || aws.ToString(out.SecretString) != "geo_test_fake_key_1" {
		t.Fatalf("GetSecretValue through a transparent proxy: %v", err)
	}
	p.SetRules(awsfault.At(1, awsfault.SecretsManagerThrottling))
	_, err = c.GetSecretValue(ctx, in)
	if code, status := apiError(t, err); code != "ThrottlingException" || status != 400 {
		t.Errorf("throttled: %s %d", code, status)
	}
	p.SetRules(awsfault.At(1, awsfault.Latency(150*time.Millisecond)))
	t0 := time.Now()
	if _, err := c.GetSecretValue(ctx, in); err != nil || time.Since(t0) < 150*time.Millisecond {
		t.Errorf("delayed read: %v after %v", err, time.Since(t0))
	}
}

// TestTransactionCanceledIsDynamoDBs: a cancelled TransactWriteItems comes
// back as the SDK's typed TransactionCanceledException with its reasons,
// one per item, in CancellationReasons and in the message, exactly as
// DynamoDB Local answers a real cancellation; nothing reaches the table.
func TestTransactionCanceledIsDynamoDBs(t *testing.T) {
	tb := newTable(t)
	ctx := context.Background()
	write := func(id string, cond *string) error {
		_, err := tb.viaProxy.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Put: &types.Put{
			TableName: aws.String(tb.name), ConditionExpression: cond,
			Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: id}, "sk": &types.AttributeValueMemberS{Value: "v"}},
		}}}})
		return err
	}
	reasons := func(err error) ([]string, string) {
		var tce *types.TransactionCanceledException
		if !errors.As(err, &tce) {
			t.Fatalf("error %v is not a TransactionCanceledException", err)
		}
		var codes []string
		for _, r := range tce.CancellationReasons {
			codes = append(codes, aws.ToString(r.Code))
		}
		return codes, aws.ToString(tce.Message)
	}
	// The reference: a real cancellation by DynamoDB Local.
	if err := write("real", nil); err != nil {
		t.Fatal(err)
	}
	realCodes, realMsg := reasons(write("real", aws.String("attribute_not_exists(pk)")))
	injected, injectedMsg := reasons(func() error {
		tb.proxy.SetRules(awsfault.At(1, awsfault.DynamoDBTransactionCanceled(awsfault.ReasonConditionalCheckFailed)).On("TransactWriteItems"))
		defer tb.proxy.SetRules()
		return write("fake", nil)
	}())
	if fmt.Sprint(injected) != fmt.Sprint(realCodes) || injectedMsg != realMsg {
		t.Errorf("injected cancellation %v %q, DynamoDB Local's %v %q", injected, injectedMsg, realCodes, realMsg)
	}
	for _, f := range []awsfault.Fault{awsfault.DynamoDBTransactionConflictCancel, awsfault.DynamoDBThrottlingCancel,
		awsfault.DynamoDBTransactionCanceled(awsfault.ReasonNone, awsfault.ReasonProvisionedThroughputExceeded)} {
		t.Run(f.Name(), func(t *testing.T) {
			tb.proxy.SetRules(awsfault.At(1, f).On("TransactWriteItems"))
			id := "cancel-" + f.Name()
			err := write(id, nil)
			if code, status := apiError(t, err); code != "TransactionCanceledException" || status != 400 {
				t.Errorf("code %s status %d", code, status)
			}
			if codes, msg := reasons(err); fmt.Sprint(codes) != fmt.Sprint(f.Reasons) || !strings.HasSuffix(msg, "["+strings.Join(f.Reasons, ", ")+"]") {
				t.Errorf("reasons %v in %q, want %v", codes, msg, f.Reasons)
			}
			if tb.stored(t, id) {
				t.Error("a cancelled transaction reached the table")
			}
			if n := tb.proxy.Stats().Injected["TransactWriteItems: "+f.Name()]; n != 1 {
				t.Errorf("counted %d injections as %q", n, f.Name())
			}
		})
	}
}
