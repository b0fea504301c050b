package monitor

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
	"github.com/geolocate-aws/geolocate/pkg/shared/resultevents"
)

// fakeBus records PutEvents entries; failCode makes every entry fail as
// EventBridge reports it (in the output, not as an error).
type fakeBus struct {
	mu       sync.Mutex
	entries  []ebtypes.PutEventsRequestEntry
	failCode string
}

func (b *fakeBus) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := &eventbridge.PutEventsOutput{}
	for _, e := range in.Entries {
		if b.failCode != "" {
			out.FailedEntryCount++
			out.Entries = append(out.Entries, ebtypes.PutEventsResultEntry{ErrorCode: aws.String(b.failCode), ErrorMessage: aws.String("test")})
			continue
		}
		b.entries = append(b.entries, e)
		out.Entries = append(out.Entries, ebtypes.PutEventsResultEntry{EventId: aws.String("id")})
	}
	return out, nil
}

// modelAvailableSchema is the published JSON Schema of the detail.
const modelAvailableSchema = "../../events/schema/model-available.json"

// take returns the details put since the last take, checking the envelope
// and the detail against its schema.
func (b *fakeBus) take(t *testing.T) []ModelAvailable {
	t.Helper()
	schema, err := jsonschema.NewCompiler().Compile(modelAvailableSchema)
	if err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []ModelAvailable
	for _, e := range b.entries {
		if aws.ToString(e.EventBusName) != "geo-bus" || aws.ToString(e.Source) != resultevents.Source || aws.ToString(e.DetailType) != DetailTypeModelAvailable {
			t.Errorf("event envelope bus=%q source=%q detail-type=%q", aws.ToString(e.EventBusName), aws.ToString(e.Source), aws.ToString(e.DetailType))
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(aws.ToString(e.Detail)))
		if err != nil {
			t.Fatalf("detail %s: %v", aws.ToString(e.Detail), err)
		}
		if err := schema.Validate(inst); err != nil {
			t.Errorf("detail %s does not validate against %s: %v", aws.ToString(e.Detail), modelAvailableSchema, err)
		}
		var d ModelAvailable
		if err := json.Unmarshal([]byte(aws.ToString(e.Detail)), &d); err != nil {
			t.Fatalf("detail %s: %v", aws.ToString(e.Detail), err)
		}
		if d.Pipeline != testConfig().PipelineName {
			t.Errorf("detail pipeline %q, want the stack's %q", d.Pipeline, testConfig().PipelineName)
		}
		d.Pipeline = ""
		out = append(out, d)
	}
	b.entries = nil
	return out
}

// TestModelAvailable: the first run keeps a baseline and says nothing; a
// model added to the service's list, then a new default model (seen in the
// records made without a requested model), each give one Model Available
// event and NewModelsAvailable 1; an unchanged list gives 0 and no event.
func TestModelAvailable(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	sim, url := newSim(t)
	cfg := testConfig()
	h := newHarness(t, url, cfg, NewHistory(codeClient(client), table, cfg.PipelineName, cfg.HistoryTTL))
	bus := &fakeBus{}
	h.mon.events, h.mon.eventBus = bus, "geo-bus"

	clock := t0
	// The test's own writes are not the monitor's calls (see codeClient).
	store := ledger.New(client, table, func(o *ledger.Options) { o.Clock = func() time.Time { return clock } })
	result := func(key, requested, ran string) {
		t.Helper()
		claim, _, err := store.Claim(context.Background(), ledger.ObjectRef{Bucket: "uploads", Key: key, VersionID: "v1"}, time.Minute)
		if err != nil || !claim.Acquired() {
			t.Fatalf("claim %s: %v", key, err)
		}
		if err := store.Complete(context.Background(), claim, ledger.Record{ModelID: ran, RequestedModelID: requested, CreditsConsumed: 1}); err != nil {
			t.Fatal(err)
		}
	}
	step := func(wantNew int) []ModelAvailable {
		t.Helper()
		h.now = h.now.Add(5 * time.Minute)
		clock = h.now.Add(-time.Minute)
		rep, pts := h.run(t)
		if !rep.Healthy {
			t.Fatalf("unhealthy: %v", rep.Reasons)
		}
		pts.want(t, metricnames.NewModelsAvailable, float64(wantNew))
		got := bus.take(t)
		if len(got) != wantNew || len(rep.Models.New) != wantNew {
			t.Fatalf("%d events, %d in the report %+v; want %d", len(got), len(rep.Models.New), rep.Models.New, wantNew)
		}
		return got
	}

	step(0) // the baseline: every listed model is known from now on
	step(0)

	sim.AddModel(geosim.Model{ID: "geo-global-v3", Type: geosim.TypeGlobal, Access: geosim.AccessPublic, Status: geosim.StatusReady})
	got := step(1)
	if want := (ModelAvailable{ModelID: "geo-global-v3", Listed: true, Status: "ready"}); got[0] != want {
		t.Errorf("new listed model: %+v, want %+v", got[0], want)
	}
	step(0)

	// The first default seen is a baseline too; a pinned model's record
	// says nothing of the default.
	result("a.jpg", "", geosim.ModelGlobalDefault)
	step(0)
	result("b.jpg", geosim.ModelHighAccuracy, geosim.ModelHighAccuracy)
	step(0)
	result("c.jpg", "", "geo-global-v3")
	got = step(1)
	if want := (ModelAvailable{ModelID: "geo-global-v3", Default: true, PreviousDefault: geosim.ModelGlobalDefault, Status: "ready"}); got[0] != want {
		t.Errorf("new default: %+v, want %+v", got[0], want)
	}
	step(0)

	// An event EventBridge refuses makes the run unhealthy, named.
	sim.AddModel(geosim.Model{ID: "geo-global-v4", Type: geosim.TypeGlobal, Access: geosim.AccessPublic, Status: geosim.StatusReady})
	bus.failCode = "InternalFailure"
	h.now = h.now.Add(5 * time.Minute)
	rep, _ := h.run(t)
	if rep.Healthy || len(rep.Reasons) != 1 || !strings.Contains(rep.Reasons[0], "model_watch") || !strings.Contains(rep.Reasons[0], "InternalFailure") {
		t.Errorf("a refused event: healthy %v, reasons %v", rep.Healthy, rep.Reasons)
	}
}

// TestModelWatchNeedsTheTable: without the results table there is no
// last run to compare with: no metric, no event, and the run is healthy.
func TestModelWatchNeedsTheTable(t *testing.T) {
	_, url := newSim(t)
	h := newHarness(t, url, testConfig(), nil)
	bus := &fakeBus{}
	h.mon.events, h.mon.eventBus = bus, "geo-bus"
	_, pts := h.run(t)
	pts.wantAbsent(t, metricnames.NewModelsAvailable)
	if got := bus.take(t); len(got) != 0 {
		t.Errorf("events without a table: %+v", got)
	}
	if _, err := New(testConfig(), Options{Service: h.mon.service, Keys: h.keys, Events: bus}); err == nil {
		t.Error("Events without an EventBus accepted")
	}
}

// TestModelAvailableSample: the sample event in events/ is what the
// monitor puts, and its detail validates against the schema.
func TestModelAvailableSample(t *testing.T) {
	raw, err := os.ReadFile("../../events/model-available.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		DetailType string          `json:"detail-type"`
		Source     string          `json:"source"`
		Detail     json.RawMessage `json:"detail"`
	}
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	var d ModelAvailable
	if err := json.Unmarshal(ev.Detail, &d); err != nil || d.ModelID == "" || !d.Default || d.PreviousDefault == "" {
		t.Fatalf("sample detail %s: %+v, %v", ev.Detail, d, err)
	}
	if d.Pipeline == testConfig().PipelineName {
		t.Fatal("the sample names the test pipeline")
	}
	schema, err := jsonschema.NewCompiler().Compile(modelAvailableSchema)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(ev.Detail))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(inst); err != nil {
		t.Errorf("the sample's detail: %v", err)
	}
	if ev.Source != resultevents.Source || ev.DetailType != DetailTypeModelAvailable {
		t.Errorf("sample envelope source %q detail-type %q", ev.Source, ev.DetailType)
	}
}
