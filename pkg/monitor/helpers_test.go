package monitor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/syncbuf"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
)

// testKeys is a KeyProvider whose cached and fresh keys tests control.
type testKeys struct {
	mu        sync.Mutex
	cached    string
	fresh     string // returned by Refresh; "" means the cached key
	err       error
	refreshes int
}

func (k *testKeys) Key(context.Context) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.cached, k.err
}

func (k *testKeys) Refresh(context.Context) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.refreshes++
	if k.err != nil {
		return "", k.err
	}
	if k.fresh != "" {
		k.cached = k.fresh
	}
	return k.cached, nil
}

// newSim starts the simulator with fakeKey as the demo organisation's key.
func newSim(t *testing.T, optFns ...func(*geosim.Config)) (*geosim.Server, string) {
	t.Helper()
	opts := append([]func(*geosim.Config){func(c *geosim.Config) { c.DemoKey = fakeKey }}, optFns...)
	sim := geosim.New(opts...)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return sim, srv.URL
}

// harness is a Monitor wired to a service URL with captured output.
type harness struct {
	mon     *Monitor
	keys    *testKeys
	metrics *bytes.Buffer
	logs    *syncbuf.Buffer
	now     time.Time
}

func testConfig() Config {
	return Config{
		APIURL:        "http://unused.invalid",
		Namespace:     "GeoTest",
		PipelineName:  "test-pipeline",
		HistoryTTL:    14 * 24 * time.Hour,
		HistoryWindow: 24 * time.Hour,
	}
}

func newHarness(t *testing.T, url string, cfg Config, history *History) *harness {
	t.Helper()
	h := &harness{keys: &testKeys{cached: fakeKey}, metrics: &bytes.Buffer{}, logs: &syncbuf.Buffer{}, now: t0}
	logger := slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	client, err := geoapi.New(url, func(o *geoapi.Options) {
		o.MaxAttempts = 2
		o.Sleep = func(context.Context, time.Duration) error { return nil }
		o.Logger = logger
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg.APIURL = url
	h.mon, err = New(cfg, Options{
		Service: client, Keys: h.keys, History: history,
		Metrics: h.metrics, Logger: logger, Clock: func() time.Time { return h.now },
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// run invokes the handler once and decodes the metrics it wrote.
func (h *harness) run(t *testing.T) (Report, points) {
	t.Helper()
	h.metrics.Reset()
	rep, err := h.mon.Handle(context.Background(), events.EventBridgeEvent{ID: "test", DetailType: "Scheduled Event"})
	if err != nil {
		t.Fatalf("Handle: %v", err)
	}
	return rep, decodeEMF(t, h.metrics.Bytes(), "GeoTest")
}

// point is one decoded EMF metric value.
type point struct {
	Name, Unit string
	Dims       map[string]string
	Values     []float64
}

type points []point

// decodeEMF checks each line against the EMF rules the monitor relies on
// (namespace, dimension keys present as top-level string members, every
// metric named in the directive present) and returns the values.
func decodeEMF(t *testing.T, out []byte, namespace string) points {
	t.Helper()
	var pts points
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("EMF line is not a JSON object: %v: %s", err, line)
		}
		var meta struct {
			Timestamp         int64
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		}
		if err := json.Unmarshal(doc["_aws"], &meta); err != nil || meta.Timestamp == 0 || len(meta.CloudWatchMetrics) == 0 {
			t.Fatalf("EMF line without a valid _aws member (%v): %s", err, line)
		}
		for _, d := range meta.CloudWatchMetrics {
			if d.Namespace != namespace {
				t.Errorf("namespace = %q, want %q", d.Namespace, namespace)
			}
			for _, set := range d.Dimensions {
				dims := map[string]string{}
				for _, k := range set {
					var v string
					if err := json.Unmarshal(doc[k], &v); err != nil {
						t.Fatalf("dimension %s is not a top-level string member: %s", k, line)
					}
					dims[k] = v
				}
				for _, m := range d.Metrics {
					pts = append(pts, point{Name: m.Name, Unit: m.Unit, Dims: dims, Values: decodeValues(t, doc[m.Name], line)})
				}
			}
		}
	}
	return pts
}

func decodeValues(t *testing.T, raw json.RawMessage, line string) []float64 {
	t.Helper()
	var one float64
	if err := json.Unmarshal(raw, &one); err == nil {
		return []float64{one}
	}
	var many []float64
	if err := json.Unmarshal(raw, &many); err != nil || len(many) == 0 {
		t.Fatalf("metric value %s is not a number or a list of numbers: %s", raw, line)
	}
	return many
}

// find returns the values of name with exactly dims.
func (p points) find(name string, dims map[string]string) ([]float64, bool) {
	for _, pt := range p {
		if pt.Name == name && maps.Equal(pt.Dims, dims) {
			return pt.Values, true
		}
	}
	return nil, false
}

func (p points) has(name string) bool {
	for _, pt := range p {
		if pt.Name == name {
			return true
		}
	}
	return false
}

func pipelineDims(extra ...string) map[string]string {
	d := map[string]string{"Pipeline": "test-pipeline"}
	for i := 0; i+1 < len(extra); i += 2 {
		d[extra[i]] = extra[i+1]
	}
	return d
}

// want asserts name was emitted once with exactly value and dims.
func (p points) want(t *testing.T, name string, value float64, extraDims ...string) {
	t.Helper()
	got, ok := p.find(name, pipelineDims(extraDims...))
	if !ok {
		t.Errorf("metric %s %v not emitted", name, extraDims)
		return
	}
	if len(got) != 1 || got[0] != value {
		t.Errorf("metric %s %v = %v, want [%v]", name, extraDims, got, value)
	}
}

func (p points) wantAbsent(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if p.has(n) {
			t.Errorf("metric %s emitted, want it absent", n)
		}
	}
}

func wantContains(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}

var errSecretsDown = errors.New("secrets manager unavailable")
