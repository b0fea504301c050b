package localqueue

import "time"

// Defaults of a new Queue.
const (
	DefaultName              = "geolocate-local-uploads"
	DefaultRegion            = "us-east-1"
	DefaultAccountID         = "000000000000"
	DefaultVisibilityTimeout = 30 * time.Second
	DefaultMaxReceiveCount   = 3
)

// Options configure a Queue.
type Options struct {
	// Name, Region and AccountID only shape the queue's ARN, which handlers
	// see as each message's eventSourceARN.
	Name      string
	Region    string
	AccountID string

	// VisibilityTimeout is how long a received message stays invisible.
	VisibilityTimeout time.Duration

	// MaxReceiveCount is the redrive policy: a message received more often
	// moves to the dead-letter queue. Zero or less disables the dead-letter
	// queue (messages are retried forever).
	MaxReceiveCount int

	// DuplicateRate in [0, 1] is the probability that a receive also leaves a
	// second copy of the message deliverable, as SQS's at-least-once delivery
	// may. Copies are never duplicated again.
	DuplicateRate float64

	// Seed makes duplicate delivery reproducible.
	Seed int64

	// Now is the queue's clock; visibility timeouts and timestamps use it.
	// Tests pass a manual clock. Long-poll waits still use real time.
	Now func() time.Time
}

// Duplicate makes the queue deliver a message twice with probability rate.
func Duplicate(rate float64) func(*Options) {
	return func(o *Options) { o.DuplicateRate = rate }
}

// WithClock sets the queue's clock.
func WithClock(now func() time.Time) func(*Options) {
	return func(o *Options) { o.Now = now }
}

// WithVisibilityTimeout sets the visibility timeout.
func WithVisibilityTimeout(d time.Duration) func(*Options) {
	return func(o *Options) { o.VisibilityTimeout = d }
}

// WithMaxReceiveCount sets the redrive policy's maximum receive count.
func WithMaxReceiveCount(n int) func(*Options) {
	return func(o *Options) { o.MaxReceiveCount = n }
}

func (o *Options) setDefaults() {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.Region == "" {
		o.Region = DefaultRegion
	}
	if o.AccountID == "" {
		o.AccountID = DefaultAccountID
	}
	if o.VisibilityTimeout <= 0 {
		o.VisibilityTimeout = DefaultVisibilityTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.DuplicateRate < 0 {
		o.DuplicateRate = 0
	}
	if o.DuplicateRate > 1 {
		o.DuplicateRate = 1
	}
}
