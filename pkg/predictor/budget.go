package predictor

import (
	"context"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// reservation is credits reserved against the daily budget for one call;
// nil when no budget is configured.
type reservation struct {
	inv     *invocation
	obj     *object
	day     string
	credits int
}

// reserveBudget reserves the call's expected cost. Past the budget the
// message waits until the budget's day ends.
func (inv *invocation) reserveBudget(ctx context.Context, obj *object) (*reservation, outcome, bool) {
	cfg := inv.h.cfg
	if cfg.DailyBudget <= 0 {
		return nil, outcome{}, true
	}
	credits := cfg.ExpectedCost()
	if cfg.ModelFallback && inv.h.modelRetired.Load() {
		credits = 1 // the default model will run
	}
	now := inv.now()
	day := ledger.Day(now)
	ok, err := inv.h.deps.Ledger.ReserveCredits(ctx, day, credits, cfg.DailyBudget)
	if err != nil {
		obj.logger.Error("budget reservation failed: message returned for retry", "error", err)
		return nil, retryLater(retryLedger), false
	}
	if !ok {
		inv.metrics.count(metricBudgetDeferred)
		obj.logger.Warn("daily credit budget reached: message waits", "budget", cfg.DailyBudget, "day", day)
		return nil, retryLater(retryBudget).after(untilNextDay(now)), false
	}
	return &reservation{inv: inv, obj: obj, day: day, credits: credits}, outcome{}, true
}

// budgetDetail is the record's message for an object the budget stopped.
func budgetDetail(o outcome) string {
	if o.reason == retryBudget {
		return "the daily credit budget is reached"
	}
	return "reserving the daily credit budget failed"
}

// settle gives back what was reserved and not charged, or records an
// overspend (a model dearer than expected) so the counter stays true. It
// runs once per reservation, deferred, in a context of its own: it also
// settles a call cut off at the call deadline.
func (r *reservation) settle(ctx context.Context, charged int) {
	if r == nil {
		return
	}
	ctx, cancel := finishContext(ctx)
	defer cancel()
	ledgerAPI := r.inv.h.deps.Ledger
	var err error
	switch diff := r.credits - charged; {
	case diff > 0:
		err = ledgerAPI.ReleaseCredits(ctx, r.day, diff)
	case diff < 0:
		err = ledgerAPI.RecordOverspend(ctx, r.day, -diff)
	}
	if err != nil {
		r.obj.logger.Error("settle daily budget failed", "reserved", r.credits, "charged", charged, "error", err)
	}
}

// reserved is the credits the reservation holds; 0 without a budget.
func (r *reservation) reserved() int {
	if r == nil {
		return 0
	}
	return r.credits
}

// untilNextDay is the time left in now's UTC day, when the budget resets,
// capped at SQS's 12-hour visibility limit.
func untilNextDay(now time.Time) time.Duration {
	now = now.UTC()
	next := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	return min(next.Sub(now), maxVisibility)
}
