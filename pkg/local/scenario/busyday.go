package scenario

import (
	"context"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
)

// BusyDay describes the day BusyDay plays, for the page drawn from it.
const BusyDay = "a simulated busy day: one upload a minute from 08:00 to 18:00, one every four minutes at other hours, " +
	"and the service answering every prediction with an error from 14:00 to 14:30"

// PlayBusyDay runs d of the pipeline in operation on r, from r's start
// (midnight, for the hours to mean anything): the uploads of BusyDay, and
// its half-hour outage of the service at 14:00, during which the
// FailedPredictionRate alarm fires, and after which it clears, as in an
// incident. hour, if set, is called at the start of every simulated hour.
func (r *Rig) PlayBusyDay(ctx context.Context, d time.Duration, hour func(now time.Time)) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	err := r.Run(ctx, d, func(now time.Time) {
		day := now.Sub(now.Truncate(24 * time.Hour))
		if day%time.Hour == 0 && hour != nil {
			hour(now)
		}
		switch day {
		case 14 * time.Hour:
			r.Sim.SetFaults(geosim.Faults{ServerErrorRate: 1})
		case 14*time.Hour + 30*time.Minute:
			r.Sim.ResetFaults()
		}
		if office := day >= 8*time.Hour && day < 18*time.Hour; office || day%(4*time.Minute) == 0 {
			if err := r.Upload(ctx, 1); err != nil {
				cancel(err)
			}
		}
	})
	if cause := context.Cause(ctx); cause != nil && cause != context.Canceled {
		return cause
	}
	return err
}
