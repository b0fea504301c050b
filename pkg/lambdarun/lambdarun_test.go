package lambdarun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

type echoEvent struct {
	Name string `json:"name"`
}

func TestInvokeFileDecodesLikeLambda(t *testing.T) {
	path := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(path, []byte(`{"name":"harbour.jpg"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var gotID string
	handler := func(ctx context.Context, ev echoEvent) (map[string]string, error) {
		lc, _ := lambdacontext.FromContext(ctx)
		gotID = lc.AwsRequestID
		if _, ok := ctx.Deadline(); !ok {
			t.Error("local invocation has no deadline")
		}
		return map[string]string{"saw": ev.Name}, nil
	}
	out, err := InvokeFile(context.Background(), handler, path, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var resp map[string]string
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	if resp["saw"] != "harbour.jpg" {
		t.Errorf("response = %v", resp)
	}
	if !strings.HasPrefix(gotID, "local-") {
		t.Errorf("request id = %q", gotID)
	}
}

func TestInvokeFileErrors(t *testing.T) {
	handler := func(ctx context.Context, ev echoEvent) error { return nil }
	if _, err := InvokeFile(context.Background(), handler, filepath.Join(t.TempDir(), "missing.json"), time.Second); err == nil {
		t.Error("missing file: want error")
	}
	path := filepath.Join(t.TempDir(), "bad.json")
	_ = os.WriteFile(path, []byte(`{not json`), 0o600)
	if _, err := InvokeFile(context.Background(), handler, path, time.Second); err == nil {
		t.Error("malformed event: want error")
	}
}

func TestLoggerAddsRequestID(t *testing.T) {
	var buf bytes.Buffer
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-123"})
	WithRequestID(ctx, NewLogger(&buf, "debug")).Debug("hello", "key", "a b.jpg")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("not JSON: %q", buf.String())
	}
	if line["request_id"] != "req-123" || line["key"] != "a b.jpg" || line["level"] != "DEBUG" {
		t.Errorf("line = %v", line)
	}
	buf.Reset()
	NewLogger(&buf, "warn").Info("dropped")
	if buf.Len() != 0 {
		t.Errorf("info logged at warn level: %q", buf.String())
	}
}

func TestInvokeAfterTheDeadlineTimesOut(t *testing.T) {
	slow := func(ctx context.Context, _ echoEvent) (string, error) {
		time.Sleep(150 * time.Millisecond) // ignores ctx, as a handler that overruns does
		return "late", nil
	}
	out, err := Invoke(context.Background(), slow, []byte(`{}`), 50*time.Millisecond)
	if !errors.Is(err, ErrTimedOut) || out != nil {
		t.Fatalf("out %q, err %v: want ErrTimedOut and no response", out, err)
	}
	fast := func(ctx context.Context, _ echoEvent) (string, error) { return "ok", nil }
	if out, err := Invoke(context.Background(), fast, []byte(`{}`), time.Second); err != nil || string(out) != `"ok"` {
		t.Fatalf("out %q, err %v", out, err)
	}
}
