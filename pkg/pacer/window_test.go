package pacer_test

import (
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
)

// wholeSecondLog is the service's limiter (its public backend): a log of
// call timestamps truncated to the second; a call is refused when limit
// calls of the last window's whole seconds are logged, and a refused call
// is not logged.
type wholeSecondLog struct {
	limit, window int64
	log           []int64
}

func (l *wholeSecondLog) call(at time.Time) bool {
	now := at.Unix()
	for len(l.log) > 0 && l.log[0] <= now-l.window {
		l.log = l.log[1:]
	}
	if int64(len(l.log)) >= l.limit {
		return false
	}
	l.log = append(l.log, now)
	return true
}

// TestWindowMarginMeetsWholeSecondTruncation: calls sent on the shared
// schedule's slots reach the service up to 0.9 s late, by a varying amount
// (uploads of different sizes). Slots spread over exactly a minute put 31
// calls into one window of 60 whole seconds now and then; with the window
// margin none is refused, at 98.4% of the rate.
func TestWindowMarginMeetsWholeSecondTruncation(t *testing.T) {
	const calls = 240
	refusals := func(margin time.Duration) (int, time.Duration) {
		clk := simclock.New(epoch.Add(300 * time.Millisecond))
		ps, _, _ := newPacers(t, 1, 30, clk.Now, func(o *pacer.Options) { o.Guard, o.WindowMargin = -1, margin })
		service := &wholeSecondLog{limit: 30, window: 60}
		refused := 0
		var first, last time.Time
		for i := range calls {
			slot, err := take(t, ps[0], clk, pacer.Unbounded)
			if err != nil {
				t.Fatal(err)
			}
			clk.Advance(slot.Sub(clk.Now()))
			// A spread the same every run: 0 to 0.9 s, varying call to
			// call, and not in step with the 30 calls of a window.
			late := time.Duration((i*7)%11) * 90 * time.Millisecond
			if !service.call(slot.Add(late)) {
				refused++
			}
			if i == 0 {
				first = slot
			}
			last = slot
		}
		return refused, last.Sub(first) / (calls - 1)
	}
	without, _ := refusals(-1)
	with, spacing := refusals(0)
	if without == 0 {
		t.Errorf("no refusal without the margin: the test does not exercise the truncation")
	}
	if with != 0 {
		t.Errorf("%d of %d calls refused with the window margin, want none", with, calls)
	}
	if share := float64(2*time.Second) / float64(spacing); spacing != 2033334*time.Microsecond || share < 0.98 {
		t.Errorf("spacing %v at 30/min is %.1f%% of the rate, want 61 s / 30 and at least 98%%", spacing, 100*share)
	}
	t.Logf("refused without the margin: %d of %d; with: %d (spacing %v)", without, calls, with, spacing)
}
