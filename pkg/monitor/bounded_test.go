package monitor

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/bench"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// listService answers the model list with whatever models() returns, in
// the contract's {id, status} records, and the credit summary with body.
type listService struct {
	mu      sync.Mutex
	models  func() []string
	credits string
}

func (s *listService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/v1/prediction/models":
		type rec struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		var list []rec
		for _, id := range s.models() {
			list = append(list, rec{ID: id, Status: "ready"})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"models": list})
	case "/v1/credits/summary":
		body := s.credits
		if body == "" {
			body = `{"credits_remaining": 1000}`
		}
		_, _ = w.Write([]byte(body))
	default:
		http.NotFound(w, r)
	}
}

func startListService(t *testing.T, s *listService) string {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL
}

// countingBus counts PutEvents calls on top of fakeBus.
type countingBus struct {
	fakeBus
	calls atomic.Int64
}

func (b *countingBus) PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, optFns ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	b.calls.Add(1)
	return b.fakeBus.PutEvents(ctx, in, optFns...)
}

// modelDims is the set of ModelId dimension values in pts.
func modelDims(pts points, into map[string]bool) int {
	n := 0
	for _, p := range pts {
		if v, ok := p.Dims[metricnames.DimModelID]; ok {
			into[v] = true
			n++
		}
	}
	return n
}

// TestChangingModelListIsBounded: a list of 5,000 ids that change on every
// listing costs, over two monitor runs, a bounded number of ModelId
// dimension values and Model Available events, not one per id.
func TestChangingModelListIsBounded(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	listing := 0
	svc := &listService{models: func() []string {
		listing++
		ids := make([]string, 5000)
		for i := range ids {
			ids[i] = fmt.Sprintf("churn-%d-%04d", listing, i)
		}
		return append(ids, "global-v1")
	}}
	cfg := testConfig()
	cfg.ModelID = "global-v1"
	h := newHarness(t, startListService(t, svc), cfg, NewHistory(codeClient(client), table, cfg.PipelineName, cfg.HistoryTTL))
	bus := &countingBus{}
	h.mon.events, h.mon.eventBus = bus, "geo-bus"

	dims := map[string]bool{}
	var events, metrics int
	for run := range 2 {
		h.now = t0.Add(time.Duration(run) * 5 * time.Minute)
		rep, pts := h.run(t)
		if !rep.Healthy {
			t.Errorf("run %d unhealthy: %v", run, rep.Reasons)
		}
		metrics += modelDims(pts, dims)
		events += len(bus.take(t))
		pts.want(t, metricnames.ModelIdsLeftOut, 5000)
		pts.want(t, metricnames.ModelsReady, 5001)
		pts.want(t, metricnames.ModelReady, 1, metricnames.DimModelID, "global-v1")
		if n := strings.Count(strings.Join(rep.Warnings, "\n"), "more than the 100 a run publishes"); n != 1 {
			t.Errorf("run %d: %d anomaly warnings, want 1: %v", run, n, rep.Warnings)
		}
	}
	if n := strings.Count(h.logs.String(), "more than the 100 a run publishes"); n != 2 {
		t.Errorf("%d anomaly log lines in two runs, want 2", n)
	}
	t.Logf("two runs of 5,000 changing ids: %d PutEvents calls, %d events, %d ModelId metric values, %d distinct ModelId values",
		bus.calls.Load(), events, metrics, len(dims))
	if len(dims) > 2*MaxModelsPublished || events > MaxModelsPublished || bus.calls.Load() > MaxModelsPublished/10 {
		t.Errorf("two runs of 5,000 changing ids: %d distinct ModelId values, %d events in %d PutEvents calls; want at most %d, %d and %d",
			len(dims), events, bus.calls.Load(), 2*MaxModelsPublished, MaxModelsPublished, MaxModelsPublished/10)
	}
}

// TestChangingShortListIsAnnounced: a list within the bound is watched id
// by id, so its churn is announced, at most MaxModelsPublished events (in
// tens) a run.
func TestChangingShortListIsAnnounced(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	listing := 0
	svc := &listService{models: func() []string {
		listing++
		ids := make([]string, MaxModelsPublished)
		for i := range ids {
			ids[i] = fmt.Sprintf("churn-%d-%03d", listing, i)
		}
		return ids
	}}
	cfg := testConfig()
	h := newHarness(t, startListService(t, svc), cfg, NewHistory(codeClient(client), table, cfg.PipelineName, cfg.HistoryTTL))
	bus := &countingBus{}
	h.mon.events, h.mon.eventBus = bus, "geo-bus"
	for run, want := range []int{0, MaxModelsPublished} {
		h.now = t0.Add(time.Duration(run) * 5 * time.Minute)
		rep, pts := h.run(t)
		if !rep.Healthy || len(rep.Warnings) != 0 {
			t.Errorf("run %d: healthy %v, warnings %v", run, rep.Healthy, rep.Warnings)
		}
		pts.want(t, metricnames.ModelIdsLeftOut, 0)
		pts.want(t, metricnames.NewModelsAvailable, float64(want))
		if n := modelDims(pts, map[string]bool{}); n != MaxModelsPublished {
			t.Errorf("run %d: %d ModelReady values, want every listed id", run, n)
		}
		if got := bus.take(t); len(got) != want {
			t.Errorf("run %d: %d events, want %d", run, len(got), want)
		}
	}
	if n := bus.calls.Load(); n != MaxModelsPublished/10 {
		t.Errorf("%d PutEvents calls, want %d", n, MaxModelsPublished/10)
	}
}

// TestOversizedModelListKeepsTheMonitorHealthy: 30,000 ordinary ids, then a
// list holding a 1 MB id, never make a run unhealthy (MonitorHeartbeat
// would page every run) and the model watch keeps its baseline: the item
// stays far under DynamoDB's 400 KB, against DynamoDB Local.
func TestOversizedModelListKeepsTheMonitorHealthy(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	many := make([]string, 30000)
	for i := range many {
		many[i] = fmt.Sprintf("geo-global-model-%05d", i)
	}
	many = append(many, "global-v1")
	current := many
	svc := &listService{models: func() []string { return current }}
	cfg := testConfig()
	cfg.ModelID = "global-v1"
	h := newHarness(t, startListService(t, svc), cfg, NewHistory(codeClient(client), table, cfg.PipelineName, cfg.HistoryTTL))
	bus := &countingBus{}
	h.mon.events, h.mon.eventBus = bus, "geo-bus"
	huge := []string{"global-v1", strings.Repeat("x", 1<<20)}
	for run, tc := range []struct {
		list            []string
		leftOut, events int
	}{
		{many, 30000, 0}, {many, 30000, 0}, // a baseline, then the same
		{huge, 1, 0}, {huge, 1, 0}, // a new baseline of ids after an oversized list
		{[]string{"global-v1", "global-v2"}, 0, 1},
	} {
		svc.mu.Lock()
		current = tc.list
		svc.mu.Unlock()
		h.now = t0.Add(time.Duration(run) * 5 * time.Minute)
		rep, pts := h.run(t)
		if !rep.Healthy {
			t.Errorf("run %d (%d ids): unhealthy: %v", run, len(tc.list), rep.Reasons)
		}
		pts.want(t, metricnames.MonitorHealthy, 1)
		pts.want(t, metricnames.ModelIdsLeftOut, float64(tc.leftOut))
		pts.want(t, metricnames.ModelReady, 1, metricnames.DimModelID, "global-v1")
		if n := modelDims(pts, map[string]bool{}); n > MaxModelsPublished {
			t.Errorf("run %d: %d ModelId metric values, want at most %d", run, n, MaxModelsPublished)
		}
		if got := bus.take(t); len(got) != tc.events {
			t.Errorf("run %d: %d events %+v, want %d", run, len(got), got, tc.events)
		}
		item, err := client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: modelsPartitionPrefix + cfg.PipelineName}, "sk": &types.AttributeValueMemberS{Value: modelsSortKey}}})
		if err != nil || item.Item == nil {
			t.Fatalf("run %d: the model watch kept no baseline: %v", run, err)
		}
		if size := bench.ItemSize(item.Item); size > 8<<10 {
			t.Errorf("run %d: model watch item of %d bytes, want a few KB at most", run, size)
		}
	}
}
