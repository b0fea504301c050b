package jobsim

import (
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
)

// loop is a discrete-event loop on a simulated clock: callbacks run one at
// a time in the order of their time (and of scheduling, for one time), the
// clock reading each one's time while it runs. Everything in a run is
// synchronous inside a callback (the real Feeder's DynamoDB, S3 and SQS
// calls included), so one goroutine runs the whole simulation and a run is
// deterministic for a seed. Unlike pacesim's actors no callback sleeps:
// a wait is a callback scheduled later, which keeps a run of 10^6 objects
// and 10^7 events within seconds a million.
type loop struct {
	now    time.Time
	events simclock.Events[func()]
	ran    int64
}

func newLoop(start time.Time) *loop { return &loop{now: start} }

// Now is the loop's clock, the func() time.Time the parts take.
func (l *loop) Now() time.Time { return l.now }

// at runs fn at t (now, if t is past).
func (l *loop) at(t time.Time, fn func()) {
	if t.Before(l.now) {
		t = l.now
	}
	l.events.Push(t, fn)
}

// after runs fn d from now.
func (l *loop) after(d time.Duration, fn func()) { l.at(l.now.Add(d), fn) }

// run runs events until none is left, until stop reports true (checked
// after each event), or until the next is after until.
func (l *loop) run(until time.Time, stop func() bool) {
	for l.events.Len() > 0 {
		if l.events.Next().After(until) {
			return
		}
		var fn func()
		l.now, fn = l.events.Pop()
		fn()
		l.ran++
		if stop() {
			return
		}
	}
}
