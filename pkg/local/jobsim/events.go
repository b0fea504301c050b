package jobsim

import (
	"container/heap"
	"time"
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
	seq    uint64
	events eventHeap
	ran    int64
}

type event struct {
	at  time.Time
	seq uint64
	fn  func()
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = event{}
	*h = old[:len(old)-1]
	return e
}

func newLoop(start time.Time) *loop { return &loop{now: start} }

// Now is the loop's clock, the func() time.Time the parts take.
func (l *loop) Now() time.Time { return l.now }

// at runs fn at t (now, if t is past).
func (l *loop) at(t time.Time, fn func()) {
	if t.Before(l.now) {
		t = l.now
	}
	l.seq++
	heap.Push(&l.events, event{at: t, seq: l.seq, fn: fn})
}

// after runs fn d from now.
func (l *loop) after(d time.Duration, fn func()) { l.at(l.now.Add(d), fn) }

// run runs events until none is left, until stop reports true (checked
// after each event), or until the next is after until.
func (l *loop) run(until time.Time, stop func() bool) {
	for l.events.Len() > 0 {
		if l.events[0].at.After(until) {
			return
		}
		e := heap.Pop(&l.events).(event)
		l.now = e.at
		e.fn()
		l.ran++
		if stop() {
			return
		}
	}
}
