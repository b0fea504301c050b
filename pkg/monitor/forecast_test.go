package monitor

import (
	"math"
	"strings"
	"testing"
	"time"
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
			wantReason: "share one timestamp",
			wantUsed:   2,
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
				if got.BurnPerDay != 0 || got.DaysRemaining != 0 {
					t.Errorf("no forecast but burn=%v days=%v", got.BurnPerDay, got.DaysRemaining)
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
			if math.Abs(got.BurnPerDay-tt.wantBurn) > tolerance {
				t.Errorf("burn/day = %v, want %v", got.BurnPerDay, tt.wantBurn)
			}
			wantDays := tt.wantDays
			if strings.HasPrefix(tt.name, "noisy") {
				wantDays = got.Remaining / got.BurnPerDay
			}
			if math.Abs(got.DaysRemaining-wantDays) > 1e-6 {
				t.Errorf("days remaining = %v, want %v", got.DaysRemaining, wantDays)
			}
			wantOut := tt.now.Add(time.Duration(got.DaysRemaining * float64(24*time.Hour)))
			if !got.RunsOutAt.Equal(wantOut) {
				t.Errorf("runs out at %v, want %v", got.RunsOutAt, wantOut)
			}
		})
	}
}
