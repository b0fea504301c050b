package geoapi

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestNewValidatesBaseURL(t *testing.T) {
	tests := []struct {
		url string
		ok  bool
	}{
		{"http://127.0.0.1:8080", true},
		{"https://geo.example.test/api/", true},
		{"", false},
		{"127.0.0.1:8080", false},
		{"/v1", false},
		{"ftp://example.test", false},
		{"http://", false},
		{"http://example.test/?a=1", false},
		{"http://user:secret@example.test:bad", false},
	}
	for _, tt := range tests {
		_, err := New(tt.url)
		if (err == nil) != tt.ok {
			t.Errorf("New(%q) err = %v, want ok=%v", tt.url, err, tt.ok)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("New(%q) error leaks a password: %v", tt.url, err)
		}
	}
}

func TestDefaultsAndPerCallOptions(t *testing.T) {
	c, err := New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	o := c.Options()
	if o.MaxAttempts != 4 || o.AttemptTimeout != 60*time.Second || o.BaseBackoff != 250*time.Millisecond ||
		o.MaxBackoff != 20*time.Second || o.HTTPClient == nil || o.Logger == nil || o.Sleep == nil || o.UserAgent == "" {
		t.Errorf("defaults = %+v", o)
	}

	rec := newRecorder(t, respond(http.StatusOK, `{"models":[]}`))
	base, _ := rec.client(t)
	if _, err := base.Models(context.Background(), nil, func(o *Options) { o.APIKey = otherKey; o.UserAgent = "probe/1" }); err != nil {
		t.Fatal(err)
	}
	if _, err := base.Models(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	reqs := rec.requests()
	if reqs[0].Key != otherKey || reqs[1].Key != testKey {
		t.Errorf("keys = %q, %q; a per-call option must not change the client", reqs[0].Key, reqs[1].Key)
	}
}

func TestBaseURLPathPrefix(t *testing.T) {
	rec := newRecorder(t, respond(http.StatusOK, `{"models":[]}`))
	c, err := New(rec.srv.URL+"/geo/", func(o *Options) { o.Sleep = (&sleepLog{}).sleep })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Models(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if p := rec.requests()[0].Path; p != "/geo/v1/prediction/models" {
		t.Errorf("path = %q", p)
	}
}

func TestLogsNeverContainTheKey(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	rec := newRecorder(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			writeBody(w, http.StatusInternalServerError, `{"message":"bad key `+r.Header.Get(KeyHeader)+`"}`)
			return
		}
		writeBody(w, http.StatusOK, coordinatesBody)
	})
	c, _ := rec.client(t, func(o *Options) { o.Logger = logger })
	if _, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(100))}); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if !strings.Contains(out, "retrying") || !strings.Contains(out, testPredictionID) || !strings.Contains(out, "credits_consumed") {
		t.Fatalf("expected retry and result logs, got:\n%s", out)
	}
	if strings.Contains(out, testKey) {
		t.Errorf("the key appears in the logs:\n%s", out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(line, "{") {
			t.Errorf("log line is not JSON: %s", line)
		}
	}
}

// TestKeyHeaderIsConfigurable: the key travels in the configured header
// only, and a name no HTTP header can have is refused before any call.
func TestKeyHeaderIsConfigurable(t *testing.T) {
	rec := newRecorder(t, respond(http.StatusOK, `{"models":[]}`))
	c, _ := rec.client(t, func(o *Options) { o.KeyHeader = "X-GeoInfer-Key" })
	if _, err := c.Models(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	req := rec.requests()[0]
	if got := req.Header.Get("X-GeoInfer-Key"); got != testKey {
		t.Errorf("X-GeoInfer-Key = %q, want the key", got)
	}
	if req.HasKey {
		t.Errorf("the key was also sent in %s", KeyHeader)
	}
	if c.Options().KeyHeader != "X-GeoInfer-Key" {
		t.Errorf("Options().KeyHeader = %q", c.Options().KeyHeader)
	}
	def, _ := rec.client(t)
	if def.Options().KeyHeader != "X-Service-Key" {
		t.Errorf("default key header %q, want the contract's X-Service-Key", def.Options().KeyHeader)
	}

	for _, bad := range []string{"X Key", "X-Key\r\nX-Evil: 1", "Authorization"} {
		if _, err := New(rec.srv.URL, func(o *Options) { o.KeyHeader = bad }); err == nil {
			t.Errorf("New accepted the key header %q", bad)
		}
		before := len(rec.requests())
		_, err := def.Models(context.Background(), nil, func(o *Options) { o.KeyHeader = bad })
		if err == nil || len(rec.requests()) != before {
			t.Errorf("a per-call key header %q: err = %v, %d requests sent", bad, err, len(rec.requests())-before)
		}
	}
}
