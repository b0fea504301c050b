package monitor

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

func TestMetricsFromKnownFixtures(t *testing.T) {
	sim, url := newSim(t, func(c *geosim.Config) { c.Allowance, c.TopUp = 1000, 50 })
	if err := sim.SetModelStatus(geosim.ModelVehicle, geosim.StatusDown); err != nil {
		t.Fatal(err)
	}
	if err := sim.SetModelStatus(geosim.ModelHighAccuracy, geosim.StatusUnknown); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.ModelID = geosim.ModelPropertyWL // whitelist: only listed with the key
	h := newHarness(t, url, cfg, nil)

	rep, pts := h.run(t)
	if !rep.Healthy || len(rep.Reasons) != 0 {
		t.Fatalf("report = %+v", rep)
	}
	pts.want(t, metricnames.CreditsRemaining, 1050)
	pts.want(t, metricnames.SubscriptionCredits, 1000)
	pts.want(t, metricnames.TopUpCredits, 50)
	pts.want(t, metricnames.ModelsReady, 2) // global default + whitelist property
	pts.want(t, metricnames.ModelsDown, 1)
	pts.want(t, metricnames.ModelsUnknown, 1)
	pts.want(t, metricnames.ModelReady, 1, "ModelId", geosim.ModelGlobalDefault)
	pts.want(t, metricnames.ModelReady, 1, "ModelId", geosim.ModelPropertyWL)
	pts.want(t, metricnames.ModelReady, 0, "ModelId", geosim.ModelVehicle)
	pts.want(t, metricnames.ModelReady, 0, "ModelId", geosim.ModelHighAccuracy)
	pts.want(t, metricnames.ConfiguredModelAvailable, 1)
	pts.want(t, metricnames.ModelIdsLeftOut, 0)
	pts.want(t, metricnames.MonitorHealthy, 1)
	// No table: no forecast, said so, still healthy.
	pts.wantAbsent(t, metricnames.CreditBurnPerDay, metricnames.CreditDaysRemaining)
	if _, listed := pts.find(metricnames.ModelReady, pipelineDims("ModelId", geosim.ModelRetired)); listed {
		t.Error("retired model reported")
	}
	wantContains(t, "warnings", strings.Join(rep.Warnings, "\n"), "TABLE_NAME")

	for _, pt := range pts {
		if pt.Dims["Pipeline"] != "test-pipeline" {
			t.Errorf("%s lacks the Pipeline dimension: %v", pt.Name, pt.Dims)
		}
		wantUnit := "None"
		switch pt.Name {
		case metricnames.CreditsRemaining, metricnames.SubscriptionCredits, metricnames.TopUpCredits,
			metricnames.ModelsReady, metricnames.ModelsDown, metricnames.ModelsUnknown, metricnames.ModelIdsLeftOut:
			wantUnit = "Count"
		}
		if pt.Unit != wantUnit {
			t.Errorf("%s unit = %q, want %q", pt.Name, pt.Unit, wantUnit)
		}
	}
	// Both calls carried the key (the whitelist model proves the list did).
	for _, c := range sim.Calls() {
		if c.KeyName != geosim.DefaultKeyName {
			t.Errorf("%s called without the key (key name %q)", c.Endpoint, c.KeyName)
		}
	}
}

func TestConfiguredModelAvailability(t *testing.T) {
	tests := []struct {
		name      string
		modelID   string
		setup     func(*testing.T, *geosim.Server)
		want      float64
		wantNote  string
		wantReady float64
	}{
		{name: "listed and ready", modelID: geosim.ModelHighAccuracy, want: 1, wantReady: 4},
		{name: "retired in the catalogue", modelID: geosim.ModelRetired, want: 0, wantNote: "retired", wantReady: 4},
		{
			name: "retired while configured", modelID: geosim.ModelHighAccuracy, want: 0, wantNote: "retired", wantReady: 3,
			setup: func(t *testing.T, s *geosim.Server) {
				if err := s.RetireModel(geosim.ModelHighAccuracy); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "down", modelID: geosim.ModelHighAccuracy, want: 0, wantNote: "is down", wantReady: 3,
			setup: func(t *testing.T, s *geosim.Server) {
				if err := s.SetModelStatus(geosim.ModelHighAccuracy, geosim.StatusDown); err != nil {
					t.Fatal(err)
				}
			},
		},
		{name: "default path with ready models", want: 1, wantReady: 4},
		{
			name: "default path with nothing ready", want: 0, wantNote: "no model is ready", wantReady: 0,
			setup: func(t *testing.T, s *geosim.Server) {
				for _, m := range s.Models() {
					if err := s.SetModelStatus(m.ID, geosim.StatusDown); err != nil {
						t.Fatal(err)
					}
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim, url := newSim(t)
			if tt.setup != nil {
				tt.setup(t, sim)
			}
			cfg := testConfig()
			cfg.ModelID = tt.modelID
			h := newHarness(t, url, cfg, nil)
			rep, pts := h.run(t)
			pts.want(t, metricnames.ConfiguredModelAvailable, tt.want)
			pts.want(t, metricnames.ModelsReady, tt.wantReady)
			// An unavailable model is the pipeline's problem, not the monitor's.
			pts.want(t, metricnames.MonitorHealthy, 1)
			if tt.wantNote != "" {
				wantContains(t, "warnings", strings.Join(rep.Warnings, "\n"), tt.wantNote)
				wantContains(t, "logs", h.logs.String(), tt.wantNote)
			}
			if tt.name == "down" {
				pts.want(t, metricnames.ModelReady, 0, "ModelId", geosim.ModelHighAccuracy)
				pts.want(t, metricnames.ModelsDown, 1)
			}
		})
	}
}

// failingCredits serves the simulator except for the credit summary, which
// answers 500.
func failingCredits(t *testing.T, sim *geosim.Server) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == geosim.PathCredits {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = io.WriteString(w, `{"message_code":"internal_error","message":"billing backend unavailable"}`)
			return
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestCreditsEndpointFailingStillEmitsModels(t *testing.T) {
	sim, _ := newSim(t)
	h := newHarness(t, failingCredits(t, sim), testConfig(), nil)
	rep, pts := h.run(t)

	pts.want(t, metricnames.MonitorHealthy, 0)
	pts.want(t, metricnames.ModelsReady, 4)
	pts.want(t, metricnames.ConfiguredModelAvailable, 1)
	pts.wantAbsent(t, metricnames.CreditsRemaining, metricnames.SubscriptionCredits, metricnames.TopUpCredits,
		metricnames.CreditBurnPerDay, metricnames.CreditDaysRemaining)
	if rep.Healthy || len(rep.Reasons) != 1 {
		t.Fatalf("report = %+v", rep)
	}
	wantContains(t, "reason", rep.Reasons[0], "credits:", "500", "billing backend unavailable")
	wantContains(t, "logs", h.logs.String(), "billing backend unavailable", `"step":"credits"`)
}

func TestModelsEndpointFailingStillEmitsCredits(t *testing.T) {
	sim, _ := newSim(t, func(c *geosim.Config) { c.Allowance = 700 })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == geosim.PathModels {
			http.Error(w, "<html>502 Bad Gateway</html>", http.StatusBadGateway)
			return
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	h := newHarness(t, srv.URL, testConfig(), nil)
	rep, pts := h.run(t)
	pts.want(t, metricnames.MonitorHealthy, 0)
	pts.want(t, metricnames.CreditsRemaining, 700)
	pts.wantAbsent(t, metricnames.ModelsReady, metricnames.ModelsDown, metricnames.ModelsUnknown,
		metricnames.ModelReady, metricnames.ConfiguredModelAvailable)
	if len(rep.Reasons) != 1 {
		t.Fatalf("reasons = %v", rep.Reasons)
	}
	wantContains(t, "reason", rep.Reasons[0], "models:", "502")
}

func TestUnknownCreditLayout(t *testing.T) {
	sim, url := newSim(t, func(c *geosim.Config) { c.Allowance = 300 })
	sim.SetCreditsLayout(geosim.CreditsLayoutUnrecognised)

	h := newHarness(t, url, testConfig(), nil)
	rep, pts := h.run(t)
	pts.want(t, metricnames.MonitorHealthy, 0)
	pts.wantAbsent(t, metricnames.CreditsRemaining, metricnames.SubscriptionCredits, metricnames.TopUpCredits)
	pts.want(t, metricnames.ModelsReady, 4) // the other endpoint still counts
	if len(rep.Reasons) != 1 {
		t.Fatalf("reasons = %v", rep.Reasons)
	}
	// The reason names what was missing, where to look and what to set.
	wantContains(t, "reason", rep.Reasons[0], "credit summary layout not recognised", "left_units", "GEO_CREDITS_PATH")
	wantContains(t, "logs", h.logs.String(), "credit summary layout not recognised")

	// With the path configured, the same layout is read.
	cfg := testConfig()
	cfg.CreditsPath = "result.quota.left_units"
	h = newHarness(t, url, cfg, nil)
	rep, pts = h.run(t)
	pts.want(t, metricnames.CreditsRemaining, 300)
	pts.want(t, metricnames.MonitorHealthy, 1)
	if rep.Credits == nil || rep.Credits.RemainingPath != "result.quota.left_units" {
		t.Errorf("credits = %+v", rep.Credits)
	}
}

func TestFlatCreditLayoutEmitsOnlyWhatItShows(t *testing.T) {
	sim, url := newSim(t, func(c *geosim.Config) { c.Allowance, c.TopUp = 400, 25 })
	sim.SetCreditsLayout(geosim.CreditsLayoutFlat)
	h := newHarness(t, url, testConfig(), nil)
	_, pts := h.run(t)
	pts.want(t, metricnames.CreditsRemaining, 425)
	pts.wantAbsent(t, metricnames.SubscriptionCredits, metricnames.TopUpCredits)
	pts.want(t, metricnames.MonitorHealthy, 1)
}

func TestModelListLayouts(t *testing.T) {
	for _, layout := range []geosim.ModelsLayout{geosim.ModelsLayoutNested, geosim.ModelsLayoutDataArray, geosim.ModelsLayoutBareArray} {
		sim, url := newSim(t)
		sim.SetModelsLayout(layout)
		h := newHarness(t, url, testConfig(), nil)
		_, pts := h.run(t)
		pts.want(t, metricnames.ModelsReady, 4)
		pts.want(t, metricnames.MonitorHealthy, 1)
	}
}

func TestKeyUnavailable(t *testing.T) {
	sim, url := newSim(t)
	h := newHarness(t, url, testConfig(), nil)
	h.keys.err = errSecretsDown
	rep, pts := h.run(t)
	pts.want(t, metricnames.MonitorHealthy, 0)
	if len(pts) != 1 {
		t.Errorf("metrics besides the heartbeat: %+v", pts)
	}
	if n := sim.CallCount(); n != 0 {
		t.Errorf("%d service calls without a key", n)
	}
	wantContains(t, "reasons", strings.Join(rep.Reasons, "\n"), "api_key", "secrets manager unavailable")
}

func TestRegeneratedKeyIsReadAgainAfter401(t *testing.T) {
	sim, url := newSim(t)
	h := newHarness(t, url, testConfig(), nil)
	h.keys.fresh = sim.RegenerateKey(fakeKey) // the cached key now gets 401
	rep, pts := h.run(t)
	pts.want(t, metricnames.MonitorHealthy, 1)
	pts.want(t, metricnames.CreditsRemaining, geosim.DefaultAllowance)
	if !rep.Healthy || h.keys.refreshes == 0 {
		t.Errorf("healthy=%v refreshes=%d reasons=%v", rep.Healthy, h.keys.refreshes, rep.Reasons)
	}
}

func TestRevokedKeyIsUnhealthy(t *testing.T) {
	sim, url := newSim(t)
	sim.RevokeKey(fakeKey)
	h := newHarness(t, url, testConfig(), nil)
	rep, pts := h.run(t)
	pts.want(t, metricnames.MonitorHealthy, 0)
	pts.wantAbsent(t, metricnames.CreditsRemaining)
	wantContains(t, "reasons", strings.Join(rep.Reasons, "\n"), "credits:", "401")
}

// TestForecastFromHistory runs the monitor hourly on a fake clock against the
// simulator and DynamoDB Local: old readings fall out of the window, a steady
// burn gives the exact rate, and a top-up resets the series.
func TestForecastFromHistory(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	sim, url := newSim(t)
	cfg := testConfig()
	h := newHarness(t, url, cfg, NewHistory(codeClient(client), table, cfg.PipelineName, cfg.HistoryTTL))

	step := func(at time.Time, subscription, topUp int) (Report, points) {
		t.Helper()
		sim.AddAccount(geosim.DefaultOrg, subscription, topUp)
		h.now = at
		rep, pts := h.run(t)
		pts.want(t, metricnames.MonitorHealthy, 1)
		pts.want(t, metricnames.CreditsRemaining, float64(subscription+topUp))
		return rep, pts
	}
	// Too few readings: neither figure is emitted (a 0 burn or 0 days would
	// read as "nothing spent" or "runs out now"; CreditsRunningOut treats the
	// missing days as "keep the last state"), and the report has them null.
	wantNoForecast := func(rep Report, pts points, reason string) {
		t.Helper()
		pts.wantAbsent(t, metricnames.CreditBurnPerDay, metricnames.CreditDaysRemaining)
		if rep.Forecast == nil {
			t.Fatal("no forecast in the report")
		}
		if rep.Forecast.BurnPerDay != nil || rep.Forecast.DaysRemaining != nil {
			t.Errorf("too few readings, yet burn %v, days %v", rep.Forecast.BurnPerDay, rep.Forecast.DaysRemaining)
		}
		wantContains(t, "forecast reason", rep.Forecast.Reason, reason)
	}

	// A reading from yesterday-and-more, outside the 24 h window.
	rep, pts := step(t0.Add(-30*time.Hour), 5000, 0)
	wantNoForecast(rep, pts, "only 1 reading")
	rep, pts = step(t0, 1000, 0)
	wantNoForecast(rep, pts, "only 1 reading") // the 5000 reading is out of the window

	step(t0.Add(time.Hour), 990, 0)
	step(t0.Add(2*time.Hour), 980, 0)
	rep, pts = step(t0.Add(3*time.Hour), 970, 0) // 10 an hour: 240 a day
	pts.want(t, metricnames.CreditBurnPerDay, 240)
	pts.want(t, metricnames.CreditDaysRemaining, 970.0/240)
	if rep.Forecast.Used != 4 {
		t.Errorf("forecast used %d readings, want 4", rep.Forecast.Used)
	}

	rep, pts = step(t0.Add(4*time.Hour), 960, 500) // top-up
	wantNoForecast(rep, pts, "top-up")
	rep, pts = step(t0.Add(5*time.Hour), 955, 500)
	pts.want(t, metricnames.CreditBurnPerDay, 120)
	pts.want(t, metricnames.CreditDaysRemaining, 1455.0/120)
	pts.want(t, metricnames.SubscriptionCredits, 955)
	pts.want(t, metricnames.TopUpCredits, 500)
	if rep.Forecast.Used != 2 {
		t.Errorf("forecast used %d readings, want 2", rep.Forecast.Used)
	}
	wantContains(t, "logs", h.logs.String(), `"burn_per_day":120`)
}

func TestHistoryFailureIsUnhealthyButKeepsReadings(t *testing.T) {
	client, _ := awspartstest.DynamoDB(t)
	_, url := newSim(t)
	h := newHarness(t, url, testConfig(), NewHistory(codeClient(client), "missing-table", "test-pipeline", time.Hour))
	rep, pts := h.run(t)
	pts.want(t, metricnames.MonitorHealthy, 0)
	pts.want(t, metricnames.CreditsRemaining, geosim.DefaultAllowance)
	pts.want(t, metricnames.ModelsReady, 4)
	pts.wantAbsent(t, metricnames.CreditBurnPerDay, metricnames.CreditDaysRemaining)
	wantContains(t, "reasons", strings.Join(rep.Reasons, "\n"), "forecast:", "missing-table")
}

// TestKeyNeverAppears runs every path that logs, including failures, with
// debug logging, and looks for the key in everything the monitor writes.
func TestKeyNeverAppears(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	sim, url := newSim(t)
	cfg := testConfig()
	cfg.ModelID = geosim.ModelRetired
	h := newHarness(t, url, cfg, NewHistory(codeClient(client), table, cfg.PipelineName, cfg.HistoryTTL))

	var all strings.Builder
	record := func(rep Report) {
		b, err := json.Marshal(rep)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
		all.Write(h.metrics.Bytes())
	}
	rep, _ := h.run(t) // healthy
	record(rep)
	sim.SetCreditsLayout(geosim.CreditsLayoutUnrecognised)
	rep, _ = h.run(t)
	record(rep)
	sim.SetFaults(geosim.Faults{ServerErrorRate: 1, AllEndpoints: true})
	rep, _ = h.run(t)
	record(rep)
	sim.ResetFaults()
	sim.RevokeKey(fakeKey) // 401 with the key in the request
	rep, _ = h.run(t)
	record(rep)

	all.WriteString(h.logs.String())
	all.WriteString(cfg.String())
	if all.Len() == 0 || !strings.Contains(h.logs.String(), `"level":"ERROR"`) {
		t.Fatal("the failure paths logged nothing; the check would prove nothing")
	}
	if strings.Contains(all.String(), fakeKey) {
		t.Errorf("the key appears in the monitor's output:\n%s", all.String())
	}
}
