package pacer

import "time"

// LateAllowance is how late a call may leave after its slot without
// crowding the next slot's call, when the pacer can tell (ok). Against a
// limiter that does not count whole seconds of the service's clock
// (IgnoreServiceClock: a token bucket, which refuses a call that comes
// less than 1/R after the one before), the guard is already spent on the
// instances' clocks and timers it is sized for: only the room a 429's
// widening has since added above the floor is free, none at rest. Against
// the sliding log of whole seconds it cannot tell (ok false): a late call
// there is absorbed by the window margin or, aimed, by where in the
// service's second calls are aimed (phase.go's aimInSecond), and the
// caller's own bound applies.
func (p *itemPacer) LateAllowance() (allowance time.Duration, ok bool) {
	if !p.opts.IgnoreServiceClock {
		return 0, false
	}
	return max(p.Interval()-time.Duration(p.floor)*time.Microsecond, 0), true
}
