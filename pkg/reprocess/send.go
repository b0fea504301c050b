// Package reprocess sends a reprocess run's messages to a stack's upload
// queue the way geolocate reprocess does, at the rate the stack calls the
// service (a little slower, SendShare), so that the bench measures what
// the command does.
//
// Why at the rate: the predictor's pacer grants R call slots a minute, and
// an invocation waits for its slot at most a second (MaxSlotWait). A run
// sent all at once is a backlog whose messages mostly find their slot
// further away: each is returned to the queue holding its slot and comes
// back, an extra receive, S3 GET, claim, credit reservation and release
// per photo. Sent at the rate the pacer calls, a message finds its slot
// about when it arrives.
package reprocess

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
	"github.com/geolocate-aws/geolocate/pkg/shared/reprocessmsg"
)

// BatchMax is SendMessageBatch's limit on entries per request.
const BatchMax = 10

// DefaultProgressEvery is how often a Sender reports its progress.
const DefaultProgressEvery = 30 * time.Second

// SendShare is the share of the pacer's rate a run is sent at by
// default. Sent at exactly the pacer's rate, a run keeps whatever lead the
// schedule has on it when it starts (after a busy minute the next free
// slot is ahead of now, by up to a spacing and more): every message then
// arrives that much before its slot, and when that is more than the
// predictor's MaxSlotWait (a second) every one is returned to the queue
// and comes again. The bench measured it at 30 a minute after a minute of
// uploads: each message of the run returned once, costing more than
// sending it all at once. A tenth slower, the lead shrinks by a tenth of a
// spacing with each message (0.2 s at 30 a minute), and a tenth of the
// call slots stays free for the uploads that arrive during the run.
const SendShare = 0.9

// PacerRate is the most calls a minute the shared pacer of a stack whose
// rate is ratePerMinute makes until it has learnt the service's clock
// (pacer.Rate: R spread over a minute and its window margin), 29.5 a
// minute for 30. Work that arrives faster builds a backlog whatever the
// design, which waits for its slots (and is held for them).
func PacerRate(ratePerMinute float64) float64 { return pacer.Rate(ratePerMinute) }

// SendRate is the rate a run is sent at by default: SendShare of the
// pacer's, 26.6 a minute for 30.
func SendRate(ratePerMinute float64) float64 { return SendShare * PacerRate(ratePerMinute) }

// Bodies are the run's messages, one per record to do (each object
// version's latest record, whose run the message names as the one it
// replaces), in the records' order.
func Bodies(run, model string, price int, todo []ledger.Record) ([]string, error) {
	bodies := make([]string, 0, len(todo))
	for i := range todo {
		r := &todo[i]
		body, err := reprocessmsg.Body(reprocessmsg.Object{Run: run, ModelID: model, CreditsPerCall: price, Replaces: r.Run,
			Bucket: r.Bucket, Key: r.Key, VersionID: r.VersionID, ETag: r.ETag, Size: r.Size})
		if err != nil {
			return nil, fmt.Errorf("message of %s/%s: %w", r.Bucket, r.Key, err)
		}
		bodies = append(bodies, body)
	}
	return bodies, nil
}

// SendFunc sends one batch of at most BatchMax entries, all or an error.
type SendFunc func(ctx context.Context, entries []sqstypes.SendMessageBatchRequestEntry) error

// Options configure a Sender.
type Options struct {
	// PerMinute is how many messages a minute are sent; 0 sends them all
	// at once, in batches of BatchMax.
	PerMinute float64
	// Clock returns the current time and Sleep waits on the same clock;
	// tests replace both. Default time.Now and pacer.Sleep.
	Clock func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// Progress, when set, is told the progress at most every
	// ProgressEvery of the clock, and once at the end.
	Progress      func(Progress)
	ProgressEvery time.Duration
}

// Progress is how far a Send has got.
type Progress struct {
	Sent, Total int
	// Batches are the SendMessageBatch requests made.
	Batches int
	// Left is how long the rest takes at the rate; 0 when all at once.
	Left time.Duration
}

// Sender sends a run's messages at a rate.
type Sender struct {
	send SendFunc
	opts Options
}

// New returns a Sender sending through send.
func New(send SendFunc, optFns ...func(*Options)) *Sender {
	opts := Options{Clock: time.Now, Sleep: pacer.Sleep, ProgressEvery: DefaultProgressEvery}
	for _, fn := range optFns {
		fn(&opts)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = pacer.Sleep
	}
	return &Sender{send: send, opts: opts}
}

// Send sends bodies in order. At a rate, message i is due i intervals
// after the first is sent (a fixed schedule, so the sends' own time does
// not slow the rate down), and each request sends every message due, at
// most BatchMax: one at a time while sending is faster than the rate.
//
// It stops between requests when ctx is done and returns what it sent
// with ctx's error: a request under way is finished (sent without ctx's
// cancellation), so Progress.Sent counts exactly what reached the queue.
// Nothing is lost by stopping: the run's unfinished objects are sent
// again when it is resumed, and the ledger pays an object at most once per
// run whatever is sent twice.
func (s *Sender) Send(ctx context.Context, bodies []string) (Progress, error) {
	p := Progress{Total: len(bodies)}
	var interval time.Duration
	if s.opts.PerMinute > 0 {
		interval = time.Duration(float64(time.Minute) / s.opts.PerMinute)
	}
	start := s.opts.Clock()
	lastReport := start
	report := func(now time.Time, final bool) {
		if s.opts.Progress == nil || !final && now.Sub(lastReport) < s.opts.ProgressEvery {
			return
		}
		lastReport = now
		p.Left = time.Duration(p.Total-p.Sent) * interval
		s.opts.Progress(p)
	}
	defer func() { report(s.opts.Clock(), true) }()
	for p.Sent < len(bodies) {
		if err := ctx.Err(); err != nil {
			return p, err
		}
		n := min(len(bodies)-p.Sent, BatchMax)
		if interval > 0 {
			due := start.Add(time.Duration(p.Sent) * interval)
			if wait := due.Sub(s.opts.Clock()); wait > 0 {
				if err := s.opts.Sleep(ctx, wait); err != nil {
					return p, err
				}
			}
			// Every message due by now, the next one included.
			dueNow := int(s.opts.Clock().Sub(start)/interval) + 1
			n = max(1, min(n, dueNow-p.Sent))
		}
		entries := make([]sqstypes.SendMessageBatchRequestEntry, n)
		for i := range entries {
			entries[i] = sqstypes.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), MessageBody: aws.String(bodies[p.Sent+i])}
		}
		if err := s.send(context.WithoutCancel(ctx), entries); err != nil {
			return p, fmt.Errorf("send messages %d to %d of %d: %w", p.Sent+1, p.Sent+n, len(bodies), err)
		}
		p.Sent += n
		p.Batches++
		report(s.opts.Clock(), false)
	}
	return p, nil
}
