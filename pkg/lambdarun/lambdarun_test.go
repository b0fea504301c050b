package lambdarun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
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

func TestInvokeDeadlineIsItsOwnTimeout(t *testing.T) {
	var deadline time.Time
	handler := func(ctx context.Context, _ echoEvent) (string, error) {
		deadline, _ = ctx.Deadline()
		return "ok", nil
	}
	// The caller stops in a second; the invocation still gets its minute.
	caller, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	if _, err := Invoke(caller, handler, []byte(`{}`), time.Minute); err != nil {
		t.Fatal(err)
	}
	if left := deadline.Sub(start); left < 50*time.Second {
		t.Errorf("the invocation's deadline was %s after its start, want its timeout (1m), not the caller's", left)
	}
}

func TestInvokeCancelledWithItsCaller(t *testing.T) {
	caller, cancel := context.WithCancel(context.Background())
	handler := func(ctx context.Context, _ echoEvent) (string, error) {
		cancel()
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(5 * time.Second):
			return "", errors.New("the caller was cancelled but the invocation was not")
		}
	}
	if _, err := Invoke(caller, handler, []byte(`{}`), time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("Invoke = %v, want context.Canceled", err)
	}
}

// TestReportInitErrorPostsWhatLambdaShows: the init error goes to the
// Runtime API's init/error path with the error document aws-lambda-go posts
// for invocation errors, and a refusal by the API is an error.
func TestReportInitErrorPostsWhatLambdaShows(t *testing.T) {
	var got struct {
		path, header, contentType string
		doc                       map[string]string
	}
	status := http.StatusAccepted
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.path, got.header, got.contentType = r.URL.Path, r.Header.Get("Lambda-Runtime-Function-Error-Type"), r.Header.Get("Content-Type")
		_ = json.NewDecoder(r.Body).Decode(&got.doc)
		w.WriteHeader(status)
	}))
	defer srv.Close()
	api := strings.TrimPrefix(srv.URL, "http://")

	cause := fmt.Errorf("predictor configuration: %w", errors.New("TABLE_NAME is required"))
	if err := ReportInitError(t.Context(), api, cause); err != nil {
		t.Fatal(err)
	}
	if got.path != "/2018-06-01/runtime/init/error" || got.contentType != "application/json" {
		t.Errorf("POST %s (%s)", got.path, got.contentType)
	}
	if got.doc["errorType"] != "InitError" || got.header != "InitError" || got.doc["errorMessage"] != cause.Error() {
		t.Errorf("document %v, error type header %q", got.doc, got.header)
	}

	status = http.StatusForbidden // init/error after init completed
	if err := ReportInitError(t.Context(), api, cause); err == nil {
		t.Error("a refused report returned no error")
	}
}
