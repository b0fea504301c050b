package predictor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
	"github.com/geolocate-aws/geolocate/pkg/shared/configrules"
)

// Defaults of Options.
const (
	DefaultParallelism = 4
	DefaultMinCallTime = configrules.MinCallTime // the pacing rule's usable time assumes it
	// DefaultMaxSlotWait is the longest an invocation waits for a call
	// slot: Lambda bills the wait, so a slot further away is held while the
	// message waits in the queue, for free (see slots.go).
	DefaultMaxSlotWait = time.Second
	// DefaultHeldSlotLead is how long before its slot a held message turns
	// visible at the least: SQS hides a message in whole seconds, so it is
	// hidden until the lead before the slot, rounded down, and turns
	// visible between the lead and the lead plus a second early. A visible
	// message reaches a function only after a poll, a free instance (one
	// still waiting for an earlier slot delays it: the event source's
	// concurrency is capped) and an invoke; within the lead it comes back
	// in time to call on the slot. A held message that came back before
	// its slot wasted nothing; one that came back late either crowds the
	// next slot's call (a strict limiter refuses it, and the 429 widens the
	// spacing and pauses every instance) or gives the slot up. The lead is
	// billed: the invocation waits for a held slot up to MaxSlotWait plus
	// it, on average the lead and half a second less the delivery. 500 ms
	// covers the local rig's deliveries under load (up to 434 ms late
	// measured with no lead, at 120 a minute against two busy instances).
	DefaultHeldSlotLead = 500 * time.Millisecond
	// DefaultHeldSlotLateness is how late a message may come back for the
	// slot it holds and still call in it, when the pacer cannot tell a
	// tighter bound (see pacer.Shared.LateAllowance: against a strict
	// token bucket, none at rest). Against the service's limiter, a
	// sliding log over a minute, a call that late is absorbed by the
	// pacer's window margin (a second a minute, pacer.DefaultWindowMargin)
	// or, aimed, by the room after the aim point in the service's second.
	// Given up instead, the slot would stay empty and the object take a
	// third receive and a slot further on. Later than this, the call would
	// crowd the next slot's.
	DefaultHeldSlotLateness = 250 * time.Millisecond
	// finishTimeout bounds the ledger writes that end a claim when the
	// invocation has no deadline (local runs); see finishContext.
	finishTimeout = 10 * time.Second
)

// Deps are the Handler's collaborators. Objects, Ledger, Service and Keys
// are required.
type Deps struct {
	Objects    ObjectStore
	Ledger     Ledger
	Service    Service
	Keys       KeyProvider
	Visibility VisibilityChanger // optional: delays budget-deferred messages
	Pacer      Pacer             // optional: default, the instance's own limiter at R/N
	// Jobs tracks the jobs whose messages arrive (Assemble wires the
	// results table's). Without it a job's message is processed as an
	// upload or run message alone: nothing dropped, nothing counted.
	Jobs    Jobs
	Logger  *slog.Logger // default: JSON on stderr at the configured level
	Metrics io.Writer    // Embedded Metric Format output; default stdout
}

// Options tune the Handler; the defaults suit the deployed function.
type Options struct {
	// Parallelism is how many records of a batch are processed at once.
	Parallelism int
	// MinCallTime is the least time a call attempt is given before the call
	// deadline (the invocation's deadline less Config.FinishReserve): an
	// object, a retry or a rate-limit wait that would leave less is not
	// started, and its message goes back to the queue untouched.
	MinCallTime time.Duration
	// Clock returns the current time, and Sleep waits on the same clock:
	// every time reading and every wait of the handler goes through them
	// (the invocation's deadline is carried over to Clock once, at its
	// start). Default time.Now and a timer. A test with a fake clock sets
	// both.
	Clock func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// MaxSlotWait is the longest an invocation sleeps for a call slot (or
	// before a retry): a wait longer than this holds the slot and returns
	// the message to the queue until it.
	MaxSlotWait time.Duration
	// HeldSlotLead is how long before its slot a held message turns
	// visible at the least (then rounded down to whole seconds); an
	// invocation waits for a held slot up to MaxSlotWait plus it.
	HeldSlotLead time.Duration
	// HeldSlotLateness is how late a returned message may come back and
	// still call in the slot it holds, at most (the pacer may tell less).
	HeldSlotLateness time.Duration
}

// Handler processes S3 upload notifications. Create one at cold start with
// New and reuse it across invocations: its pacer, key cache and
// retired-model memory live for the instance.
type Handler struct {
	cfg  Config
	deps Deps
	opts Options
	// modelRetired remembers, for the instance, that the configured model
	// was reported retired, so later objects go straight to the default
	// model instead of spending a call slot on a known 422.
	modelRetired atomic.Bool
	// downscaling admits one downscale at a time per instance: a 50 MP
	// photo decodes into about 250 MB, so the batch's parallel workers must
	// not decode several at once. The function's memory is sized for one.
	downscaling chan struct{}
	// jobStates caches Deps.Jobs' states on the handler's clock; nil
	// without Deps.Jobs.
	jobStates *jobs.StateCache
}

// New returns a Handler. It fails when a required dependency is missing.
func New(cfg Config, deps Deps, optFns ...func(*Options)) (*Handler, error) {
	if deps.Objects == nil || deps.Ledger == nil || deps.Service == nil || deps.Keys == nil {
		return nil, errors.New("predictor: Objects, Ledger, Service and Keys are required")
	}
	if cfg.RatePerMinute <= 0 || cfg.MaxConcurrency <= 0 || cfg.ClaimLease <= 0 || cfg.MaxImageBytes <= 0 || cfg.MaxServerDelay <= 0 {
		return nil, errors.New("predictor: config not loaded: use LoadConfig")
	}
	opts := Options{Parallelism: DefaultParallelism, MinCallTime: DefaultMinCallTime, Clock: time.Now, Sleep: pacer.Sleep,
		MaxSlotWait: DefaultMaxSlotWait, HeldSlotLead: DefaultHeldSlotLead, HeldSlotLateness: DefaultHeldSlotLateness}
	for _, fn := range optFns {
		fn(&opts)
	}
	if opts.Parallelism < 1 {
		opts.Parallelism = 1
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = pacer.Sleep
	}
	if deps.Logger == nil {
		deps.Logger = newJSONLogger(os.Stderr, cfg.LogLevel)
	}
	if deps.Metrics == nil {
		deps.Metrics = os.Stdout
	}
	if deps.Pacer == nil {
		deps.Pacer = pacer.NewInstance(cfg.PerInstanceRate())
	}
	h := &Handler{cfg: cfg, deps: deps, opts: opts, downscaling: make(chan struct{}, 1)}
	if deps.Jobs != nil {
		h.jobStates = jobs.NewStateCache(deps.Jobs, jobs.DefaultStateTTL, opts.Clock)
	}
	return h, nil
}

// Handle is the Lambda handler: the upload queue's event source mapping
// invokes it with a batch of messages, and it answers the messages to retry
// (ReportBatchItemFailures). It is the only invocation the stack makes; any
// other payload (a direct S3 or EventBridge event) is refused with an error
// and processes nothing.
func (h *Handler) Handle(ctx context.Context, batch events.SQSEvent) (events.SQSEventResponse, error) {
	inv := h.newInvocation(ctx)
	defer inv.flushMetrics()
	if err := checkSQSBatch(batch); err != nil {
		inv.logger.Error("unsupported event", "error", err)
		return events.SQSEventResponse{}, err
	}
	return inv.handleSQS(ctx, batch), nil
}

// checkSQSBatch refuses a payload that is not an SQS batch. aws-lambda-go
// decodes any JSON object into an SQSEvent, so a direct S3 event arrives as
// records from "aws:s3" and an EventBridge event as no records at all.
func checkSQSBatch(batch events.SQSEvent) error {
	if len(batch.Records) == 0 {
		return errors.New("not an SQS batch: no records (the function is invoked by the upload queue's event source mapping; to invoke it by hand, wrap the notification in an SQS message as events/sqs-s3-put.json does)")
	}
	for i, r := range batch.Records {
		if r.EventSource != sourceSQS {
			return fmt.Errorf("not an SQS batch: record %d comes from %q (the function is invoked by the upload queue's event source mapping; to invoke it by hand, wrap the notification in an SQS message as events/sqs-s3-put.json does)", i, r.EventSource)
		}
	}
	return nil
}

func (inv *invocation) logNotification(logger *slog.Logger, n notification) {
	if n.TestEvent {
		logger.Info("s3 test event acknowledged")
	}
	for _, what := range n.Ignored {
		logger.Info("ignored: not an upload", "event", what)
	}
}
