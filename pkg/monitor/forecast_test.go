package monitor

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// series returns readings every step starting at t0 with the given values.
func series(step time.Duration, values ...float64) []Reading {
	out := make([]Reading, len(values))
	for i, v := range values {
		out[i] = Reading{At: t0.Add(time.Duration(i) * step), Remaining: v}
	}
	return out
}

func TestForecast(t *testing.T) {
	hour := time.Hour
	tests := []struct {
		name       string
		readings   []Reading
		now        time.Time
		wantOK     bool
		wantBurn   float64 // per day
		wantDays   float64
		wantUsed   int
		wantReason string
	}{
		{
			name:     "steady burn",
			readings: series(hour, 1000, 990, 980, 970, 960), // 10 per hour
			now:      t0.Add(4 * hour),
			wantOK:   true, wantBurn: 240, wantDays: 960.0 / 240, wantUsed: 5,
		},
		{
			name: "top-up in the middle resets the series",
			// burning 20/hour, top-up of 500, then burning 5/hour
			readings: series(hour, 100, 80, 60, 560, 555, 550, 545),
			now:      t0.Add(6 * hour),
			wantOK:   true, wantBurn: 120, wantDays: 545.0 / 120, wantUsed: 4,
		},
		{
			name:       "flat",
			readings:   series(hour, 500, 500, 500, 500),
			now:        t0.Add(3 * hour),
			wantReason: "no credit burn",
			wantUsed:   4,
		},
		{
			name:       "single reading",
			readings:   series(hour, 500),
			now:        t0,
			wantReason: "only 1 reading(s) in the window",
			wantUsed:   1,
		},
		{
			name:       "no readings",
			now:        t0,
			wantReason: "no credit readings",
		},
		{
			name:       "top-up just happened",
			readings:   series(hour, 100, 90, 80, 1080),
			now:        t0.Add(3 * hour),
			wantReason: "since credits last increased",
			wantUsed:   1,
		},
		{
			name: "noisy burn at irregular times",
			// about 48/day: 2 per hour on average with jitter in both axes
			readings: []Reading{
				{t0, 1000},
				{t0.Add(55 * time.Minute), 998},
				{t0.Add(2*hour + 10*time.Minute), 995},
				{t0.Add(3 * hour), 994},
				{t0.Add(3*hour + 50*time.Minute), 992},
				{t0.Add(5*hour + 5*time.Minute), 990},
				{t0.Add(6 * hour), 988},
			},
			now:    t0.Add(6 * hour),
			wantOK: true, wantBurn: 48, wantUsed: 7,
		},
		{
			name:     "unsorted input is sorted",
			readings: []Reading{{t0.Add(2 * hour), 80}, {t0, 100}, {t0.Add(hour), 90}},
			now:      t0.Add(2 * hour),
			wantOK:   true, wantBurn: 240, wantDays: 80.0 / 240, wantUsed: 3,
		},
		{
			name:     "readings after now are ignored",
			readings: append(series(hour, 100, 90, 80), Reading{t0.Add(10 * hour), 1}),
			now:      t0.Add(2 * hour),
			wantOK:   true, wantBurn: 240, wantDays: 80.0 / 240, wantUsed: 3,
		},
		{
			name:       "same instant",
			readings:   []Reading{{t0, 100}, {t0, 90}},
			now:        t0,
			wantReason: "not enough history yet: 2 readings over 0s; a forecast needs them to span 5 minutes",
			wantUsed:   2,
		},
		{
			// A local run reads before and after its uploads: a burst of
			// seconds is no daily rate (it said "5 minutes left").
			name:       "readings seconds apart",
			readings:   []Reading{{t0, 1000}, {t0.Add(9 * time.Second), 992}},
			now:        t0.Add(9 * time.Second),
			wantReason: "not enough history yet: 2 readings over 9s; a forecast needs them to span 5 minutes, as credits spent over seconds are no daily rate",
			wantUsed:   2,
		},
		{
			name:       "a minute-schedule waits until five minutes are covered",
			readings:   series(time.Minute, 100, 99, 98, 97, 96),
			now:        t0.Add(4 * time.Minute),
			wantReason: "5 readings over 4m0s",
			wantUsed:   5,
		},
		{
			name:     "two readings one default period apart are enough",
			readings: series(MinForecastSpan, 100, 90),
			now:      t0.Add(MinForecastSpan),
			wantOK:   true, wantBurn: 10 * 12 * 24, wantDays: 90.0 / (10 * 12 * 24), wantUsed: 2,
		},
		{
			name:     "overdrawn balance gives zero days",
			readings: series(hour, 10, 0, -10),
			now:      t0.Add(2 * hour),
			wantOK:   true, wantBurn: 240, wantDays: 0, wantUsed: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Forecast(tt.readings, tt.now)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v (reason %q)", ok, tt.wantOK, got.Reason)
			}
			if got.Used != tt.wantUsed {
				t.Errorf("used = %d, want %d", got.Used, tt.wantUsed)
			}
			if !ok {
				if !strings.Contains(got.Reason, tt.wantReason) {
					t.Errorf("reason = %q, want it to contain %q", got.Reason, tt.wantReason)
				}
				// Absent, never 0: only a flat series has a measured burn (0),
				// and no forecast has days remaining.
				flat := tt.wantReason == "no credit burn"
				if got.DaysRemaining != nil || (got.BurnPerDay != nil) != flat || (flat && *got.BurnPerDay != 0) {
					t.Errorf("no forecast but burn=%v days=%v", fmtPtr(got.BurnPerDay), fmtPtr(got.DaysRemaining))
				}
				return
			}
			if got.Reason != "" {
				t.Errorf("reason = %q on success", got.Reason)
			}
			tolerance := 1e-6
			if strings.HasPrefix(tt.name, "noisy") {
				tolerance = 0.05 * tt.wantBurn // within 5% of the true rate
			}
			if got.BurnPerDay == nil || got.DaysRemaining == nil || got.Remaining == nil {
				t.Fatalf("forecast without a figure: burn=%v days=%v remaining=%v",
					fmtPtr(got.BurnPerDay), fmtPtr(got.DaysRemaining), fmtPtr(got.Remaining))
			}
			if math.Abs(*got.BurnPerDay-tt.wantBurn) > tolerance {
				t.Errorf("burn/day = %v, want %v", *got.BurnPerDay, tt.wantBurn)
			}
			wantDays := tt.wantDays
			if strings.HasPrefix(tt.name, "noisy") {
				wantDays = *got.Remaining / *got.BurnPerDay
			}
			if math.Abs(*got.DaysRemaining-wantDays) > 1e-6 {
				t.Errorf("days remaining = %v, want %v", *got.DaysRemaining, wantDays)
			}
			wantOut := tt.now.Add(time.Duration(*got.DaysRemaining * float64(24*time.Hour)))
			if !got.RunsOutAt.Equal(wantOut) {
				t.Errorf("runs out at %v, want %v", got.RunsOutAt, wantOut)
			}
		})
	}
}

func fmtPtr(v *float64) string {
	if v == nil {
		return "nil"
	}
	return fmt.Sprint(*v)
}

// TestTooFewReadingsAreAbsentNotZero: the "runs out today". With
// one reading the JSON has null burn and days (never 0, which reads as
// credits running out now), and the words say how many readings there are
// of how many are needed.
func TestTooFewReadingsAreAbsentNotZero(t *testing.T) {
	got, ok := Forecast(series(time.Hour, 500), t0)
	if ok {
		t.Fatal("a forecast from one reading")
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(b, &fields); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"burn_per_day", "days_remaining"} {
		if v, present := fields[name]; !present || v != nil {
			t.Errorf("%s = %v (present %v), want null in %s", name, v, present, b)
		}
	}
	if fields["remaining"] != 500.0 || fields["used"] != 1.0 || fields["readings_needed"] != 2.0 {
		t.Errorf("remaining, used, needed: %s", b)
	}
	if want := "not enough readings yet (1 of 2)"; got.Describe() != want {
		t.Errorf("Describe() = %q, want %q", got.Describe(), want)
	}

	none, _ := Forecast(nil, t0)
	if none.Remaining != nil || none.Describe() != "not enough readings yet (0 of 2)" {
		t.Errorf("no readings: remaining %v, %q", fmtPtr(none.Remaining), none.Describe())
	}
	topUp, _ := Forecast(series(time.Hour, 100, 90, 1090), t0.Add(2*time.Hour))
	if want := "not enough readings yet (1 of 2) since credits last increased (top-up) at 2026-11-22T12:00:00Z"; topUp.Describe() != want {
		t.Errorf("after a top-up: %q, want %q", topUp.Describe(), want)
	}
	full, _ := Forecast(series(time.Hour, 1000, 990, 980), t0.Add(2*time.Hour))
	if want := "240.0 credits a day, 4.1 days left"; full.Describe() != want {
		t.Errorf("a forecast: %q, want %q", full.Describe(), want)
	}
	// Under a day, hours or minutes: "0.0 days" would read as "now".
	fast, _ := Forecast(series(time.Hour, 100, 60), t0.Add(time.Hour))
	if want := "960.0 credits a day, 1.5 hours left"; fast.Describe() != want {
		t.Errorf("under a day: %q, want %q", fast.Describe(), want)
	}
	faster, _ := Forecast(series(5*time.Minute, 100, 90), t0.Add(5*time.Minute))
	if want := "2880.0 credits a day, 45 minutes left"; faster.Describe() != want {
		t.Errorf("under an hour: %q, want %q", faster.Describe(), want)
	}
	flat, _ := Forecast(series(time.Hour, 500, 500), t0.Add(time.Hour))
	if !strings.HasPrefix(flat.Describe(), "no credit burn over 2 readings") {
		t.Errorf("flat: %q", flat.Describe())
	}
}

// TestNoForecastMetricsFromReadingsSecondsApart: a local run's monitor
// reads before and after its uploads, seconds apart. Neither
// CreditBurnPerDay nor CreditDaysRemaining is published from such a pair,
// so CreditsRunningOut (days remaining below creditsForecastDays) has
// nothing to go to ALARM on; the report says why there is no forecast.
func TestNoForecastMetricsFromReadingsSecondsApart(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	sim, url := newSim(t)
	cfg := testConfig()
	h := newHarness(t, url, cfg, NewHistory(codeClient(client), table, cfg.PipelineName, cfg.HistoryTTL))
	sim.AddAccount(geosim.DefaultOrg, 1000, 0)
	h.now = t0
	h.run(t)
	sim.AddAccount(geosim.DefaultOrg, 992, 0) // 8 photos predicted in 9 seconds
	h.now = t0.Add(9 * time.Second)
	rep, pts := h.run(t)
	pts.want(t, metricnames.CreditsRemaining, 992)
	pts.wantAbsent(t, metricnames.CreditBurnPerDay, metricnames.CreditDaysRemaining)
	if rep.Forecast == nil || rep.Forecast.DaysRemaining != nil {
		t.Fatalf("forecast %+v, want none", rep.Forecast)
	}
	wantContains(t, "forecast", rep.Forecast.Describe(), "not enough history yet: 2 readings over 9s")
}
