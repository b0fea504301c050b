package pacer

import (
	"context"
	"time"

	"golang.org/x/time/rate"
)

// Instance paces one instance on its own, at its share of the account's
// rate. It needs no shared state, but N instances pacing independently are
// not in step: against a strict limiter their calls collide (see the
// benchmark report). It ignores Throttled.
type Instance struct {
	limiter *rate.Limiter
	clock   func() time.Time
}

// InstanceOptions tune an Instance.
type InstanceOptions struct {
	// Clock returns the current time. Default time.Now.
	Clock func() time.Time
}

// NewInstance returns a pacer granting perMinute slots a minute, burst 1.
func NewInstance(perMinute float64, optFns ...func(*InstanceOptions)) *Instance {
	o := InstanceOptions{Clock: time.Now}
	for _, fn := range optFns {
		fn(&o)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return &Instance{limiter: rate.NewLimiter(rate.Limit(perMinute/60), 1), clock: o.Clock}
}

// Reserve takes the instance's next token, provided it comes within the
// given time.
func (p *Instance) Reserve(_ context.Context, within time.Duration) (time.Duration, error) {
	now := p.clock()
	r := p.limiter.ReserveN(now, 1)
	if !r.OK() {
		return 0, ErrNoSlot
	}
	delay := r.DelayFrom(now)
	if delay > within {
		r.CancelAt(now)
		return 0, ErrNoSlot
	}
	return delay, nil
}

// Throttled does nothing: an instance pacer has no schedule to move.
func (p *Instance) Throttled(context.Context, time.Duration) {}

// Valid reports true: an instance pacer records no pause, so a slot it
// granted stays usable.
func (p *Instance) Valid(context.Context, time.Time) (bool, error) { return true, nil }
