package sqsqueue

import (
	"context"
	"testing"
	"time"
)

// receiveAll receives every visible message and returns their receipts.
func receiveAll(t *testing.T, q *Queue) []string {
	t.Helper()
	var receipts []string
	for _, m := range q.Receive(context.Background(), 10, 0) {
		receipts = append(receipts, m.ReceiptHandle)
	}
	return receipts
}

func TestMetricsFollowSQSDefinitions(t *testing.T) {
	clock := newManualClock()
	q := New(WithClock(clock.Now), WithVisibilityTimeout(time.Minute), WithMaxReceiveCount(4))

	if m := q.Metrics(); m.Active || m.DeadLetterActive || m.HasAge {
		t.Fatalf("a queue nobody touched publishes metrics: %+v", m)
	}

	old := q.Send("old")
	clock.Advance(10 * time.Minute)
	q.Send("young")
	clock.Advance(time.Minute)

	m := q.Metrics()
	if !m.Active || m.Visible != 2 || m.NotVisible != 0 || m.Sent != 2 {
		t.Fatalf("after two sends: %+v", m)
	}
	if !m.HasAge || m.AgeOfOldest != 11*time.Minute {
		t.Errorf("age of oldest %v (has %v), want 11m: ages count from the send", m.AgeOfOldest, m.HasAge)
	}

	// Received three times without being deleted, the old message leaves
	// the age metric, which then points at the younger one.
	for i := range 3 {
		receipts := receiveAll(t, q)
		if len(receipts) == 0 {
			t.Fatalf("receive %d: nothing visible", i+1)
		}
		if i == 0 {
			// In flight counts as not visible, and still ages.
			if m := q.Metrics(); m.NotVisible != 2 || m.Visible != 0 || m.AgeOfOldest != 11*time.Minute {
				t.Errorf("in flight: %+v", m)
			}
			// The young one succeeds at once.
			for _, r := range receipts[1:] {
				if err := q.Ack(r); err != nil {
					t.Fatal(err)
				}
			}
		}
		clock.Advance(time.Minute)
	}
	m = q.Metrics()
	if m.HasAge {
		t.Errorf("a message received 3 times still sets the age (%v): SQS leaves it out", m.AgeOfOldest)
	}
	if m.Deleted != 1 || m.Received != 4 {
		t.Errorf("deleted %d, received %d; want 1 and 4 (3 deliveries of old, 1 of young)", m.Deleted, m.Received)
	}

	// The fourth receive is the last; the next attempt moves it to the
	// dead-letter queue, which is not a send there.
	receiveAll(t, q)
	clock.Advance(time.Minute)
	receiveAll(t, q)
	m = q.Metrics()
	if m.DeadLetterVisible != 1 || m.DeadLettered != 1 || !m.DeadLetterActive {
		t.Fatalf("after the redrive: %+v", m)
	}
	if m.Sent != 2 {
		t.Errorf("sent %d: a redriven message is not a send", m.Sent)
	}
	// A dead-letter queue's age counts from the move (a minute ago), not
	// from the original send (over 15 minutes ago).
	if !m.DeadLetterHasAge || m.DeadLetterAge != 0 {
		t.Errorf("dead-letter age %v, want 0: counted from the move, not from the send of %s", m.DeadLetterAge, old)
	}
	clock.Advance(time.Minute)
	if m := q.Metrics(); m.DeadLetterAge != time.Minute {
		t.Errorf("a minute after the move the dead-letter age is %v", m.DeadLetterAge)
	}

	// Polled, the upload queue stays active while empty; the dead-letter
	// queue, once purged, goes quiet six hours later.
	if n := q.PurgeDeadLetters(); n != 1 {
		t.Fatalf("purged %d, want 1", n)
	}
	clock.Advance(6*time.Hour - time.Minute)
	receiveAll(t, q)
	if m := q.Metrics(); !m.Active || !m.DeadLetterActive {
		t.Errorf("within six hours: active %v, dead-letter active %v", m.Active, m.DeadLetterActive)
	}
	clock.Advance(time.Minute)
	if m := q.Metrics(); !m.Active || m.DeadLetterActive {
		t.Errorf("six hours after the purge: active %v (polled a minute ago), dead-letter active %v", m.Active, m.DeadLetterActive)
	}
	clock.Advance(6 * time.Hour)
	if m := q.Metrics(); m.Active {
		t.Error("an empty queue nobody polled for six hours still publishes")
	}
}

func TestPollInvokesOneBatchWithoutWaiting(t *testing.T) {
	clock := newManualClock()
	q := New(WithClock(clock.Now))
	var batches []int
	p := &Poller{Queue: q, BatchSize: 2, Handler: func(_ context.Context, ev struct{ Records []struct{} }) error {
		batches = append(batches, len(ev.Records))
		return nil
	}}
	if _, ok := p.Poll(context.Background()); ok {
		t.Fatal("Poll on an empty queue invoked the handler")
	}
	for range 3 {
		q.Send("m")
	}
	for {
		res, ok := p.Poll(context.Background())
		if !ok {
			break
		}
		if res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	if len(batches) != 2 || batches[0] != 2 || batches[1] != 1 {
		t.Errorf("batches %v, want [2 1]", batches)
	}
	if q.Len() != 0 || q.Metrics().Deleted != 3 {
		t.Errorf("after the polls: %d left, %d deleted", q.Len(), q.Metrics().Deleted)
	}
}
