package predictor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/pacer"
	"github.com/geolocate-aws/geolocate/pkg/shared/configrules"
)

// Defaults of Options.
const (
	DefaultParallelism = 4
	DefaultMinCallTime = configrules.MinCallTime // the pacing rule's usable time assumes it
	DefaultOpenLead    = 100 * time.Millisecond
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
	Logger     *slog.Logger      // default: JSON on stderr at the configured level
	Metrics    io.Writer         // Embedded Metric Format output; default stdout
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
	// Clock returns the current time. Default time.Now.
	Clock func() time.Time
	// OpenLead is how long before its call slot an object is opened: the
	// S3 GET's latency then falls before the slot instead of delaying the
	// call behind it, so calls reach the service spaced as their slots are.
	// The object is never open longer than this waiting for a slot.
	OpenLead time.Duration
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
}

// New returns a Handler. It fails when a required dependency is missing.
func New(cfg Config, deps Deps, optFns ...func(*Options)) (*Handler, error) {
	if deps.Objects == nil || deps.Ledger == nil || deps.Service == nil || deps.Keys == nil {
		return nil, errors.New("predictor: Objects, Ledger, Service and Keys are required")
	}
	if cfg.RatePerMinute <= 0 || cfg.MaxConcurrency <= 0 || cfg.ClaimLease <= 0 || cfg.MaxImageBytes <= 0 {
		return nil, errors.New("predictor: config not loaded: use LoadConfig")
	}
	opts := Options{Parallelism: DefaultParallelism, MinCallTime: DefaultMinCallTime, Clock: time.Now, OpenLead: DefaultOpenLead}
	for _, fn := range optFns {
		fn(&opts)
	}
	if opts.Parallelism < 1 {
		opts.Parallelism = 1
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
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
	return &Handler{cfg: cfg, deps: deps, opts: opts, downscaling: make(chan struct{}, 1)}, nil
}

// Handle is the Lambda handler. For an SQS batch it returns the
// events.SQSEventResponse listing the messages to retry; for a direct S3 or
// EventBridge event it returns a Summary, and an error when any object needs
// a retry, so that Lambda's asynchronous retries deliver it again (objects
// already done are then skipped).
func (h *Handler) Handle(ctx context.Context, raw json.RawMessage) (any, error) {
	inv := h.newInvocation(ctx)
	defer inv.flushMetrics()

	kind, err := classifyInvocation(raw)
	if err != nil {
		inv.logger.Error("unsupported event", "error", err)
		return nil, err
	}
	switch kind {
	case invocationSQS:
		return inv.handleSQS(ctx, raw)
	case invocationS3:
		return inv.handleDirect(ctx, raw, "S3 event")
	default:
		return inv.handleDirect(ctx, raw, "EventBridge event")
	}
}

// Summary is the response to a direct S3 or EventBridge invocation.
type Summary struct {
	Objects    int `json:"objects"`
	Succeeded  int `json:"succeeded"`
	Rejected   int `json:"rejected"`
	Failed     int `json:"failed"`
	Duplicates int `json:"duplicates"`
	Ignored    int `json:"ignored"`
	Retry      int `json:"retry"`
}

func (s *Summary) add(o outcome) {
	s.Objects++
	switch o.kind {
	case outcomeSucceeded:
		s.Succeeded++
	case outcomeRejected:
		s.Rejected++
	case outcomeFailed:
		s.Failed++
	case outcomeDuplicate:
		s.Duplicates++
	case outcomeIgnored:
		s.Ignored++
	case outcomeRetry:
		s.Retry++
	}
}

func (inv *invocation) handleDirect(ctx context.Context, raw json.RawMessage, what string) (*Summary, error) {
	n, err := decodeNotification(raw)
	if err != nil {
		inv.logger.Error("malformed event", "error", err)
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	inv.logNotification(inv.logger, n)
	var sum Summary
	for _, u := range n.Uploads {
		o := inv.processObject(ctx, u, nil)
		if o.kind == outcomeRetry {
			inv.metrics.count(metricImagesRetried)
		}
		sum.add(o)
	}
	if sum.Retry > 0 {
		return &sum, fmt.Errorf("%d of %d objects need a retry", sum.Retry, sum.Objects)
	}
	return &sum, nil
}

func (inv *invocation) logNotification(logger *slog.Logger, n notification) {
	if n.TestEvent {
		logger.Info("s3 test event acknowledged")
	}
	for _, what := range n.Ignored {
		logger.Info("ignored: not an upload", "event", what)
	}
}
