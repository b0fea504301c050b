package pacesim

import (
	"container/heap"
	"time"
)

// message is one upload's message: the slot it holds from an earlier
// delivery (zero: none) and how often it was received.
type message struct {
	id       int
	arrived  time.Time
	slot     time.Time // on the instance clock of whoever took it (skews are ms)
	granted  time.Time // when the slot was granted (true time)
	receives int
	visible  time.Time
}

// queue is the upload queue as the instances' event source sees it. New
// messages wait in order; a message returned to the queue (held for its
// slot, or retried later) is hidden until its time and then delivered
// before new ones. That is the model's reading of SQS's "best-effort
// ordering" that most favours held slots (docs/benchmarks.md says so):
// a returned message is received as soon as it is visible and a worker is
// free. The queue's clock ticks every deliveryTick.
type queue struct {
	s       *sched
	fresh   []*message
	hidden  hiddenHeap
	visible []*message
	idle    []*actor
	arrived int // messages added
}

// deliveryTick is how often hidden messages are checked for visibility:
// a returned message is delivered up to this late, besides the worker's
// own receive latency.
const deliveryTick = 10 * time.Millisecond

func newQueue(s *sched) *queue {
	q := &queue{s: s}
	s.onStop = append(s.onStop, func() {
		for _, w := range q.idle {
			s.push(s.now, w)
		}
		q.idle = nil
	})
	s.spawn(func(a *actor) {
		for a.sleep(deliveryTick) == nil {
			for q.hidden.Len() > 0 && !q.hidden[0].visible.After(s.now) {
				q.visible = append(q.visible, heap.Pop(&q.hidden).(*message))
				q.wakeOne()
			}
		}
	})
	return q
}

// add puts a new message in the queue.
func (q *queue) add(m *message) {
	q.fresh = append(q.fresh, m)
	q.arrived++
	q.wakeOne()
}

// giveBack hides m until at.
func (q *queue) giveBack(m *message, at time.Time) {
	m.visible = at
	heap.Push(&q.hidden, m)
}

func (q *queue) wakeOne() {
	if len(q.idle) == 0 {
		return
	}
	w := q.idle[0]
	q.idle = q.idle[1:]
	q.s.push(q.s.now, w)
}

// receive returns the next message for a free worker, waiting for one;
// nil once the run is over.
func (q *queue) receive(a *actor) *message {
	for {
		if q.s.stopping {
			return nil
		}
		if len(q.visible) > 0 {
			m := q.visible[0]
			q.visible = q.visible[1:]
			m.receives++
			return m
		}
		if len(q.fresh) > 0 {
			m := q.fresh[0]
			q.fresh = q.fresh[1:]
			m.receives++
			return m
		}
		q.idle = append(q.idle, a)
		q.s.yield <- struct{}{}
		<-a.wake
	}
}

// depth is how many messages wait, hidden or not.
func (q *queue) depth() int { return len(q.fresh) + len(q.visible) + q.hidden.Len() }

type hiddenHeap []*message

func (h hiddenHeap) Len() int { return len(h) }
func (h hiddenHeap) Less(i, j int) bool {
	if !h[i].visible.Equal(h[j].visible) {
		return h[i].visible.Before(h[j].visible)
	}
	return h[i].id < h[j].id
}
func (h hiddenHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *hiddenHeap) Push(x any)   { *h = append(*h, x.(*message)) }
func (h *hiddenHeap) Pop() any {
	old := *h
	m := old[len(old)-1]
	*h = old[:len(old)-1]
	return m
}
