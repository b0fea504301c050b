package lambdarun

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/smithy-go/logging"
)

func TestSDKLoggerWritesJSONAtTheSDKsLevel(t *testing.T) {
	var buf bytes.Buffer
	sdk := SDKLogger(NewLogger(&buf, "info"))
	sdk.Logf(logging.Debug, "Response has no supported checksum. Not validating response payload.")
	if buf.Len() != 0 {
		t.Errorf("an SDK debug line at LOG_LEVEL=info: %q", buf.String())
	}
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-sdk-1"})
	logging.WithContext(ctx, sdk).Logf(logging.Warn, "failed to close HTTP response body: %v", "boom")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("not one JSON line: %q", buf.String())
	}
	if line["level"] != "WARN" || line["msg"] != "failed to close HTTP response body: boom" ||
		line["source"] != "aws-sdk" || line["request_id"] != "req-sdk-1" {
		t.Errorf("line = %v", line)
	}

	buf.Reset()
	SDKLogger(NewLogger(&buf, "debug")).Logf(logging.Debug, "retrying %s", "PutItem")
	if !strings.Contains(buf.String(), `"level":"DEBUG"`) || !strings.Contains(buf.String(), `"msg":"retrying PutItem"`) {
		t.Errorf("an SDK debug line at LOG_LEVEL=debug: %q", buf.String())
	}
}
