package jobsim

import (
	"math/rand/v2"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/jobmsg"
)

// The predictor's slot rules (pkg/predictor/slots.go), with its defaults.
var (
	maxSlotWait      = predictor.DefaultMaxSlotWait
	heldSlotLead     = predictor.DefaultHeldSlotLead
	heldSlotLateness = predictor.DefaultHeldSlotLateness
	parallelism      = predictor.DefaultParallelism
)

// Timings drawn per step (uniform), pacesim's figures (docs/benchmarks.md
// states them): a delivery's receive and invoke, the work before the slot
// (the claims, the object opened and sniffed), a hold's release and
// visibility change, the network each way with the upload, and the
// service's answer. recordTime is the ledger's write of the record.
var (
	receiveTime = [2]time.Duration{5 * time.Millisecond, 30 * time.Millisecond}
	preworkTime = [2]time.Duration{10 * time.Millisecond, 30 * time.Millisecond}
	releaseTime = [2]time.Duration{5 * time.Millisecond, 15 * time.Millisecond}
	networkLeg  = [2]time.Duration{5 * time.Millisecond, 175 * time.Millisecond}
	recordTime  = [2]time.Duration{3 * time.Millisecond, 10 * time.Millisecond}
)

const serviceLatency = 200 * time.Millisecond

func uniform(rng *rand.Rand, d [2]time.Duration) time.Duration {
	return d[0] + time.Duration(rng.Int64N(int64(d[1]-d[0])+1))
}

// schedule is the shared call schedule as the predictor meets it: a slot
// is the next free one at the pacer's spacing (pacer.DefaultSpacing, the
// rate pacer.Rate gives), in the order Reserves come. pacesim proves the
// real pacer keeps that spacing against the service's limiter; here it is
// the schedule every call of a run takes its place in.
type schedule struct {
	spacing time.Duration
	next    time.Time
}

func (s *schedule) reserve(now time.Time) time.Time {
	slot := s.next
	if slot.Before(now) {
		slot = now
	}
	s.next = slot.Add(s.spacing)
	return slot
}

// object is the ledger's view of one object version and run: claimed by a
// delivery now, the slot its record holds from a hold, and whether its
// record is written (the predictor's claim is exactly once per version and
// run: a later delivery of a recorded one ends without a call).
type object struct {
	claimed  bool
	recorded bool
	slot     time.Time
}

// consumers are the predictor: maxConcurrency instances, each receiving a
// batch, handling its messages parallelism at a time, and polling again
// when the batch is done (the event source's instances).
type consumers struct {
	r         *run
	batch     int
	idle      []*instance
	instances []*instance
	polling   int // polls under way
}

type instance struct {
	c *consumers
	// states is the instance's cache of job states (jobs.StateCache, as
	// each predictor instance keeps one); made with the job.
	states  *jobs.StateCache
	pending []*message // of the batch, not started yet
	active  int        // messages being handled
}

func newConsumers(r *run, n, batch int) *consumers {
	c := &consumers{r: r, batch: batch}
	for range n {
		in := &instance{c: c}
		c.instances = append(c.instances, in)
		c.idle = append(c.idle, in)
	}
	return c
}

// wake hands visible messages to idle instances, a batch each (the event
// source's long polls answer as soon as a message is visible).
func (c *consumers) wake() {
	for len(c.idle) > 0 && c.polling*c.batch < c.r.q.visible {
		in := c.idle[len(c.idle)-1]
		c.idle = c.idle[:len(c.idle)-1]
		c.polling++
		c.r.l.after(uniform(c.r.rng, receiveTime), in.poll)
	}
}

func (in *instance) poll() {
	c := in.c
	c.polling--
	msgs := c.r.q.receive(c.batch)
	if len(msgs) == 0 {
		c.idle = append(c.idle, in)
		return
	}
	in.pending = msgs
	for in.active < parallelism && len(in.pending) > 0 {
		in.start()
	}
	c.wake()
}

// start handles the batch's next message on a free worker.
func (in *instance) start() {
	m := in.pending[0]
	in.pending = in.pending[1:]
	in.active++
	r := in.c.r
	r.l.after(uniform(r.rng, preworkTime), func() { r.handle(in, m, in.finished) })
}

// finished is a worker done with its message: the next of the batch, or,
// the batch done, the next poll.
func (in *instance) finished() {
	in.active--
	if len(in.pending) > 0 {
		in.start()
		return
	}
	if in.active == 0 {
		in.c.idle = append(in.c.idle, in)
		in.c.wake()
	}
}

// handle is one delivery of m (pkg/predictor's claim, slotFor, hold and
// call); done is called when its worker is free.
func (r *run) handle(in *instance, m *message, done func()) {
	now := r.l.now
	var jm jobmsg.Object
	var key string
	if m.job {
		o, ok, err := jobmsg.Parse([]byte(m.body))
		if !ok || err != nil {
			r.badMessages++
			r.q.delete(m)
			done()
			return
		}
		if !r.engine.bucket.holds(o) {
			// The predictor's GetObject of a version the bucket does
			// not hold fails: a photo the job named wrong.
			r.wrong++
			r.engine.ended(o, jobs.OutcomeFailed, 0)
			r.q.delete(m)
			done()
			return
		}
		jm, key = o, o.Key+"\x00"+o.VersionID+"\x00"+o.Run
	} else {
		key = m.body
	}
	if m.job && r.engine.gate(in, jm) {
		// A paused or cancelled job's message ends without a claim or a
		// call (pkg/predictor's jobGate).
		r.dropped++
		r.q.delete(m)
		done()
		return
	}
	obj := r.ledger[key]
	if obj == nil {
		obj = &object{}
		r.ledger[key] = obj
	}
	switch {
	case obj.recorded:
		// The ledger's claim finds the record: nothing to call, and the
		// job counts the object skipped.
		r.duplicates++
		if m.job {
			r.engine.ended(jm, jobs.OutcomeSkipped, 0)
		}
		r.q.delete(m)
		done()
		return
	case obj.claimed:
		// Another delivery holds the claim: back after the visibility
		// timeout, as the predictor's retry of a busy claim.
		r.busyClaims++
		done()
		return
	}
	obj.claimed = true
	slot, held := time.Time{}, false
	if !obj.slot.IsZero() {
		if now.Sub(obj.slot) <= heldSlotLateness {
			slot, held = obj.slot, true
		} else {
			r.givenUp++
		}
		obj.slot = time.Time{}
	}
	if slot.IsZero() {
		slot = r.sched.reserve(now)
	}
	limit := maxSlotWait
	if held {
		limit += heldSlotLead
	}
	if r.maxRecv > 0 && m.receives >= r.maxRecv {
		// The last allowed receive waits as long as it takes rather than
		// send the message to the dead-letter queue.
		limit = r.visibility
	}
	if wait := slot.Sub(now); wait > limit {
		r.holds++
		r.l.after(uniform(r.rng, releaseTime), func() {
			obj.claimed, obj.slot = false, slot
			r.q.hide(m, slot.Sub(r.l.now)-heldSlotLead)
			done()
		})
		return
	}
	r.l.at(slot, func() {
		r.calledAt(r.l.now)
		if m.job && r.engine.paused(r.l.now) {
			r.pausedCalls++
		}
		answer := uniform(r.rng, networkLeg) + serviceLatency + uniform(r.rng, networkLeg) + uniform(r.rng, recordTime)
		r.l.after(answer, func() {
			obj.claimed, obj.recorded = false, true
			r.recorded(m, jm)
			r.q.delete(m)
			done()
		})
	})
}
