package geoapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
)

// The conformance tests run the client against both of the simulator's
// profiles: the contract's shapes (ProfileContract) and the public
// backend's (ProfileBackend: keys refused off predict, its own key header,
// upper-case codes, 400 for a file's size and type, its 429 and layouts).

// profileSim starts the simulator in profile p with a client configured as
// a deployment against that service would be: the backend profile's key
// header (apiKeyHeader).
func profileSim(t *testing.T, p geosim.Profile, optFns ...func(*geosim.Config)) (*geosim.Server, *Client) {
	t.Helper()
	fns := append([]func(*geosim.Config){func(c *geosim.Config) { c.DemoKey, c.Profile = testKey, p }}, optFns...)
	sim := geosim.New(fns...)
	ts := httptest.NewServer(sim)
	t.Cleanup(ts.Close)
	header := KeyHeader
	if p == geosim.ProfileBackend {
		header = geosim.BackendKeyHeader
	}
	c, err := New(ts.URL, func(o *Options) {
		o.APIKey, o.KeyHeader = testKey, header
		o.AttemptTimeout = 5 * time.Second
		o.Sleep = (&sleepLog{}).sleep
	})
	if err != nil {
		t.Fatal(err)
	}
	return sim, c
}

func forEachProfile(t *testing.T, run func(t *testing.T, p geosim.Profile)) {
	for _, p := range geosim.Profiles {
		t.Run(string(p), func(t *testing.T) { run(t, p) })
	}
}

func TestConformancePredict(t *testing.T) {
	forEachProfile(t, func(t *testing.T, p geosim.Profile) {
		sim, c := profileSim(t, p)
		ctx := context.Background()
		wantCode := map[geosim.Profile]string{geosim.ProfileContract: "success", geosim.ProfileBackend: "SUCCESS"}[p]

		out, err := c.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(20_000)), TopN: 3})
		if err != nil {
			t.Fatal(err)
		}
		top, ok := out.Result.Top()
		if out.MessageCode != wantCode || out.Result.Type != ResultTypeCoordinates || !ok || out.CreditsConsumed != 1 ||
			out.ModelID != geosim.ModelGlobalDefault || len(out.Result.Clusters[0].Points) == 0 || top.Admin2 == "" {
			t.Errorf("global prediction = %+v", out)
		}
		if n := len(out.Result.Clusters); n < 1 || n > 5 || (p == geosim.ProfileContract && n != 3) {
			t.Errorf("%d clusters for top_n 3", n)
		}

		out, err = c.Predict(ctx, &PredictInput{Image: BytesSource(fakePNG(5000)), ModelID: geosim.ModelHighAccuracy})
		if err != nil || out.Result.Type != ResultTypeAccuracy || out.Result.TopPrediction == nil || out.CreditsConsumed != 3 {
			t.Errorf("accuracy prediction = %+v, %v", out, err)
		}
		out, err = c.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(5000)), ModelID: geosim.ModelVehicle})
		if _, located := out.Result.Top(); err != nil || len(out.Result.Vehicles) == 0 || out.Result.Vehicles[0].Make == "" || located || out.CreditsConsumed != 2 {
			t.Errorf("vehicle prediction = %+v, %v", out, err)
		}
		out, err = c.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(5000)), ModelID: geosim.ModelPropertyWL})
		if err != nil || len(out.Result.Properties) == 0 || out.Result.Properties[0].Coordinates == nil || out.CreditsConsumed != 3 {
			t.Errorf("property prediction = %+v, %v", out, err)
		}
		// A type the service refuses is never sent: S3's default is replaced.
		if _, err := c.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(5000)), ContentType: "binary/octet-stream"}); err != nil {
			t.Errorf("with S3's content type: %v", err)
		}
		if got := sim.Charged(geosim.DefaultOrg); got != 1+3+2+3+1 {
			t.Errorf("charged %d", got)
		}
	})
}

func TestConformanceRefusals(t *testing.T) {
	forEachProfile(t, func(t *testing.T, p geosim.Profile) {
		ctx := context.Background()
		sim, c := profileSim(t, p, func(cfg *geosim.Config) { cfg.MaxImageBytes = 1000 })

		_, err := c.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(100)), ModelID: geosim.ModelRetired})
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.RetiredModelID != geosim.ModelRetired {
			t.Errorf("retired model: %v", err)
		}
		_, err = c.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(5000))})
		var tl *TooLargeError
		if !errors.As(err, &tl) || Retryable(err) || MaybeCharged(err) {
			t.Errorf("over the service's limit: %v", err)
		}
		_, err = c.Predict(ctx, &PredictInput{APIKey: otherKey, Image: BytesSource(fakeJPEG(100))})
		var ue *UnauthorizedError
		if !errors.As(err, &ue) || ue.Refusal() != KeyInvalid {
			t.Errorf("an unknown key: %v", err)
		}
		if sim.Charged(geosim.DefaultOrg) != 0 {
			t.Errorf("refusals charged %d", sim.Charged(geosim.DefaultOrg))
		}

		_, broke := profileSim(t, p, func(cfg *geosim.Config) { cfg.NoCredits = true })
		_, err = broke.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(100)), ModelID: geosim.ModelHighAccuracy})
		var oc *OutOfCreditsError
		if !errors.As(err, &oc) || oc.CreditsRequired == nil || *oc.CreditsRequired != 3 {
			t.Errorf("no credits: %v (credits required %v)", err, oc)
		}

		// The service's own 5xx are free and retried.
		faulty, fc := profileSim(t, p, geosim.WithSeed(3))
		faulty.SetFaults(geosim.Faults{ServerErrorRate: 1})
		for range 12 {
			_, err := fc.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(100))}, func(o *Options) { o.MaxAttempts = 1 })
			var se *ServerError
			if errors.As(err, &se) && se.StatusCode != http.StatusBadGateway && (MaybeCharged(err) || !Retryable(err)) {
				t.Errorf("%d %s: maybe charged %v, retryable %v", se.StatusCode, se.MessageCode, MaybeCharged(err), Retryable(err))
			}
		}
	})
}

func TestConformanceRateLimit(t *testing.T) {
	forEachProfile(t, func(t *testing.T, p geosim.Profile) {
		clock := simclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		_, c := profileSim(t, p, geosim.WithSlidingLog(2), geosim.WithClock(clock.Now))
		ctx := context.Background()
		for range 2 {
			if _, err := c.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(100))}); err != nil {
				t.Fatal(err)
			}
		}
		clock.Advance(15 * time.Second)
		var paced []time.Duration
		_, err := c.Predict(ctx, &PredictInput{Image: BytesSource(fakeJPEG(100))}, func(o *Options) {
			o.MaxAttempts = 1
			o.OnRateLimited = func(_ context.Context, e *RateLimitedError) { paced = append(paced, e.RetryAfter) }
		})
		var rl *RateLimitedError
		if !errors.As(err, &rl) || rl.RetryAfter != 45*time.Second || rl.DelaySource != delayRateLimitRetryAfter || len(paced) != 1 {
			t.Errorf("429: %v, RetryAfter %v from %q, paced %v; want 45s from X-RateLimit-Retry-After", err, rl.RetryAfter, rl.DelaySource, paced)
		}
		if rl.MessageCode != geosim.CodeRateLimited {
			t.Errorf("code %q", rl.MessageCode)
		}
	})
}

func TestConformanceModelsAndCredits(t *testing.T) {
	forEachProfile(t, func(t *testing.T, p geosim.Profile) {
		ctx := context.Background()
		_, c := profileSim(t, p)
		backend := p == geosim.ProfileBackend

		out, err := c.Models(ctx, nil)
		switch {
		case backend && !KeyNotAccepted(err):
			t.Errorf("backend model list with a key: %v, want a refusal of keys on the endpoint", err)
		case !backend && err != nil:
			t.Errorf("model list with a key: %v", err)
		case !backend:
			if _, ok := out.Find(geosim.ModelPropertyWL); !ok {
				t.Error("the key's whitelist model is missing")
			}
		}
		public, err := c.Models(ctx, &ModelsInput{Anonymous: true})
		if err != nil {
			t.Fatal(err)
		}
		m, ok := public.Find(geosim.ModelGlobalDefault)
		if !ok || m.Status != StatusReady || m.AccessClass != "public" || (backend && (m.CreditsPerUse == nil || *m.CreditsPerUse != 1)) {
			t.Errorf("public %s = %+v, %v", geosim.ModelGlobalDefault, m, ok)
		}

		_, err = c.Credits(ctx, nil)
		if backend != KeyNotAccepted(err) || (!backend && err != nil) {
			t.Errorf("credit summary: %v", err)
		}
		// Where a key is judged at no cost, the good key passes and a
		// wrong one does not.
		if ok, err := c.CheckKey(ctx, nil); err != nil || ok.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("CheckKey with the key: %+v, %v", ok, err)
		}
		_, err = c.CheckKey(ctx, &CheckKeyInput{APIKey: otherKey})
		var ue *UnauthorizedError
		if !errors.As(err, &ue) || ue.Refusal() != KeyInvalid {
			t.Errorf("CheckKey with an unknown key: %v", err)
		}
	})
}

// TestConformanceKeyHeader: a client left on the contract's header reaches
// the backend without a key.
func TestConformanceKeyHeader(t *testing.T) {
	_, c := profileSim(t, geosim.ProfileBackend)
	_, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(100))},
		func(o *Options) { o.KeyHeader = KeyHeader })
	var ue *UnauthorizedError
	if !errors.As(err, &ue) || ue.Refusal() != KeyMissing {
		t.Errorf("err = %v, want a missing key", err)
	}
}
