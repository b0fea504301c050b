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
// A figure that could not be derived is absent (nil, null in JSON), never
// 0: a DaysRemaining of 0 would read "runs out today". With too few
// readings only Used, Needed and Reason are set.
type ForecastResult struct {
	// BurnPerDay is the credits consumed per day, from the least-squares
	// slope of the usable readings: nil with fewer than Needed readings
	// (or all at one instant), 0 when credits did not go down.
	BurnPerDay *float64 `json:"burn_per_day"`
	// DaysRemaining is Remaining / BurnPerDay; nil unless BurnPerDay > 0.
	DaysRemaining *float64 `json:"days_remaining"`
	// Remaining is the latest usable reading; nil when there is none.
	Remaining *float64 `json:"remaining"`
	// RunsOutAt is now + DaysRemaining.
	RunsOutAt time.Time `json:"runs_out_at,omitzero"`
	// Used is the number of readings the slope was fitted on (or would be);
	// SeriesStart the first of them (just after the latest top-up, if any).
	Used        int       `json:"used"`
	SeriesStart time.Time `json:"series_start,omitzero"`
	// Needed is the fewest readings a forecast is made from.
	Needed int `json:"readings_needed"`
	// AfterTopUp: the series starts at a rise in credits (a top-up or a
	// new subscription period), and earlier readings were set aside.
	AfterTopUp bool `json:"after_top_up,omitempty"`
	// Reason says why there is no forecast.
	Reason string `json:"reason,omitempty"`
}

// NotEnoughReadings reports a forecast still waiting for readings.
func (f ForecastResult) NotEnoughReadings() bool { return f.Used < f.Needed }

// Describe is the forecast in words for people, as the CLI prints it:
// "12.0 credits a day, 3.5 days left", "not enough readings yet (1 of 2)",
// or why there is none.
func (f ForecastResult) Describe() string {
	switch {
	case f.NotEnoughReadings():
		text := fmt.Sprintf("not enough readings yet (%d of %d)", f.Used, f.Needed)
		if f.AfterTopUp {
			text += " since credits last increased (top-up) at " + f.SeriesStart.UTC().Format(time.RFC3339)
		}
		return text
	case f.DaysRemaining != nil && f.BurnPerDay != nil:
		return fmt.Sprintf("%.1f credits a day, %s left", *f.BurnPerDay, runway(*f.DaysRemaining))
	case f.Reason != "":
		return f.Reason
	default:
		return "no forecast"
	}
}

// minForecastReadings is the fewest readings a slope can be fitted on.
const minForecastReadings = 2

// MinForecastSpan is the shortest time the readings of a forecast must
// cover: a forecast extrapolates a burn rate to days, and readings seconds
// apart measure a burst, not a rate any day keeps (a healthy local run,
// which reads before and after its uploads, forecast "304496.0 credits a
// day, 5 minutes left", and its dashboard's CreditsRunningOut went to
// ALARM). Five minutes is the monitor's default schedule period
// (monitorScheduleMinutes): a deployed stack forecasts from its second
// scheduled reading as before, and a shorter schedule waits until its
// readings span five minutes.
const MinForecastSpan = 5 * time.Minute

// Forecast estimates the credit burn rate and the days until credits run out.
//
// Readings after now are ignored (a skewed clock must not extrapolate into the
// future). The remaining readings are sorted by time and only those from the
// latest increase onwards are used: an increase is a top-up or a new
// subscription period, which resets the series. The burn rate is the negated
// least-squares slope of remaining over time, per day. ok is false, with a
// Reason, when fewer than two readings are usable or they span less than
// MinForecastSpan (BurnPerDay and DaysRemaining nil), or when credits are
// not going down (BurnPerDay 0, DaysRemaining nil).
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

	res := ForecastResult{Used: len(series), Needed: minForecastReadings, AfterTopUp: start > 0}
	if len(series) > 0 {
		res.SeriesStart = series[0].At
		res.Remaining = ptr(series[len(series)-1].Remaining)
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

	// Too short a span, readings at one instant included, makes no rate.
	if span := series[len(series)-1].At.Sub(series[0].At); span < MinForecastSpan {
		res.Reason = fmt.Sprintf("not enough history yet: %d readings over %s; a forecast needs them to span %s, as credits spent over seconds are no daily rate",
			len(series), span.Round(time.Second), shortSpan(MinForecastSpan))
		return res, false
	}
	slopePerSecond, ok := leastSquaresSlope(series)
	if !ok {
		res.Reason = "all readings share one timestamp"
		return res, false
	}
	// The series never rises (a rise starts a new one), so the slope is
	// at most 0; max keeps a rounding -0 or -1e-18 from showing.
	burn := max(-slopePerSecond*86400, 0)
	res.BurnPerDay = ptr(burn)
	if burn == 0 {
		res.Reason = fmt.Sprintf("no credit burn over %d readings since %s",
			len(series), series[0].At.UTC().Format(time.RFC3339))
		return res, false
	}
	days := max(*res.Remaining, 0) / burn
	res.DaysRemaining = ptr(days)
	res.RunsOutAt = now.Add(time.Duration(days * float64(24*time.Hour)))
	return res, true
}

func ptr(v float64) *float64 { return &v }

// shortSpan is "5 minutes" rather than Duration's "5m0s".
func shortSpan(d time.Duration) string {
	if d%time.Minute == 0 {
		return fmt.Sprintf("%d minutes", int(d/time.Minute))
	}
	return d.String()
}

// runway says how long credits last in the unit that keeps it readable:
// under a day "0.0 days" would read as "runs out now" (a short local run
// burns fast, and so may a busy day).
func runway(days float64) string {
	switch hours := days * 24; {
	case days >= 1:
		return fmt.Sprintf("%.1f days", days)
	case hours >= 1:
		return fmt.Sprintf("%.1f hours", hours)
	default:
		return fmt.Sprintf("%.0f minutes", hours*60)
	}
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
