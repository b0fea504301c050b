package sqsqueue

import (
	"errors"
	"time"
)

// Defaults of a new Queue.
const (
	DefaultName              = "geolocate-local-uploads"
	DefaultRegion            = "us-east-1"
	DefaultAccountID         = "000000000000"
	DefaultVisibilityTimeout = 30 * time.Second
	DefaultMaxReceiveCount   = 3
	// DefaultDeadLetterRetentionPeriod is the dead-letter queue's retention:
	// the longest SQS allows, as the stack sets it (AWS recommends a
	// dead-letter queue retention longer than the source queue's).
	DefaultDeadLetterRetentionPeriod = MaxMessageRetentionPeriod
)

// Options configure a Queue. Out-of-range values are refused as SQS refuses
// them (see limits.go): Create returns the error, New panics.
type Options struct {
	// Name, Region and AccountID only shape the queue's ARN, which handlers
	// see as each message's eventSourceARN.
	Name      string
	Region    string
	AccountID string

	// VisibilityTimeout is how long a received message stays invisible:
	// up to 12 hours; zero takes DefaultVisibilityTimeout.
	VisibilityTimeout time.Duration

	// MaxReceiveCount is the redrive policy's maxReceiveCount (1..1000): a
	// message received that many times moves to the dead-letter queue on
	// its next receive. Zero means no redrive policy: messages are retried
	// until their retention period ends.
	MaxReceiveCount int

	// MessageRetentionPeriod is how long a message is kept after it was
	// sent, received or not (1 minute..14 days); zero takes
	// DefaultMessageRetentionPeriod, SQS's default of 4 days.
	MessageRetentionPeriod time.Duration

	// DeadLetterRetentionPeriod is the dead-letter queue's retention period
	// (1 minute..14 days), counted, as SQS does for standard queues, from
	// the message's original send; zero takes
	// DefaultDeadLetterRetentionPeriod.
	DeadLetterRetentionPeriod time.Duration

	// MaximumMessageSize is the largest body Send accepts, in bytes
	// (1,024..1,048,576); zero takes DefaultMaximumMessageSize (256 KiB).
	MaximumMessageSize int

	// DuplicateRate in [0, 1] is the probability that a receive also leaves a
	// second copy of the message deliverable, as SQS's at-least-once delivery
	// may. Copies are never duplicated again.
	DuplicateRate float64

	// Seed makes duplicate delivery reproducible.
	Seed int64

	// Now is the queue's clock; visibility timeouts, the 12-hour limit,
	// retention and timestamps use it. Default time.Now; tests pass a
	// manual clock. Long-poll waits still use real time.
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

// WithMessageRetentionPeriod sets the queue's message retention period.
func WithMessageRetentionPeriod(d time.Duration) func(*Options) {
	return func(o *Options) { o.MessageRetentionPeriod = d }
}

// WithDeadLetterRetentionPeriod sets the dead-letter queue's retention period.
func WithDeadLetterRetentionPeriod(d time.Duration) func(*Options) {
	return func(o *Options) { o.DeadLetterRetentionPeriod = d }
}

// WithMaximumMessageSize sets the largest body Send accepts, in bytes.
func WithMaximumMessageSize(n int) func(*Options) {
	return func(o *Options) { o.MaximumMessageSize = n }
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
	if o.VisibilityTimeout == 0 {
		o.VisibilityTimeout = DefaultVisibilityTimeout
	}
	if o.MessageRetentionPeriod == 0 {
		o.MessageRetentionPeriod = DefaultMessageRetentionPeriod
	}
	if o.DeadLetterRetentionPeriod == 0 {
		o.DeadLetterRetentionPeriod = DefaultDeadLetterRetentionPeriod
	}
	if o.MaximumMessageSize == 0 {
		o.MaximumMessageSize = DefaultMaximumMessageSize
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.DuplicateRate = min(max(o.DuplicateRate, 0), 1)
}

// validate refuses what CreateQueue and the redrive policy refuse.
func (o *Options) validate() error {
	var errs []error
	if o.VisibilityTimeout < 0 || o.VisibilityTimeout > MaxVisibilityTimeout {
		errs = append(errs, invalidAttribute("VisibilityTimeout", seconds(o.VisibilityTimeout),
			"must be from 0 to 43200 seconds (12 hours)"))
	}
	for _, r := range []struct {
		name string
		d    time.Duration
	}{{"MessageRetentionPeriod", o.MessageRetentionPeriod}, {"dead-letter queue MessageRetentionPeriod", o.DeadLetterRetentionPeriod}} {
		if r.d < MinMessageRetentionPeriod || r.d > MaxMessageRetentionPeriod {
			errs = append(errs, invalidAttribute(r.name, seconds(r.d),
				"must be from 60 seconds (1 minute) to 1209600 seconds (14 days)"))
		}
	}
	if o.MaximumMessageSize < MinMaximumMessageSize || o.MaximumMessageSize > MaxMaximumMessageSize {
		errs = append(errs, invalidAttribute("MaximumMessageSize", o.MaximumMessageSize,
			"must be from 1024 bytes (1 KiB) to 1048576 bytes (1 MiB)"))
	}
	if o.MaxReceiveCount != 0 && (o.MaxReceiveCount < MinMaxReceiveCount || o.MaxReceiveCount > MaxMaxReceiveCount) {
		errs = append(errs, invalidAttribute("RedrivePolicy", o.MaxReceiveCount,
			"maxReceiveCount must be from 1 to 1000 (0 here: no redrive policy)"))
	}
	return errors.Join(errs...)
}
