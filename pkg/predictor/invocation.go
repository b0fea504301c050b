package predictor

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
)

// invocation is the state of one Handle call.
type invocation struct {
	h       *Handler
	logger  *slog.Logger // carries the request id
	metrics *metrics
	// outOfCredits is set by the first 402 of the invocation: no further
	// object is claimed or called, and their messages are returned as they
	// are. Checked before every claim, so parallel workers honour it too.
	outOfCredits atomic.Bool
	// deadline is the invocation's (Lambda's) deadline on the handler's
	// clock; zero when it has none.
	deadline time.Time
	// start is when the handler began, on the handler's clock: after the
	// receive that delivered the batch, so delays are capped from it (see
	// visibilityLeft).
	start time.Time
}

func (h *Handler) newInvocation(ctx context.Context) *invocation {
	start := h.opts.Clock()
	var deadline time.Time
	if dl, ok := ctx.Deadline(); ok {
		// Lambda's deadline is on the wall clock: it is carried over to the
		// handler's clock here, once, and every later reading is Clock's.
		deadline = start.Add(time.Until(dl))
	}
	logger := lambdarun.WithRequestID(ctx, h.deps.Logger)
	return &invocation{
		h:        h,
		deadline: deadline,
		start:    start,
		logger:   logger,
		metrics:  newMetrics(h.deps.Metrics, h.cfg.MetricNamespace, h.cfg.PipelineName, logger),
	}
}

// now reads the handler's clock (Options.Clock): every time in the flow
// comes from it, so a test's fake clock covers all of it.
func (inv *invocation) now() time.Time { return inv.h.opts.Clock() }

// sleep waits d on the handler's clock (Options.Sleep), or until ctx is done.
func (inv *invocation) sleep(ctx context.Context, d time.Duration) error {
	return inv.h.opts.Sleep(ctx, d)
}

func (inv *invocation) flushMetrics() {
	if err := inv.metrics.flush(); err != nil {
		inv.logger.Error("write metrics", "error", err)
	}
}

func newJSONLogger(w io.Writer, level string) *slog.Logger { return lambdarun.NewLogger(w, level) }
