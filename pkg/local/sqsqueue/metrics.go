package sqsqueue

import "time"

// The queue's CloudWatch metrics (namespace AWS/SQS, dimension QueueName),
// with the semantics SQS documents in "Available CloudWatch metrics for
// Amazon SQS", so local alarm scenarios see what the deployed alarms see.
const (
	MetricMessagesVisible    = "ApproximateNumberOfMessagesVisible"
	MetricMessagesNotVisible = "ApproximateNumberOfMessagesNotVisible"
	MetricAgeOfOldestMessage = "ApproximateAgeOfOldestMessage"
	MetricMessagesSent       = "NumberOfMessagesSent"
	MetricMessagesReceived   = "NumberOfMessagesReceived"
	MetricMessagesDeleted    = "NumberOfMessagesDeleted"
)

// ageReceiveLimit is the receive count from which SQS leaves a message out
// of ApproximateAgeOfOldestMessage: "After a message is received three times
// (or more) and not processed, the message is moved to the back of the queue
// and the ApproximateAgeOfOldestMessage metric points at the second-oldest
// message that hasn't been received more than three times."
const ageReceiveLimit = 3

// counters are the queue's running totals, from which the count metrics of
// a period are differences.
type counters struct {
	sent, received, deleted, deadLettered int64
}

// Metrics is what SQS would report for the queue and its dead-letter queue at
// one instant. Gauges are read at that instant; counts are running totals
// since the queue was created (a period's NumberOfMessagesSent is the
// difference of two readings).
type Metrics struct {
	// Visible and NotVisible are ApproximateNumberOfMessagesVisible and
	// ApproximateNumberOfMessagesNotVisible (in flight).
	Visible, NotVisible int
	// Delayed is ApproximateNumberOfMessagesDelayed: sent with a delay
	// that has not passed yet (never received, so not in flight either).
	Delayed int
	// AgeOfOldest is ApproximateAgeOfOldestMessage: the age, from its
	// original send, of the oldest message not deleted (waiting or in flight)
	// that has been received fewer than three times; zero with no such message.
	// HasAge is false then, and SQS publishes no age.
	AgeOfOldest time.Duration
	HasAge      bool

	// Sent, Received and Deleted are running totals of SendMessage,
	// receives (each delivery of a message, redeliveries included) and
	// deletes. Messages moved to the dead-letter queue by the redrive
	// policy are not deletes, and are not sends of the dead-letter queue:
	// SQS counts NumberOfMessagesSent only for messages sent by a client.
	Sent, Received, Deleted int64

	// DeadLetterVisible is the dead-letter queue's
	// ApproximateNumberOfMessagesVisible (nothing consumes it, so every
	// message it holds is visible); DeadLetterAge is its
	// ApproximateAgeOfOldestMessage, with DeadLetterHasAge false when it is
	// empty. For a dead-letter queue SQS counts that age from the move, not
	// from the original send ("The ApproximateAgeOfOldestMessage metric
	// indicates when the message moved to the dead-letter queue, not when the
	// message was originally sent", SQS Developer Guide, Setting-up
	// dead-letter queue retention), while the message still EXPIRES by its
	// original enqueue time.
	DeadLetterVisible int
	DeadLetterAge     time.Duration
	DeadLetterHasAge  bool
	// DeadLettered is the running total of messages moved to the
	// dead-letter queue.
	DeadLettered int64

	// Active and DeadLetterActive are false for a queue that is empty and
	// has seen no API action for six hours (or ever): SQS publishes metrics
	// only for active queues, "if it contains messages or if any API action
	// has accessed it" within six hours. A receive is an action, even an
	// empty one, so a queue polled by a Lambda event source mapping stays
	// active; nothing polls the dead-letter queue, so once emptied it goes
	// quiet six hours after its last message arrived.
	Active, DeadLetterActive bool
}

// inactiveAfter is how long SQS keeps publishing metrics for an empty queue
// nobody calls.
const inactiveAfter = 6 * time.Hour

// Metrics reads the queue's metrics at the queue's clock's current time.
func (q *Queue) Metrics() Metrics {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.opts.Now()
	q.expireLocked(now)
	m := Metrics{
		Sent: q.counts.sent, Received: q.counts.received, Deleted: q.counts.deleted,
		DeadLetterVisible: len(q.dead), DeadLettered: q.counts.deadLettered,
	}
	for _, e := range q.entries {
		if e.deleted {
			continue
		}
		switch {
		case e.visibleAt.After(now) && e.receiveCount == 0:
			m.Delayed++
		case e.visibleAt.After(now):
			m.NotVisible++
		default:
			m.Visible++
		}
		if e.receiveCount < ageReceiveLimit {
			if age := now.Sub(e.sentAt); !m.HasAge || age > m.AgeOfOldest {
				m.AgeOfOldest, m.HasAge = age, true
			}
		}
	}
	for _, d := range q.dead {
		if age := now.Sub(d.DeadLetteredAt); !m.DeadLetterHasAge || age > m.DeadLetterAge {
			m.DeadLetterAge, m.DeadLetterHasAge = age, true
		}
	}
	m.Active = q.live > 0 || (!q.lastAction.IsZero() && now.Sub(q.lastAction) < inactiveAfter)
	m.DeadLetterActive = len(q.dead) > 0 || (!q.deadLastAction.IsZero() && now.Sub(q.deadLastAction) < inactiveAfter)
	return m
}

// PurgeDeadLetters empties the dead-letter queue, as PurgeQueue on it
// does once an operator has inspected the messages, and returns how many
// were deleted.
func (q *Queue) PurgeDeadLetters() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.dead)
	q.dead = nil
	if n > 0 {
		q.deadLastAction = q.opts.Now()
	}
	return n
}
