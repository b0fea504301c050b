package pacesim

import (
	"context"
	"errors"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
)

// sched is a discrete-event scheduler on a simulated clock. Actors are
// goroutines, but only one runs at a time: an actor runs until it sleeps
// (or waits on a lock), hands control back, and the scheduler wakes the
// actor whose time is earliest, setting the clock to it. Runs are therefore
// deterministic for a seed, and the real pacer code, which takes a Clock
// and calls DynamoDB synchronously, runs unchanged inside an actor: the
// store's latency is a sleep on this clock.
//
// Invariant: an actor blocks only through sleep or simLock; blocking any
// other way (a channel, a sync.Mutex held across a sleep) deadlocks the run.
type sched struct {
	now    time.Time
	events simclock.Events[*actor]
	yield  chan struct{}
	// stopping: the run is over; every sleep returns errStopped at once.
	stopping bool
	// cur is the actor running now (the one last woken).
	cur *actor
	// onStop wake the actors parked outside the event heap (idle workers)
	// when the run ends.
	onStop []func()
}

// errStopped is what a sleep returns once the run is over.
var errStopped = errors.New("pacesim: run over")

func newSched(start time.Time) *sched {
	return &sched{now: start, yield: make(chan struct{})}
}

// actor is one simulated goroutine's handle: its wake-up channel.
type actor struct {
	s    *sched
	wake chan struct{}
}

// spawn starts fn as an actor at the current time (it runs when the
// scheduler reaches it). Called from the scheduler before run, or from an
// actor.
func (s *sched) spawn(fn func(a *actor)) {
	a := &actor{s: s, wake: make(chan struct{})}
	s.push(s.now, a)
	go func() {
		<-a.wake
		if !s.stopping {
			fn(a)
		}
		s.yield <- struct{}{}
	}()
}

func (s *sched) push(at time.Time, a *actor) {
	s.events.Push(at, a)
}

// sleep suspends the actor for d of simulated time.
func (a *actor) sleep(d time.Duration) error {
	s := a.s
	if s.stopping {
		return errStopped
	}
	s.push(s.now.Add(max(d, 0)), a)
	s.yield <- struct{}{}
	<-a.wake
	if s.stopping {
		return errStopped
	}
	return nil
}

// sleepUntil suspends the actor until t.
func (a *actor) sleepUntil(t time.Time) error { return a.sleep(t.Sub(a.s.now)) }

// ctxSleep adapts sleep to code that takes a context: the run's end is the
// context's.
func (a *actor) ctxSleep(_ context.Context, d time.Duration) error { return a.sleep(d) }

// run advances the clock event by event until until, then ends every actor
// (their sleeps return errStopped) and returns once all have exited.
func (s *sched) run(until time.Time) {
	for s.events.Len() > 0 && !s.events.Next().After(until) {
		var a *actor
		s.now, a = s.events.Pop()
		s.cur = a
		a.wake <- struct{}{}
		<-s.yield
	}
	s.stopping = true
	for _, fn := range s.onStop {
		fn()
	}
	for s.events.Len() > 0 {
		_, a := s.events.Pop()
		s.cur = a
		a.wake <- struct{}{}
		<-s.yield
	}
}

// simLock is a mutex for actors: a waiter sleeps on the scheduler instead
// of blocking the goroutine.
type simLock struct {
	held    bool
	waiters []*actor
}

func (l *simLock) lock(a *actor) error {
	if !l.held {
		l.held = true
		return nil
	}
	l.waiters = append(l.waiters, a)
	a.s.yield <- struct{}{}
	<-a.wake
	if a.s.stopping {
		return errStopped
	}
	return nil // ownership was handed over by unlock
}

func (l *simLock) unlock(s *sched) {
	if len(l.waiters) == 0 {
		l.held = false
		return
	}
	next := l.waiters[0]
	l.waiters = l.waiters[1:]
	s.push(s.now, next) // still held: handed to next
}
