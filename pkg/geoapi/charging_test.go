package geoapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestMaybeCharged(t *testing.T) {
	api := func(status int) APIError { return APIError{StatusCode: status, Operation: "Predict"} }
	apiCode := func(status int, code string) APIError {
		return APIError{StatusCode: status, MessageCode: code, Operation: "Predict"}
	}
	tests := []struct {
		name  string
		err   error
		maybe bool
		retry bool
	}{
		{"transport after the upload", &TransportError{Operation: "Predict", RequestSent: true}, true, false},
		{"transport before the upload", &TransportError{Operation: "Predict"}, false, true},
		{"undecodable 2xx of Predict", &DecodeError{Operation: "Predict", StatusCode: 200}, true, false},
		{"undecodable 2xx, operation unknown", &DecodeError{StatusCode: 200}, true, false},
		{"undecodable 2xx of Models", &DecodeError{Operation: "Models", StatusCode: 200}, false, false},
		{"undecodable 2xx of Credits", &DecodeError{Operation: "Credits", StatusCode: 200}, false, false},
		{"502 after the upload", &ServerError{APIError: api(502), RequestSent: true}, true, false},
		{"504 after the upload", &ServerError{APIError: api(504), RequestSent: true}, true, false},
		{"501 after the upload", &ServerError{APIError: api(501), RequestSent: true}, true, false},
		{"503 after the upload, no delay", &ServerError{APIError: api(503), RequestSent: true}, true, false},
		{"503 after the upload with a delay", &ServerError{APIError: api(503), RequestSent: true, RetryAfter: time.Second}, false, true},
		{"500 after the upload", &ServerError{APIError: api(500), RequestSent: true}, false, true},
		{"503 EXTERNAL_SERVICE_ERROR after the upload, no delay", &ServerError{APIError: apiCode(503, "EXTERNAL_SERVICE_ERROR"), RequestSent: true}, false, true},
		{"500 PREDICTION_FAILED after the upload", &ServerError{APIError: apiCode(500, "PREDICTION_FAILED"), RequestSent: true}, false, true},
		{"502 with an uncharged code in lower case", &ServerError{APIError: apiCode(502, "prediction_failed"), RequestSent: true}, false, true},
		{"504 with another code after the upload", &ServerError{APIError: apiCode(504, "INTERNAL_ERROR"), RequestSent: true}, true, false},
		{"502 before the upload was complete", &ServerError{APIError: api(502)}, false, true},
		{"429", &RateLimitedError{APIError: api(429)}, false, true},
		{"401", &UnauthorizedError{api(401)}, false, false},
		{"402", &OutOfCreditsError{APIError: api(402)}, false, false},
		{"413", &TooLargeError{api(413)}, false, false},
		{"422", &ValidationError{APIError: api(422)}, false, false},
		{"404", &APIError{StatusCode: 404}, false, false},
		{"input", &InputError{Field: "Image", Err: ErrNotImage}, false, false},
		{"wrapped 502 after the upload", fmt.Errorf("call: %w", withAttempts(&ServerError{APIError: api(502), RequestSent: true}, 1)), true, false},
		{"nil", nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MaybeCharged(tt.err); got != tt.maybe {
				t.Errorf("MaybeCharged = %v, want %v", got, tt.maybe)
			}
			if got := Retryable(tt.err); got != tt.retry {
				t.Errorf("Retryable = %v, want %v", got, tt.retry)
			}
			if MaybeCharged(tt.err) && Retryable(tt.err) {
				t.Error("an error that may have been charged must never be retryable")
			}
		})
	}
}

// The recorder reads the whole upload before answering, so these 5xx come
// after the service had the whole image.
func TestGatewayErrorAfterUploadIsNotRetried(t *testing.T) {
	for _, status := range []int{http.StatusBadGateway, http.StatusGatewayTimeout} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			rec := newRecorder(t, respond(status, `<html><body>gateway</body></html>`))
			c, sleeps := rec.client(t)
			_, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(20_000))})
			var se *ServerError
			if !errors.As(err, &se) || se.StatusCode != status || !se.RequestSent {
				t.Fatalf("err = %#v, want *ServerError %d with RequestSent", err, status)
			}
			if !MaybeCharged(err) || Retryable(err) {
				t.Errorf("MaybeCharged = %v, Retryable = %v; want true, false", MaybeCharged(err), Retryable(err))
			}
			if n := len(rec.requests()); n != 1 || len(sleeps.all()) != 0 || Attempts(err) != 1 {
				t.Errorf("%d requests, sleeps %v, Attempts %d; want exactly one request", n, sleeps.all(), Attempts(err))
			}
			if !strings.Contains(err.Error(), "(may have been charged: not retried)") {
				t.Errorf("message %q should say it may have been charged", err)
			}
		})
	}
}

func TestFreeServerErrorsAfterUploadAreRetried(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		header   map[string]string
		minDelay time.Duration
	}{
		{"500", http.StatusInternalServerError, nil, 0},
		{"503 with Retry-After", http.StatusServiceUnavailable, map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{"503 with X-RateLimit-Retry-After", http.StatusServiceUnavailable, map[string]string{"X-RateLimit-Retry-After": "0.25"}, 250 * time.Millisecond},
		{"503 with Retry-After 0", http.StatusServiceUnavailable, map[string]string{"Retry-After": "0"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newRecorder(t, failThenSucceed(1, func(w http.ResponseWriter, _ *http.Request) {
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				writeBody(w, tt.status, `{"message_code":"unavailable"}`)
			}))
			c, sleeps := rec.client(t)
			out, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(20_000))})
			if err != nil {
				t.Fatalf("Predict: %v", err)
			}
			if out.Attempts != 2 || len(rec.requests()) != 2 {
				t.Errorf("attempts %d, requests %d; want a retry", out.Attempts, len(rec.requests()))
			}
			if w := sleeps.all(); len(w) != 1 || w[0] < tt.minDelay {
				t.Errorf("waits %v; want one of at least %v", w, tt.minDelay)
			}
		})
	}
}

func TestServiceUnavailableWithoutDelayAfterUploadIsNotRetried(t *testing.T) {
	rec := newRecorder(t, respond(http.StatusServiceUnavailable, `{"message_code":"unavailable"}`))
	c, _ := rec.client(t)
	_, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(100))})
	var se *ServerError
	if !errors.As(err, &se) || !MaybeCharged(err) || len(rec.requests()) != 1 {
		t.Errorf("err = %v after %d requests; want one request, maybe charged", err, len(rec.requests()))
	}
}

// gatedSource yields the first open bytes of data, then blocks until it is
// closed: the upload cannot be complete when the server answers.
type gatedSource struct {
	data   []byte
	open   int
	opened atomic.Int32
}

func (g *gatedSource) source(context.Context) (io.ReadCloser, error) {
	g.opened.Add(1)
	return &gatedReader{data: g.data, open: g.open, closed: make(chan struct{})}, nil
}

type gatedReader struct {
	data   []byte
	open   int
	off    int
	closed chan struct{}
	once   sync.Once
}

func (r *gatedReader) Read(p []byte) (int, error) {
	if r.off >= r.open {
		<-r.closed
		return 0, errors.New("image source closed")
	}
	n := copy(p, r.data[r.off:r.open])
	r.off += n
	return n, nil
}

func (r *gatedReader) Close() error {
	r.once.Do(func() { close(r.closed) })
	return nil
}

func TestGatewayErrorBeforeUploadCompleteIsRetried(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		// Answer without reading the body: the service never had the image.
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, "<html><body>502 Bad Gateway</body></html>")
		w.(http.Flusher).Flush()
	}))
	t.Cleanup(srv.Close)
	img := fakeJPEG(1 << 20)
	src := &gatedSource{data: img, open: 4096}
	sleeps := &sleepLog{}
	c, err := New(srv.URL, func(o *Options) {
		o.APIKey = testKey
		o.Sleep = sleeps.sleep
		o.MaxAttempts = 3
		o.AttemptTimeout = 5 * time.Second
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Predict(context.Background(), &PredictInput{Image: src.source, Size: int64(len(img))})
	var se *ServerError
	if !errors.As(err, &se) || se.StatusCode != http.StatusBadGateway || se.RequestSent {
		t.Fatalf("err = %#v, want *ServerError 502 without RequestSent", err)
	}
	if MaybeCharged(err) || !Retryable(err) {
		t.Errorf("MaybeCharged = %v, Retryable = %v; want false, true", MaybeCharged(err), Retryable(err))
	}
	if n := requests.Load(); n != 3 || Attempts(err) != 3 || src.opened.Load() != 3 {
		t.Errorf("%d requests, Attempts %d, %d opens; want every attempt used", n, Attempts(err), src.opened.Load())
	}
	if strings.Contains(err.Error(), "charged") {
		t.Errorf("message %q must not claim a charge", err)
	}
}

func TestFreeOperationsRetryGatewayErrors(t *testing.T) {
	rec := newRecorder(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 1 {
			writeBody(w, http.StatusGatewayTimeout, `<html>504</html>`)
			return
		}
		writeBody(w, http.StatusOK, `{"data":{"models":[{"id":"geo-global-v2","status":"ready"}]}}`)
	})
	c, _ := rec.client(t)
	out, err := c.Models(context.Background(), nil)
	if err != nil {
		t.Fatalf("Models: %v", err)
	}
	if out.Attempts != 2 {
		t.Errorf("attempts = %d; a 504 on a free operation should be retried", out.Attempts)
	}
}
