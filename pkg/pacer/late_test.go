package pacer_test

import (
	"context"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
)

// Against a token bucket (IgnoreServiceClock) a call may leave late only
// by the room a 429's widening added above the floor: none at rest, where
// the guard is spent on the instances' clocks. Against the sliding log of
// whole seconds the pacer cannot tell (ok false).
func TestALateCallIsAllowedOnlyTheWideningsRoom(t *testing.T) {
	clk := simclock.New(epoch)
	ps, _, _ := newPacers(t, 1, 60, clk.Now, func(o *pacer.Options) { o.IgnoreServiceClock = true })
	if _, err := take(t, ps[0], clk, pacer.Unbounded); err != nil {
		t.Fatal(err)
	}
	if a, ok := ps[0].LateAllowance(); !ok || a != 0 {
		t.Errorf("allowance at rest = %v (ok %v), want 0 told", a, ok)
	}
	// A 429 asking for 50 ms widens the 1 s spacing by as much (within 3 to 10%).
	ps[0].Throttled(context.Background(), 50*time.Millisecond)
	if a, ok := ps[0].LateAllowance(); !ok || a != 50*time.Millisecond {
		t.Errorf("allowance after a widening = %v (ok %v), want 50ms told", a, ok)
	}

	sliding, _, _ := newPacers(t, 1, 60, clk.Now)
	if a, ok := sliding[0].LateAllowance(); ok {
		t.Errorf("allowance against a sliding log = %v told, want none told", a)
	}
}
