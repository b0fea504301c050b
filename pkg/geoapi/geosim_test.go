package geoapi

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
)

// Tests against the service simulator, which emits the wire formats
// independently of this client.

func newSim(t *testing.T, optFns ...func(*geosim.Config)) (*geosim.Server, *Client) {
	t.Helper()
	fns := append([]func(*geosim.Config){func(c *geosim.Config) { c.DemoKey = testKey }}, optFns...)
	sim := geosim.New(fns...)
	ts := httptest.NewServer(sim)
	t.Cleanup(ts.Close)
	c, err := New(ts.URL, func(o *Options) {
		o.APIKey = testKey
		o.AttemptTimeout = 5 * time.Second
		o.Sleep = (&sleepLog{}).sleep
	})
	if err != nil {
		t.Fatal(err)
	}
	return sim, c
}

func TestSimPredict(t *testing.T) {
	sim, c := newSim(t)
	ctx := context.Background()

	out, err := c.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(20_000)), TopN: 3})
	if err != nil {
		t.Fatalf("Predict: %v", err)
	}
	if out.Result.Type != ResultTypeCoordinates || len(out.Result.Clusters) == 0 || len(out.Result.Clusters) > 3 ||
		out.CreditsConsumed != 1 || out.ModelID != geosim.ModelGlobalDefault {
		t.Errorf("global prediction = %+v", out)
	}
	if _, ok := out.Result.Top(); !ok {
		t.Error("no top location")
	}

	out, err = c.Predict(ctx, &PredictInput{Image: BytesSource(fakePNG(5000)), ModelID: geosim.ModelHighAccuracy})
	if err != nil {
		t.Fatalf("Predict high accuracy: %v", err)
	}
	if out.Result.Type != ResultTypeAccuracy || len(out.Result.Predictions) == 0 || out.Result.TopPrediction == nil || out.CreditsConsumed != 3 {
		t.Errorf("accuracy prediction = %+v", out)
	}
	if got := sim.Charged(geosim.DefaultOrg); got != 4 {
		t.Errorf("charged %d credits, want 1 + 3", got)
	}

	out, err = c.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(maxImage))})
	if err != nil || out.CreditsConsumed != 1 {
		t.Errorf("an image of exactly the limit: %v", err)
	}
}

func TestSimErrors(t *testing.T) {
	ctx := context.Background()
	sim, c := newSim(t)

	_, err := c.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(100)), ModelID: geosim.ModelRetired})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.RetiredModelID != geosim.ModelRetired {
		t.Errorf("retired model: err = %v", err)
	}
	_, err = c.Predict(ctx, &PredictInput{APIKey: otherKey, Image: BytesSource(fakeJPEG(100))})
	var ue *UnauthorizedError
	if !errors.As(err, &ue) {
		t.Errorf("unknown key: err = %v", err)
	}
	if sim.CallCount() != 2 || sim.Charged(geosim.DefaultOrg) != 0 {
		t.Errorf("calls = %d, charged = %d; want 2 calls, nothing charged", sim.CallCount(), sim.Charged(geosim.DefaultOrg))
	}

	broke, bc := newSim(t, func(c *geosim.Config) { c.NoCredits = true })
	_, err = bc.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(100))})
	var oc *OutOfCreditsError
	if !errors.As(err, &oc) || broke.CallCount() != 1 {
		t.Errorf("no credits: err = %v after %d calls", err, broke.CallCount())
	}
}

func TestSimFaultsAreRetried(t *testing.T) {
	ctx := context.Background()
	sim, c := newSim(t)

	sim.SetFaults(geosim.Faults{ServerErrorRate: 1})
	_, err := c.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(100))}, func(o *Options) { o.MaxAttempts = 2 })
	var se *ServerError
	if !errors.As(err, &se) || Attempts(err) != 2 || sim.Charged(geosim.DefaultOrg) != 0 {
		t.Errorf("5xx: err = %v", err)
	}

	sim.SetFaults(geosim.Faults{DropRate: 1})
	_, err = c.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(100))}, func(o *Options) { o.MaxAttempts = 2 })
	var te *TransportError
	if !errors.As(err, &te) || !te.RequestSent || Attempts(err) != 1 || sim.Charged(geosim.DefaultOrg) != 0 {
		t.Errorf("dropped after upload: err = %v, want one unretried attempt", err)
	}

	sim.SetFaults(geosim.Faults{RateLimitStorm: time.Minute, StormRetryAfter: 2 * time.Second, AllEndpoints: true})
	_, err = c.Credits(ctx, nil, func(o *Options) { o.MaxAttempts = 1 })
	var rl *RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter < time.Second {
		t.Errorf("storm: err = %v", err)
	}

	sim.SetFaults(geosim.Faults{MalformedRate: 1})
	before := sim.CallCount()
	_, err = c.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(100))})
	var de *DecodeError
	if !errors.As(err, &de) || sim.CallCount()-before != 1 {
		t.Errorf("malformed 200: err = %v after %d calls; want one call, no retry", err, sim.CallCount()-before)
	}
}

func TestSimModelsLayouts(t *testing.T) {
	sim, c := newSim(t)
	for _, layout := range []geosim.ModelsLayout{geosim.ModelsLayoutNested, geosim.ModelsLayoutDataArray, geosim.ModelsLayoutBareArray} {
		sim.SetModelsLayout(layout)
		out, err := c.Models(context.Background(), nil)
		if err != nil {
			t.Fatalf("layout %d: %v", layout, err)
		}
		m, ok := out.Find(geosim.ModelGlobalDefault)
		if !ok || m.Status != StatusReady || m.AccessClass != "public" {
			t.Errorf("layout %d: %s = %+v, %v", layout, geosim.ModelGlobalDefault, m, ok)
		}
		if _, ok := out.Find(geosim.ModelRetired); ok {
			t.Errorf("layout %d lists the retired model", layout)
		}
		if _, ok := out.Find(geosim.ModelPropertyWL); !ok {
			t.Errorf("layout %d: the key's whitelist model is missing", layout)
		}
		public, err := c.Models(context.Background(), nil, func(o *Options) { o.APIKey = "" })
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := public.Find(geosim.ModelPropertyWL); ok {
			t.Errorf("layout %d: whitelist model listed without a key", layout)
		}
	}
}

func TestSimCreditsLayouts(t *testing.T) {
	sim, c := newSim(t, func(c *geosim.Config) { c.Allowance, c.TopUp = 1000, 40 })
	ctx := context.Background()
	if _, err := c.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(100))}); err != nil {
		t.Fatal(err)
	}
	for _, layout := range []geosim.CreditsLayout{geosim.CreditsLayoutDetailed, geosim.CreditsLayoutFlat} {
		sim.SetCreditsLayout(layout)
		out, err := c.Credits(ctx, nil)
		if err != nil {
			t.Fatalf("layout %d: %v", layout, err)
		}
		if !eqPtr(out.Remaining, ptr(1039)) || !eqPtr(out.Used, ptr(1)) {
			t.Errorf("layout %d: remaining %v used %v from %q", layout, deref(out.Remaining), deref(out.Used), out.RemainingPath)
		}
	}
	sim.SetCreditsLayout(geosim.CreditsLayoutUnrecognised)
	_, err := c.Credits(ctx, nil)
	var le *LayoutError
	if !errors.As(err, &le) {
		t.Fatalf("unrecognised layout: err = %v", err)
	}
	out, err := c.Credits(ctx, &CreditsInput{RemainingPath: "result.quota.left_units"})
	if err != nil || !eqPtr(out.Remaining, ptr(1039)) {
		t.Errorf("configured path: %v, %v", err, out)
	}
}
