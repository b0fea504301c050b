package sqsqueue

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"
)

// ErrStaleReceipt is returned when a receipt handle is not the message's
// latest one (the message was received again since) or the message is gone.
// Real SQS answers such a delete with success but keeps the message; the
// local queue says so, so tests can count it.
var ErrStaleReceipt = errors.New("sqsqueue: stale or unknown receipt handle")

// pollInterval bounds how late a long-polling Receive notices that a
// visibility timeout expired.
const pollInterval = 10 * time.Millisecond

// Queue is an in-memory SQS standard queue with a dead-letter queue. It is
// safe for concurrent use.
type Queue struct {
	opts Options
	arn  string

	mu       sync.Mutex
	seq      uint64
	entries  []*entry          // send order; deleted entries are compacted away lazily
	receipts map[string]*entry // latest receipt handle -> entry
	live     int               // entries not deleted and not dead-lettered
	dead     []Message
	expired  int // messages dropped at the end of their retention period
	counts   counters
	// lastAction and deadLastAction are the last API action on the queue
	// (a receive, even an empty one, counts: pollers keep a queue active)
	// and the last message moved to the dead-letter queue.
	lastAction, deadLastAction time.Time
	rng                        *rand.Rand
	changed                    chan struct{} // closed and replaced whenever a message may have become visible
}

// New returns an empty queue. It panics when an option is out of SQS's
// range (see Create).
func New(optFns ...func(*Options)) *Queue {
	q, err := Create(optFns...)
	if err != nil {
		panic(err)
	}
	return q
}

// Create returns an empty queue, or the error CreateQueue would answer
// (InvalidAttributeValue) when an option is out of SQS's range.
func Create(optFns ...func(*Options)) (*Queue, error) {
	var o Options
	for _, fn := range optFns {
		fn(&o)
	}
	o.setDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	return &Queue{
		opts:     o,
		arn:      fmt.Sprintf("arn:aws:sqs:%s:%s:%s", o.Region, o.AccountID, o.Name),
		receipts: make(map[string]*entry),
		rng:      rand.New(rand.NewPCG(uint64(o.Seed), 0x10ca1)),
		changed:  make(chan struct{}),
	}, nil
}

// ARN is the queue's ARN, the eventSourceARN of its messages.
func (q *Queue) ARN() string { return q.arn }

// VisibilityTimeout is the queue's visibility timeout.
func (q *Queue) VisibilityTimeout() time.Duration { return q.opts.VisibilityTimeout }

// MaximumMessageSize is the largest body Send accepts, in bytes.
func (q *Queue) MaximumMessageSize() int { return q.opts.MaximumMessageSize }

// SendMessage enqueues body and returns the new message's id. Like SQS it
// refuses, with InvalidParameterValue, a body longer than the queue's
// MaximumMessageSize (256 KiB by default).
func (q *Queue) SendMessage(body string) (string, error) {
	return q.SendMessageDelayed(body, 0)
}

// SendMessageDelayed is SendMessage with DelaySeconds: the message stays
// invisible for delay after the send (SQS's ApproximateNumberOfMessagesDelayed)
// and then waits to be received like any other. Like SQS it refuses, with
// InvalidParameterValue, a delay outside 0 to 900 seconds (MaxDelay) or not
// a whole number of seconds.
func (q *Queue) SendMessageDelayed(body string, delay time.Duration) (string, error) {
	if len(body) > q.opts.MaximumMessageSize {
		return "", &Error{Code: CodeInvalidParameterValue, Message: fmt.Sprintf(
			"One or more parameters are invalid. Reason: Message must be shorter than %d bytes.", q.opts.MaximumMessageSize)}
	}
	if delay < 0 || delay > MaxDelay || delay%time.Second != 0 {
		return "", invalidParameter("DelaySeconds", seconds(delay), "must be a whole number of seconds from 0 to "+seconds(MaxDelay))
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	id := uuid.NewString()
	now := q.opts.Now()
	e := newEntry(q.nextSeq(), id, body, now)
	e.visibleAt = now.Add(delay)
	q.push(e)
	q.counts.sent++
	q.lastAction = now
	return id, nil
}

// Send is SendMessage for a body known to fit: it panics when SendMessage
// fails.
func (q *Queue) Send(body string) string {
	id, err := q.SendMessage(body)
	if err != nil {
		panic(err)
	}
	return id
}

// Receive returns up to max visible messages (SQS caps max at 10; so does
// this), making each invisible for the visibility timeout. When none is
// visible it waits up to wait (real time) for one, like a long poll. It
// returns early, possibly empty, when ctx is done.
func (q *Queue) Receive(ctx context.Context, max int, wait time.Duration) []events.SQSMessage {
	if max <= 0 {
		max = 1
	}
	if max > 10 {
		max = 10
	}
	deadline := time.Now().Add(wait)
	// SQS counts the 12-hour visibility limit from the time it receives
	// the ReceiveMessage request, not from when a long poll returns.
	requested := q.opts.Now()
	for {
		q.mu.Lock()
		msgs := q.receiveLocked(max, requested)
		changed := q.changed
		q.mu.Unlock()
		if len(msgs) > 0 {
			return msgs
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			return nil
		}
		timer := time.NewTimer(min(remaining, pollInterval))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-changed:
			timer.Stop()
		case <-timer.C:
		}
	}
}

func (q *Queue) receiveLocked(max int, requested time.Time) []events.SQSMessage {
	now := q.opts.Now()
	q.expireLocked(now)
	q.lastAction = now
	var out []events.SQSMessage
	var copies []*entry
	kept := q.entries[:0]
	for _, e := range q.entries {
		if e.deleted {
			continue
		}
		if len(out) < max && !e.visibleAt.After(now) {
			if q.opts.MaxReceiveCount > 0 && e.receiveCount >= q.opts.MaxReceiveCount {
				// SQS moves a message to the dead-letter queue when a receive
				// would exceed maxReceiveCount.
				q.removeLocked(e)
				dead := e.message()
				dead.DeadLetteredAt = now
				q.dead = append(q.dead, dead)
				q.counts.deadLettered++
				q.deadLastAction = now
				continue
			}
			q.deliverLocked(e, now, requested)
			out = append(out, e.sqsMessage(q.arn, q.opts.Region))
			if !e.isCopy && q.opts.DuplicateRate > 0 && q.rng.Float64() < q.opts.DuplicateRate {
				c := newEntry(q.nextSeq(), e.id, e.body, e.sentAt)
				c.isCopy = true
				c.receiveCount = e.receiveCount - 1
				c.firstReceive = e.firstReceive
				copies = append(copies, c)
			}
		}
		kept = append(kept, e)
	}
	clear(q.entries[len(kept):])
	q.entries = kept
	for _, c := range copies {
		q.push(c)
	}
	return out
}

func (q *Queue) deliverLocked(e *entry, now, requested time.Time) {
	if e.receipt != "" {
		delete(q.receipts, e.receipt)
	}
	e.receiveCount++
	q.counts.received++
	if e.firstReceive.IsZero() {
		e.firstReceive = now
	}
	e.receipt = fmt.Sprintf("local-%d-%d-%s", e.seq, e.receiveCount, uuid.NewString())
	e.receivedAt = requested
	e.visibleAt = now.Add(q.opts.VisibilityTimeout)
	e.visibilitySet = false
	q.receipts[e.receipt] = e
}

// Ack deletes the message received with receipt.
func (q *Queue) Ack(receipt string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.expireLocked(q.opts.Now())
	e, ok := q.receipts[receipt]
	if !ok || e.deleted {
		return ErrStaleReceipt
	}
	q.removeLocked(e)
	q.counts.deleted++
	q.lastAction = q.opts.Now()
	return nil
}

// ChangeVisibility makes the message received with receipt visible again
// after d (0: at once), like ChangeMessageVisibility, with its limits: d
// must be from 0 to 12 hours, and the message may not stay invisible past
// 12 hours after the receive that produced receipt; otherwise the error is
// SQS's InvalidParameterValue (errors.Is(err, ErrInvalidParameterValue))
// and the visibility is unchanged. Only the latest receipt handle changes
// the visibility (ErrStaleReceipt otherwise).
func (q *Queue) ChangeVisibility(receipt string, d time.Duration) error {
	if d < 0 || d > MaxVisibilityTimeout {
		return invalidParameter("VisibilityTimeout", seconds(d), "Must be between 0 and 43200, if provided.")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.opts.Now()
	q.expireLocked(now)
	e, ok := q.receipts[receipt]
	if !ok || e.deleted {
		return ErrStaleReceipt
	}
	if now.Add(d).Sub(e.receivedAt) > MaxVisibilityTimeout {
		return invalidParameter("VisibilityTimeout", seconds(d),
			"Total VisibilityTimeout for the message is beyond the limit [43200 seconds]")
	}
	e.visibleAt = now.Add(d)
	e.visibilitySet = true
	q.notifyLocked()
	return nil
}

// retryAfter makes a failed message visible again after d unless its
// visibility was already changed since it was received.
func (q *Queue) retryAfter(receipt string, d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	e, ok := q.receipts[receipt]
	if !ok || e.deleted || e.visibilitySet {
		return
	}
	e.visibleAt = q.opts.Now().Add(d)
	q.notifyLocked()
}

// NoteFailure records why the consumer holding receipt did not delete the
// message; a dead letter carries its last reason.
func (q *Queue) NoteFailure(receipt, reason string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.expireLocked(q.opts.Now())
	if e, ok := q.receipts[receipt]; ok && !e.deleted {
		e.lastFailure = reason
	}
}

// Depth is the number of messages waiting to be received
// (ApproximateNumberOfMessages).
func (q *Queue) Depth() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.expireLocked(q.opts.Now())
	return q.visibleLocked()
}

// InFlight is the number of received messages neither deleted nor visible
// again yet (ApproximateNumberOfMessagesNotVisible); messages still within
// their send delay are not in flight.
func (q *Queue) InFlight() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.opts.Now()
	q.expireLocked(now)
	delayed := 0
	for _, e := range q.entries {
		if !e.deleted && e.receiveCount == 0 && e.visibleAt.After(now) {
			delayed++
		}
	}
	return q.live - q.visibleLocked() - delayed
}

// Len is the number of messages neither deleted, dead-lettered nor
// expired: zero means every message sent has been handled one way or the
// other.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.expireLocked(q.opts.Now())
	return q.live
}

// DeadLetters returns the messages moved to the dead-letter queue, oldest
// first, less those past the dead-letter queue's retention period.
func (q *Queue) DeadLetters() []Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.expireLocked(q.opts.Now())
	return append([]Message(nil), q.dead...)
}

// Expired is the number of messages the queue and its dead-letter queue
// dropped at the end of their retention period.
func (q *Queue) Expired() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.expireLocked(q.opts.Now())
	return q.expired
}

// expireLocked drops the messages older than the retention period, in
// flight or not. Age counts from the original send, in the dead-letter
// queue too (SQS keeps a standard queue's enqueue timestamp there).
func (q *Queue) expireLocked(now time.Time) {
	for _, e := range q.entries {
		if !e.deleted && now.Sub(e.sentAt) >= q.opts.MessageRetentionPeriod {
			q.removeLocked(e)
			q.expired++
		}
	}
	kept := q.dead[:0]
	for _, m := range q.dead {
		if now.Sub(m.SentAt) >= q.opts.DeadLetterRetentionPeriod {
			q.expired++
			continue
		}
		kept = append(kept, m)
	}
	clear(q.dead[len(kept):])
	q.dead = kept
}

// NextVisible is when the next message becomes visible: now when one is
// visible already; false when the queue holds none. A simulation steps its
// clock to it instead of polling, as a long poll would see the message at
// once.
func (q *Queue) NextVisible() (time.Time, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.opts.Now()
	q.expireLocked(now)
	var next time.Time
	found := false
	for _, e := range q.entries {
		if e.deleted {
			continue
		}
		at := e.visibleAt
		if at.Before(now) {
			at = now
		}
		if !found || at.Before(next) {
			next, found = at, true
		}
	}
	return next, found
}

func (q *Queue) visibleLocked() int {
	now := q.opts.Now()
	n := 0
	for _, e := range q.entries {
		if !e.deleted && !e.visibleAt.After(now) {
			n++
		}
	}
	return n
}

func (q *Queue) push(e *entry) {
	q.entries = append(q.entries, e)
	q.live++
	q.notifyLocked()
}

func (q *Queue) removeLocked(e *entry) {
	e.deleted = true
	q.live--
	if e.receipt != "" {
		delete(q.receipts, e.receipt)
	}
}

func (q *Queue) nextSeq() uint64 {
	q.seq++
	return q.seq
}

func (q *Queue) notifyLocked() {
	close(q.changed)
	q.changed = make(chan struct{})
}

// Holds reports whether a message with this id is still in the queue,
// waiting or in flight (neither deleted nor dead-lettered).
func (q *Queue) Holds(messageID string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.expireLocked(q.opts.Now())
	for _, e := range q.entries {
		if !e.deleted && e.id == messageID {
			return true
		}
	}
	return false
}
