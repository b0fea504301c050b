package simclock

import (
	"container/heap"
	"time"
)

// Events is the agenda of a discrete-event simulation: values due at
// simulated times, taken earliest first and, among equal times, in the
// order they were added, so that a run is the same for the same seed
// whatever the heap's internal order. The zero value is empty and ready.
type Events[T any] struct {
	h   eventHeap[T]
	seq uint64
}

// Push adds v, due at at.
func (q *Events[T]) Push(at time.Time, v T) {
	q.seq++
	heap.Push(&q.h, event[T]{at: at, seq: q.seq, v: v})
}

// Len is how many values are due.
func (q *Events[T]) Len() int { return len(q.h) }

// Next is when the earliest value is due; Len must be above 0.
func (q *Events[T]) Next() time.Time { return q.h[0].at }

// Pop takes the earliest value and when it was due; Len must be above 0.
func (q *Events[T]) Pop() (time.Time, T) {
	e := heap.Pop(&q.h).(event[T])
	return e.at, e.v
}

type event[T any] struct {
	at  time.Time
	seq uint64
	v   T
}

type eventHeap[T any] []event[T]

func (h eventHeap[T]) Len() int { return len(h) }
func (h eventHeap[T]) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap[T]) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap[T]) Push(x any)   { *h = append(*h, x.(event[T])) }
func (h *eventHeap[T]) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = event[T]{} // the value's memory is not held after it ran
	*h = old[:len(old)-1]
	return e
}
