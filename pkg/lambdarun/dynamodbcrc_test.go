package lambdarun

import (
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/logging"
)

// sdkLogRecorder keeps the SDK's log lines.
type sdkLogRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *sdkLogRecorder) Logf(c logging.Classification, format string, v ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, string(c)+" "+fmt.Sprintf(format, v...))
}

func (r *sdkLogRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	lines := r.lines
	r.lines = nil
	return lines
}

// fakeDynamoDB answers every request with status and body, and with
// X-Amz-Crc32 set to crcHeader unless it is empty.
func fakeDynamoDB(t *testing.T, status int, body, crcHeader string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if crcHeader != "" {
			w.Header().Set("X-Amz-Crc32", crcHeader)
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func testDynamoDBClient(endpoint string, logger logging.Logger, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String(endpoint),
		Logger:       logger,
	}, optFns...)
}

func putItem(client *dynamodb.Client, t *testing.T) error {
	_, err := client.PutItem(t.Context(), &dynamodb.PutItemInput{
		TableName: aws.String("t"),
		Item:      map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}},
	})
	return err
}

func TestDynamoDBOptionsValidatesCRC32OnlyWhenSent(t *testing.T) {
	const conditionFailed = `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","Message":"The conditional request failed"}`
	withoutCRC := fakeDynamoDB(t, http.StatusBadRequest, conditionFailed, "")
	logs := &sdkLogRecorder{}

	// The SDK's own check, unchanged: the error response without a checksum
	// is compared against 0 and warns. If this stops warning, the SDK
	// validates only when sent (aws-sdk-go-v2 issue 3545) and
	// DynamoDBOptions can go.
	err := putItem(testDynamoDBClient(withoutCRC, logs), t)
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		t.Fatalf("err = %v, want ConditionalCheckFailedException", err)
	}
	if lines := logs.take(); len(lines) != 1 || !strings.Contains(lines[0], "did not match expected checksum, 0,") {
		t.Errorf("the SDK's own check: logs %q, want its one checksum warning", lines)
	}

	err = putItem(testDynamoDBClient(withoutCRC, logs, DynamoDBOptions), t)
	if !errors.As(err, &ccf) {
		t.Fatalf("err = %v, want ConditionalCheckFailedException", err)
	}
	if lines := logs.take(); len(lines) != 0 {
		t.Errorf("no X-Amz-Crc32: logs %q, want none", lines)
	}

	// With a header, the body is still checked: a right one passes quietly,
	// a wrong one is reported.
	right := strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(`{}`))), 10)
	if err := putItem(testDynamoDBClient(fakeDynamoDB(t, http.StatusOK, `{}`, right), logs, DynamoDBOptions), t); err != nil {
		t.Fatal(err)
	}
	if lines := logs.take(); len(lines) != 0 {
		t.Errorf("right X-Amz-Crc32: logs %q, want none", lines)
	}
	if err := putItem(testDynamoDBClient(fakeDynamoDB(t, http.StatusOK, `{}`, "12345"), logs, DynamoDBOptions), t); err != nil {
		t.Fatal(err)
	}
	if lines := logs.take(); len(lines) != 1 || !strings.Contains(lines[0], "does not match its X-Amz-Crc32 header 12345") {
		t.Errorf("wrong X-Amz-Crc32: logs %q, want the mismatch reported", lines)
	}
}
