package monitor

import (
	"fmt"
	"slices"
	"time"
)

// Reading is one observation of the remaining credits.
type Reading struct {
	At        time.Time `json:"at"`
	Remaining float64   `json:"remaining"`
}

// ForecastResult is the burn rate and runway derived from recent readings.
// When Forecast reports !ok, only Reason (and the counts) are meaningful.
type ForecastResult struct {
	// BurnPerDay is the credits consumed per day, from the least-squares
	// slope of the usable readings. Positive when ok.
	BurnPerDay float64 `json:"burn_per_day"`
	// DaysRemaining is Remaining / BurnPerDay.
	DaysRemaining float64 `json:"days_remaining"`
	// Remaining is the latest usable reading.
	Remaining float64 `json:"remaining"`
	// RunsOutAt is now + DaysRemaining.
	RunsOutAt time.Time `json:"runs_out_at,omitzero"`
	// Used is the number of readings the slope was fitted on; SeriesStart
	// the first of them (just after the latest top-up, if any).
	Used        int       `json:"used"`
	SeriesStart time.Time `json:"series_start,omitzero"`
	// Reason says why there is no forecast.
	Reason string `json:"reason,omitempty"`
}

// minForecastReadings is the fewest readings a slope can be fitted on.
const minForecastReadings = 2

// Forecast estimates the credit burn rate and the days until credits run out.
//
// Readings after now are ignored (a skewed clock must not extrapolate into the
// future). The remaining readings are sorted by time and only those from the
// latest increase onwards are used: an increase is a top-up or a new
// subscription period, which resets the series. The burn rate is the negated
// least-squares slope of remaining over time, per day. ok is false, with a
// Reason, when fewer than two readings are usable, when they all share one
// instant, or when credits are not going down.
func Forecast(readings []Reading, now time.Time) (ForecastResult, bool) {
	usable := make([]Reading, 0, len(readings))
	for _, r := range readings {
		if !r.At.After(now) {
			usable = append(usable, r)
		}
	}
	slices.SortStableFunc(usable, func(a, b Reading) int { return a.At.Compare(b.At) })

	start := 0
	for i := 1; i < len(usable); i++ {
		if usable[i].Remaining > usable[i-1].Remaining {
			start = i
		}
	}
	series := usable[start:]

	var res ForecastResult
	res.Used = len(series)
	if len(series) > 0 {
		res.SeriesStart = series[0].At
		res.Remaining = series[len(series)-1].Remaining
	}
	if len(series) < minForecastReadings {
		switch {
		case len(usable) == 0:
			res.Reason = "no credit readings in the window"
		case start > 0:
			res.Reason = fmt.Sprintf("only %d reading(s) since credits last increased (top-up) at %s; need %d",
				len(series), series[0].At.UTC().Format(time.RFC3339), minForecastReadings)
		default:
			res.Reason = fmt.Sprintf("only %d reading(s) in the window; need %d", len(series), minForecastReadings)
		}
		return res, false
	}

	slopePerSecond, ok := leastSquaresSlope(series)
	if !ok {
		res.Reason = "all readings share one timestamp"
		return res, false
	}
	burn := -slopePerSecond * 86400
	if burn <= 0 {
		res.Reason = fmt.Sprintf("no credit burn over %d readings since %s",
			len(series), series[0].At.UTC().Format(time.RFC3339))
		return res, false
	}
	res.BurnPerDay = burn
	res.DaysRemaining = max(res.Remaining, 0) / burn
	res.RunsOutAt = now.Add(time.Duration(res.DaysRemaining * float64(24*time.Hour)))
	return res, true
}

// leastSquaresSlope fits remaining = a + b*t and returns b in credits per
// second. Times are taken relative to the first reading so the sums stay
// small and exact enough in float64.
func leastSquaresSlope(series []Reading) (float64, bool) {
	t0 := series[0].At
	n := float64(len(series))
	var sumT, sumY float64
	for _, r := range series {
		sumT += r.At.Sub(t0).Seconds()
		sumY += r.Remaining
	}
	meanT, meanY := sumT/n, sumY/n
	var sxy, sxx float64
	for _, r := range series {
		dt := r.At.Sub(t0).Seconds() - meanT
		sxy += dt * (r.Remaining - meanY)
		sxx += dt * dt
	}
	if sxx == 0 {
		return 0, false
	}
	return sxy / sxx, true
}
