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
	// deadline is the invocation's (Lambda's) deadline; zero when it has none.
	deadline time.Time
	// start is when the handler began, on the handler's clock: after the
	// receive that delivered the batch, so delays are capped from it (see
	// visibilityLeft).
	start time.Time
}

func (h *Handler) newInvocation(ctx context.Context) *invocation {
	deadline, _ := ctx.Deadline()
	logger := lambdarun.WithRequestID(ctx, h.deps.Logger)
	return &invocation{
		h:        h,
		deadline: deadline,
		start:    h.opts.Clock(),
		logger:   logger,
		metrics:  newMetrics(h.deps.Metrics, h.cfg.MetricNamespace, h.cfg.PipelineName, logger),
	}
}

func (inv *invocation) flushMetrics() {
	if err := inv.metrics.flush(); err != nil {
		inv.logger.Error("write metrics", "error", err)
	}
}

func newJSONLogger(w io.Writer, level string) *slog.Logger { return lambdarun.NewLogger(w, level) }
