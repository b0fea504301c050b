// Package simclock is a clock that tests move by hand, shared by every part
// that takes a clock (the simulator's rate limiter, the local queue, the
// ledger, the predictor), so a scenario of hours runs in no time.
package simclock

import (
	"sync"
	"time"
)

// Clock is a settable clock, safe for concurrent use. Its Now method is the
// func() time.Time the parts take as their clock.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a clock reading start.
func New(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
