package geoapi

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
)

// Obviously fake keys: never a real-looking key in tests.
const (
	testKey  = "geo_test_fake_key_1"
	otherKey = "geo_test_fake_key_2"
)

const testPredictionID = "3f1c2a9e-8b7d-4c6e-9a51-2d4f6b8e0c13"

// fakeJPEG returns n bytes that sniff as JPEG.
func fakeJPEG(n int) []byte {
	b := make([]byte, n)
	copy(b, []byte{0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0})
	for i := 11; i < n; i++ {
		b[i] = byte(i * 7)
	}
	return b
}

// fakePNG returns n bytes that sniff as PNG.
func fakePNG(n int) []byte {
	b := make([]byte, n)
	copy(b, "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	return b
}

const coordinatesBody = `{"message_code":"success","data":{"prediction":{"result_type":"coordinates",
"clusters":[{"center":{"latitude":48.8566,"longitude":2.3522},"location":{"name":"Paris","admin1":"Ile-de-France","country_code":"FR"},"radius_km":12.5},
{"center":{"latitude":45.764,"longitude":4.8357},"location":{"name":"Lyon","admin1":"Auvergne-Rhone-Alpes","country_code":"FR"},"radius_km":30}],
"processing_time_ms":412},"prediction_id":"` + testPredictionID + `","model_id":"geo-global-v2","credits_consumed":1}}`

const accuracyBody = `{"message_code":"success","data":{"prediction":{"result_type":"accuracy",
"predictions":[{"latitude":40.7128,"longitude":-74.006,"confidence":0.91,"rank":1,"location":{"name":"New York","admin1":"New York","admin2":"New York County","country_code":"US"},"heading_deg":270.5},
{"latitude":40.6782,"longitude":-73.9442,"confidence":0.05,"rank":2,"location":{"name":"Brooklyn","admin1":"New York","admin2":"Kings County","country_code":"US"}}],
"top_prediction":{"latitude":40.7128,"longitude":-74.006,"confidence":0.91,"rank":1,"location":{"name":"New York","admin1":"New York","admin2":"New York County","country_code":"US"},"heading_deg":270.5},
"processing_time_ms":980},"prediction_id":"` + testPredictionID + `","model_id":"geo-accuracy-eu-v1","credits_consumed":3}}`

// received is what a test server saw in one request.
type received struct {
	Method        string
	Path          string
	Query         map[string][]string
	Key           string
	HasKey        bool
	ContentType   string
	ContentLength int64
	Chunked       bool
	FieldName     string
	Filename      string
	PartType      string
	File          []byte
	Parts         int
	Header        http.Header
}

// recorder is an httptest server whose handler is chosen per request number.
type recorder struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	reqs   []received
	count  atomic.Int32
	handle func(n int, w http.ResponseWriter, r *http.Request)
}

func newRecorder(t *testing.T, handle func(n int, w http.ResponseWriter, r *http.Request)) *recorder {
	t.Helper()
	rec := &recorder{t: t, handle: handle}
	rec.srv = httptest.NewServer(http.HandlerFunc(rec.serve))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (rec *recorder) serve(w http.ResponseWriter, r *http.Request) {
	n := int(rec.count.Add(1))
	got := received{
		Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(),
		Key: r.Header.Get(KeyHeader), ContentType: r.Header.Get("Content-Type"),
		ContentLength: r.ContentLength, Chunked: len(r.TransferEncoding) > 0,
		Header: r.Header.Clone(),
	}
	_, got.HasKey = r.Header[http.CanonicalHeaderKey(KeyHeader)]
	if mt, params, err := mime.ParseMediaType(got.ContentType); err == nil && mt == "multipart/form-data" {
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			got.Parts++
			got.FieldName, got.Filename, got.PartType = p.FormName(), p.FileName(), p.Header.Get("Content-Type")
			got.File, _ = io.ReadAll(p)
		}
	}
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, got)
	rec.mu.Unlock()
	rec.handle(n, w, r)
}

func (rec *recorder) requests() []received {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]received(nil), rec.reqs...)
}

// client returns a client for the recorder with fast, recorded sleeps.
func (rec *recorder) client(t *testing.T, optFns ...func(*Options)) (*Client, *sleepLog) {
	t.Helper()
	sleeps := &sleepLog{}
	fns := append([]func(*Options){func(o *Options) {
		o.APIKey = testKey
		o.Sleep = sleeps.sleep
		o.AttemptTimeout = 5 * time.Second
	}}, optFns...)
	c, err := New(rec.srv.URL, fns...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c, sleeps
}

// sleepLog records the waits between attempts without waiting.
type sleepLog struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleepLog) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepLog) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

func writeBody(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// respond answers every request with the same status and body.
func respond(status int, body string) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, _ *http.Request) { writeBody(w, status, body) }
}

// dropConnection closes the connection without a response.
func dropConnection(t *testing.T, w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		t.Error("response writer cannot hijack")
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	conn.Close()
}

// countingSource counts how often it is opened and hides its length, so the
// client cannot learn the size in advance.
type countingSource struct {
	data  []byte
	opens atomic.Int32
}

func (s *countingSource) open(context.Context) (io.ReadCloser, error) {
	s.opens.Add(1)
	return io.NopCloser(struct{ io.Reader }{bytes.NewReader(s.data)}), nil
}

// maxImage is the default upload limit as an int, for building images.
const maxImage = int(imageformat.DefaultMaxImageBytes)

func intPtr(n int) *int { return &n }
