package monitor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// readCredits reads the credit summary. A summary without a recognisable
// remaining figure is an error naming what was missing: the monitor never
// reports a number it did not read.
func (m *Monitor) readCredits(ctx context.Context, key string) (*CreditsReading, error) {
	var out *geoapi.CreditsOutput
	err := m.withKey(ctx, key, func(k string) error {
		var err error
		out, err = m.service.Credits(ctx, &geoapi.CreditsInput{APIKey: k, RemainingPath: m.cfg.CreditsPath})
		return err
	})
	if err != nil {
		var (
			layout *geoapi.LayoutError
			figure *geoapi.FigureError
		)
		if geoapi.KeyNotAccepted(err) {
			return nil, err // a state, not a failure: the caller estimates
		}
		if errors.As(err, &figure) {
			// Never published nor stored: the credit watch has no figure
			// this run, and says which one the service sent.
			return nil, fmt.Errorf("credit summary's remaining credits refused: %s", figure.Refusal)
		}
		if errors.As(err, &layout) {
			return nil, fmt.Errorf("credit summary layout not recognised: no %s (keys seen: %s); set %s to the dotted JSON path of the remaining credits",
				layout.Missing, strings.Join(layout.Keys, ", "), envvars.CreditsPath)
		}
		return nil, fmt.Errorf("read credit summary: %w", err)
	}
	if out.Remaining == nil { // the client reports this as a LayoutError; never trust a nil
		return nil, fmt.Errorf("credit summary layout not recognised: no remaining credits; set %s", envvars.CreditsPath)
	}
	reading := &CreditsReading{
		Refused:       out.Refused,
		Remaining:     *out.Remaining,
		Source:        SourceSummary,
		RemainingPath: out.RemainingPath,
		TopUp:         out.TopUpBalance,
		Subscription:  out.SubscriptionRemaining,
	}
	if reading.Subscription == nil && out.SubscriptionAllowance != nil && out.SubscriptionUsed != nil {
		left := *out.SubscriptionAllowance - *out.SubscriptionUsed
		if geoapi.CheckCreditFigure(left) == nil {
			reading.Subscription = &left
		}
	}
	return reading, nil
}

// forecast stores the reading taken at now and forecasts from the window of
// readings that ends with it. An error means the history could not be used;
// a result with ok false means there is not enough history yet, which is
// healthy.
func (m *Monitor) forecast(ctx context.Context, reading *CreditsReading, now time.Time) (ForecastResult, bool, error) {
	if err := m.history.put(ctx, Reading{At: now, Remaining: reading.Remaining}, reading.Source); err != nil {
		return ForecastResult{}, false, err
	}
	readings, err := m.history.Since(ctx, now.Add(-m.cfg.HistoryWindow), now)
	if err != nil {
		return ForecastResult{}, false, err
	}
	res, ok := Forecast(readings, now)
	return res, ok, nil
}
