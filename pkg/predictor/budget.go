package predictor

import (
	"context"
	"errors"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// reservation is credits reserved for one call against the daily budget
// and, for a reprocess run's object, the run's cap; nil when neither
// applies.
type reservation struct {
	inv     *invocation
	obj     *object
	day     string // the daily counter reserved on; empty without a daily budget
	run     string // the run whose cap was reserved from; empty for an upload
	credits int
}

// ReasonRunCapReached is the code of a run's object whose run has spent its
// cap (--max-credits): its record waits and its message is deleted, since
// only the operator can raise the cap (geolocate reprocess again with the
// same run and a larger --max-credits, which sends it again).
const ReasonRunCapReached = "run_cap_reached"

// expectedCost is what a call for obj reserves: a run's price as the run
// stated it, else the configured model's estimate.
func (inv *invocation) expectedCost(obj *object) int {
	cfg := inv.h.cfg
	switch {
	case obj.Run != "" && obj.Price > 0:
		return obj.Price
	case obj.Run != "":
		return Config{ModelID: obj.Model}.ExpectedCost()
	case cfg.ModelFallback && inv.h.modelRetired.Load():
		return 1 // the default model will run
	}
	return cfg.ExpectedCost()
}

// reserveBudget reserves the call's expected cost from the daily budget,
// then from the run's cap. Past the budget the message waits until the
// budget's day ends; past the cap the object waits for the operator.
func (inv *invocation) reserveBudget(ctx context.Context, obj *object) (*reservation, outcome, bool) {
	cfg := inv.h.cfg
	r := &reservation{inv: inv, obj: obj, credits: inv.expectedCost(obj)}
	if cfg.DailyBudget > 0 {
		now := inv.now()
		day := ledger.Day(now)
		ok, err := inv.h.deps.Ledger.ReserveCredits(ctx, day, r.credits, cfg.DailyBudget)
		if err != nil {
			obj.logger.Error("budget reservation failed: message returned for retry", "error", err)
			return nil, retryLater(retryLedger), false
		}
		if !ok {
			inv.metrics.count(metricBudgetDeferred)
			obj.logger.Warn("daily credit budget reached: message waits", "budget", cfg.DailyBudget, "day", day)
			return nil, retryLater(retryBudget).after(untilNextDay(now)), false
		}
		r.day = day
	}
	if obj.Run != "" {
		ok, err := inv.h.deps.Ledger.ReserveRunCredits(ctx, obj.Run, r.credits)
		if err != nil || !ok {
			r.settle(ctx, 0) // gives the day's reservation back
		}
		if err != nil {
			obj.logger.Error("run cap reservation failed: message returned for retry", "run", obj.Run, "error", err)
			return nil, retryLater(retryLedger), false
		}
		if !ok {
			obj.logger.Warn("the run's credit cap is reached: the object waits, its message is deleted", "run", obj.Run)
			return nil, outcome{kind: outcomeIgnored, reason: ReasonRunCapReached}, false
		}
		r.run = obj.Run
	}
	if r.day == "" && r.run == "" {
		return nil, outcome{}, true
	}
	return r, outcome{}, true
}

// budgetDetail is the record's message for an object the budget stopped.
func budgetDetail(o outcome) string {
	switch o.reason {
	case retryBudget:
		return "the daily credit budget is reached"
	case ReasonRunCapReached:
		return "the run's credit cap (--max-credits) is reached: run geolocate reprocess again with the same --run and a larger --max-credits to go on"
	}
	return "reserving the daily credit budget failed"
}

// settle gives back what was reserved and not charged, or records an
// overspend (a model dearer than expected) so the counter stays true. It
// runs once per reservation, deferred, in a context of its own: it also
// settles a call cut off at the call deadline.
//
// What it gives back is between 0 and what this call reserved, whatever
// charged says: the ledger's releases check only that the counter stays
// at or above zero, which other calls' reservations satisfy, so a release
// of more than this call reserved would hand their credits out again (a
// negative credits_consumed once let a budget of 3 make 10 paid calls).
func (r *reservation) settle(ctx context.Context, charged int) {
	if r == nil {
		return
	}
	ctx, cancel := finishContext(ctx)
	defer cancel()
	ledgerAPI := r.inv.h.deps.Ledger
	charged = max(charged, 0)
	release := r.credits - min(charged, r.credits) // in [0, r.credits]
	over := charged - min(charged, r.credits)
	var errs []error
	if r.day != "" && release > 0 {
		errs = append(errs, ledgerAPI.ReleaseCredits(ctx, r.day, release))
	} else if r.day != "" && over > 0 {
		errs = append(errs, ledgerAPI.RecordOverspend(ctx, r.day, over))
	}
	if r.run != "" && release > 0 {
		errs = append(errs, ledgerAPI.ReleaseRunCredits(ctx, r.run, release))
	} else if r.run != "" && over > 0 {
		errs = append(errs, ledgerAPI.RecordRunOverspend(ctx, r.run, over))
	}
	if err := errors.Join(errs...); err != nil {
		r.obj.logger.Error("settle credit reservation failed", "reserved", r.credits, "charged", charged, "run", r.run, "error", err)
	}
}

// counted is what a paid answer counts against its reservation r (nil
// without a daily budget or a run): the service's figure when it is one,
// above the reservation too (counted as charged and logged: the budget can
// only lose room, never gain it); else, a figure that cannot be a charge
// (geoapi.PredictOutput.CreditsInvalid), what the call reserved, or would
// have reserved (expectedCost), since the call was answered and may have
// charged anything. The refusal itself is geoapi's one log line; here it
// is counted in CreditFiguresInvalid.
func (inv *invocation) counted(obj *object, r *reservation, out *geoapi.PredictOutput) int {
	reserved := r.reserved()
	if r == nil {
		reserved = inv.expectedCost(obj)
	}
	if out.CreditsInvalid != "" {
		inv.metrics.count(metricCreditsInvalid)
		return reserved
	}
	if r != nil && out.CreditsConsumed > reserved {
		obj.logger.Warn("the service charged more than the call reserved: counted as charged",
			"reserved", reserved, "charged", out.CreditsConsumed, "run", obj.Run, "model_id", out.ModelID)
	}
	return out.CreditsConsumed
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
