package predictor

import (
	"context"
	"errors"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
)

// predict spends, holding the claim: it reserves budget, waits for a rate
// token, opens the object once to sniff it, and makes the paid call with
// that same stream, then records the outcome. Every early exit releases the
// claim or turns it into a final record.
//
// A photo over the limit (oversize=downscale) is read and downscaled first,
// holding the claim but before the budget and the slot, so that a photo that
// cannot be downscaled costs neither.
func (inv *invocation) predict(ctx context.Context, obj *object, claim *ledger.Claim, key string) outcome {
	if obj.Size > inv.h.cfg.MaxImageBytes {
		if o, ok := inv.prepareOversize(ctx, obj, claim); !ok {
			return o
		}
	}
	budget, o, ok := inv.reserveBudget(ctx, obj)
	if !ok {
		detail := "reserving the daily credit budget failed"
		if o.reason == retryBudget {
			detail = "the daily credit budget is reached"
		}
		return inv.release(ctx, obj, claim, o, detail)
	}
	slot, err := inv.reserveSlot(ctx)
	if err == nil {
		err = sleepUntil(ctx, slot.Add(-inv.h.opts.OpenLead))
	}
	if err != nil {
		budget.settle(ctx, 0)
		obj.logger.Warn("no call slot free in time: message returned for retry", "error", err)
		return inv.release(ctx, obj, claim, retryLater(retryRateWait), err.Error())
	}
	// Checked again right before the read and the call: another worker of
	// this batch may have hit 402 while this one waited.
	if inv.outOfCredits.Load() {
		budget.settle(ctx, 0)
		return inv.release(ctx, obj, claim, retryLater(retryOutOfCredits), "another call of the batch found the account out of credits")
	}

	var body *openedObject // nil when the downscaled image is sent
	if obj.photo.downscaled == nil {
		body, o, ok = inv.openImage(ctx, obj, claim)
		if !ok {
			budget.settle(ctx, 0)
			return o
		}
		if inv.knownPosition(obj) {
			// The slot goes unused: deciding before it would mean opening
			// the object early and holding the stream while waiting, or a
			// second GET. A skipped photo costs a slot's wait, no credit.
			body.Close()
			budget.settle(ctx, 0)
			return inv.completeFromEXIF(ctx, obj, claim)
		}
		if detail, ok := inv.checkStrippable(obj, body.head); !ok {
			body.Close()
			fctx, cancel := finishContext(ctx)
			defer cancel()
			budget.settle(fctx, 0)
			return inv.rejectClaimed(fctx, obj, claim, ReasonCannotStripMetadata, detail)
		}
	}
	if err := sleepUntil(ctx, slot); err != nil {
		body.closeIfOpened()
		budget.settle(ctx, 0)
		return inv.release(ctx, obj, claim, retryLater(retryRateWait), err.Error())
	}
	callCtx, cancelCall := inv.callContext(ctx)
	res := inv.call(callCtx, obj, key, body)
	cancelCall()
	body.closeIfOpened() // a no-op unless the call returned before uploading

	// The outcome is recorded even when the call was cut off at the call
	// deadline, within the time FinishReserve kept for it.
	fctx, cancel := finishContext(ctx)
	defer cancel()
	var (
		tooLarge    *geoapi.TooLargeError
		unsupported *geoapi.UnsupportedFormatError
	)
	switch {
	// The service's refusals of the file itself are final and free: the
	// same bytes would be refused again, so they are never retried.
	case errors.As(res.err, &tooLarge):
		budget.settle(fctx, 0)
		return inv.rejectClaimed(fctx, obj, claim, ReasonTooLarge, "the service refused the image as too large: "+res.err.Error())
	case errors.As(res.err, &unsupported):
		budget.settle(fctx, 0)
		return inv.rejectClaimed(fctx, obj, claim, ReasonUnsupportedFormat, "the service refused the file's type: "+res.err.Error())
	case res.err != nil:
		return inv.fail(fctx, obj, claim, res, budget)
	}
	budget.settle(fctx, res.out.CreditsConsumed)
	return inv.complete(fctx, obj, claim, res)
}

// openImage opens the object with one GET, sniffs its first bytes and reads
// EXIF from them (into obj.photo). A non-image, an image whose header
// declares absurd dimensions, or a vanished object ends the claim as
// rejected; any other S3 error releases it for a retry. The stream is closed
// unless returned.
func (inv *invocation) openImage(ctx context.Context, obj *object, claim *ledger.Claim) (*openedObject, outcome, bool) {
	body, err := openObject(ctx, inv.h.deps.Objects, obj.upload)
	if err != nil {
		fctx, cancel := finishContext(ctx)
		defer cancel()
		if objectGone(err) {
			return nil, inv.rejectClaimed(fctx, obj, claim, ReasonObjectNotFound,
				"the object version was deleted or replaced before processing"), false
		}
		obj.logger.Warn("S3 read failed: message returned for retry", "error", err)
		return nil, inv.releaseAs(fctx, obj, claim, retryLater(retryStorage), CodeStorage, err.Error()), false
	}
	v := examineHead(body.head, obj.Size, inv.h.cfg)
	obj.contentType = v.format.MIME
	if v.reason != "" {
		body.Close()
		fctx, cancel := finishContext(ctx)
		defer cancel()
		return nil, inv.rejectClaimed(fctx, obj, claim, v.reason, v.detail), false
	}
	inv.readEXIF(obj, body.head, v.exif, v.exifErr)
	return body, outcome{}, true
}

// release gives the claim back before any call, as a retryable failure
// whose code is the retry reason (nothing was charged), so a later delivery
// can claim again, and returns o.
func (inv *invocation) release(ctx context.Context, obj *object, claim *ledger.Claim, o outcome, detail string) outcome {
	fctx, cancel := finishContext(ctx)
	defer cancel()
	return inv.releaseAs(fctx, obj, claim, o, o.reason, detail)
}

func (inv *invocation) releaseAs(ctx context.Context, obj *object, claim *ledger.Claim, o outcome, code, detail string) outcome {
	err := inv.persist(ctx, obj, "release", func(ctx context.Context) error {
		return inv.h.deps.Ledger.Fail(ctx, claim, code, detail, true)
	})
	if err != nil && !errors.Is(err, ledger.ErrClaimLost) {
		// The record stays in progress until its lease expires; the
		// redelivery then finalises it as outcome_unknown.
		obj.logger.Error("release claim failed", "code", code, "error", err)
		return retryLater(retryLedger)
	}
	return o
}

// callResult is the outcome of the paid call, fallback and key refresh
// included.
type callResult struct {
	out              *geoapi.PredictOutput
	err              error
	requestedModelID string // the configured model, "" when none
	fallback         bool   // the default model ran instead of the retired configured one
}

// call makes the prediction call, its first attempt uploading body (later
// ones reopen the object): a 401 refreshes the key and retries once; a 422
// naming the configured model as retired falls back to the default model
// when enabled (a 422 is not charged).
func (inv *invocation) call(ctx context.Context, obj *object, key string, body *openedObject) callResult {
	cfg := inv.h.cfg
	in := &geoapi.PredictInput{
		APIKey:      key,
		Image:       imageSource(inv.h.deps.Objects, obj.upload, body),
		Size:        obj.Size,
		ContentType: obj.contentType,
		TopN:        cfg.TopN,
	}
	if d := obj.photo.downscaled; d != nil {
		in.Image, in.Size, in.ContentType = geoapi.BytesSource(d.JPEG), d.Bytes, "image/jpeg"
	} else {
		in.Image = inv.uploadSource(obj, in.Image)
	}
	res := callResult{requestedModelID: cfg.ModelID}
	if cfg.ModelID != "" {
		if cfg.ModelFallback && inv.h.modelRetired.Load() {
			res.fallback = true
		} else {
			in.ModelID = cfg.ModelID
		}
	}
	res.out, res.err = inv.predictRefreshingKey(ctx, obj, in)
	if in.ModelID != "" && retiredModel(res.err, in.ModelID) {
		inv.h.modelRetired.Store(true)
		if !cfg.ModelFallback {
			return res
		}
		obj.logger.Warn("configured model is retired: falling back to the default model",
			"requested_model_id", in.ModelID)
		in.ModelID = ""
		res.fallback = true
		if err := inv.waitForRate(ctx); err != nil {
			res.out, res.err = nil, err
			return res
		}
		res.out, res.err = inv.predictRefreshingKey(ctx, obj, in)
	}
	if res.fallback {
		inv.metrics.count(metricModelFallbacks)
	}
	return res
}

// predictRefreshingKey calls the service; on a 401 it fetches the current
// secret and, if the key changed (it was regenerated), retries once.
func (inv *invocation) predictRefreshingKey(ctx context.Context, obj *object, in *geoapi.PredictInput) (*geoapi.PredictOutput, error) {
	withLogger := func(o *geoapi.Options) {
		o.Logger = obj.logger
		o.Sleep = inv.paceRetry
		// The call's context bounds the schedule writes: detached from it,
		// a slow DynamoDB could hold the retry loop past the call deadline.
		o.OnRateLimited = func(ctx context.Context, e *geoapi.RateLimitedError) {
			inv.h.deps.Pacer.Throttled(ctx, e.RetryAfter)
		}
		o.MaxImageBytes = inv.h.cfg.MaxImageBytes
	}
	out, err := inv.h.deps.Service.Predict(ctx, in, withLogger)
	var unauthorized *geoapi.UnauthorizedError
	if !errors.As(err, &unauthorized) {
		return out, err
	}
	fresh, rerr := inv.h.deps.Keys.Refresh(ctx)
	if rerr != nil {
		obj.logger.Error("API key refused and refreshing it failed", "error", rerr)
		return nil, err
	}
	if fresh == in.APIKey {
		obj.logger.Error("API key refused and the secret still holds the same key")
		return nil, err
	}
	obj.logger.Warn("API key refused: retrying once with the refreshed key")
	in.APIKey = fresh
	if werr := inv.waitForRate(ctx); werr != nil {
		return nil, werr
	}
	return inv.h.deps.Service.Predict(ctx, in, withLogger)
}

// paceRetry is the client's wait before a retry: the backoff it chose, then
// a slot from the pacer. A retry after a 429 or a free 5xx is a
// request like any other: unpaced, the retries of several instances bunch up
// and draw more 429s. A retry that would not get MinCallTime before the call
// deadline is not started.
func (inv *invocation) paceRetry(ctx context.Context, backoff time.Duration) error {
	if dl, ok := inv.callDeadline(); ok && time.Until(dl) < backoff+inv.h.opts.MinCallTime {
		return errNoTimeToRetry
	}
	if err := pacer.Sleep(ctx, backoff); err != nil {
		return err
	}
	if err := inv.waitForRate(ctx); err != nil {
		return err
	}
	if !inv.timeToCall() {
		return errNoTimeToRetry
	}
	return nil
}

// waitForRate takes a call slot and waits for it.
func (inv *invocation) waitForRate(ctx context.Context) error {
	slot, err := inv.reserveSlot(ctx)
	if err != nil {
		return err
	}
	return sleepUntil(ctx, slot)
}

// reserveSlot takes a call slot from the pacer no later than MinCallTime
// before the call deadline, so that the call it grants still has time to
// run; a slot that late is not taken at all. It returns when the slot
// starts, on the wall clock (the deadline's).
func (inv *invocation) reserveSlot(ctx context.Context) (time.Time, error) {
	within := pacer.Unbounded
	if dl, ok := inv.callDeadline(); ok {
		within = time.Until(dl.Add(-inv.h.opts.MinCallTime))
	}
	delay, err := inv.h.deps.Pacer.Reserve(ctx, within)
	if err != nil {
		return time.Time{}, errors.Join(errRateWait, err)
	}
	return time.Now().Add(delay), nil
}

// sleepUntil waits for t on the wall clock.
func sleepUntil(ctx context.Context, t time.Time) error {
	if err := pacer.Sleep(ctx, time.Until(t)); err != nil {
		return errors.Join(errRateWait, err)
	}
	return nil
}

// fail records a failed call: retryable failures free the object for a
// later delivery and return the message; final ones are acknowledged.
func (inv *invocation) fail(ctx context.Context, obj *object, claim *ledger.Claim, res callResult, budget *reservation) outcome {
	f := classifyFailure(res.err)
	if !f.maybeCharged {
		budget.settle(ctx, 0)
	}
	switch f.code {
	case CodeOutOfCredits:
		if inv.outOfCredits.CompareAndSwap(false, true) {
			obj.logger.Error("out of credits: no more calls in this batch; the remaining messages wait for a top-up")
		}
		inv.metrics.count(metricOutOfCredits)
	case CodeRateLimited:
		inv.metrics.count(metricRateLimited)
	}
	err := inv.persist(ctx, obj, "record failure", func(ctx context.Context) error {
		return inv.h.deps.Ledger.Fail(ctx, claim, f.code, failureDetail(f, res.err), f.retryable)
	})
	if errors.Is(err, ledger.ErrClaimLost) {
		obj.logger.Error("failure not recorded: another attempt took the object over", "code", f.code, "error", res.err)
		return outcome{kind: outcomeDuplicate, reason: "claim_lost"}
	}
	if err != nil {
		// The record stays in progress until its lease expires; the
		// redelivery then finalises it as outcome_unknown.
		obj.logger.Error("record failure failed: message returned for retry", "code", f.code,
			"call_error", res.err, "error", err)
		return retryLater(retryLedger)
	}
	if f.retryable {
		obj.logger.Warn("call failed, nothing charged: the object waits and its message is returned for retry",
			"code", f.code, "error", res.err)
		return retryLater(f.code)
	}
	obj.logger.Error("call failed for good", "code", f.code, "error", res.err)
	inv.metrics.countReason(metricImagesFailed, f.code)
	inv.logRecorded(obj, ledger.StatusFailed, nil)
	return outcome{kind: outcomeFailed, reason: f.code}
}

// complete records a successful call. The credits are counted at once (they
// were spent whatever happens next); the success only once it is recorded,
// so an image is never counted both succeeded and, after its lease expires
// unrecorded, failed.
func (inv *invocation) complete(ctx context.Context, obj *object, claim *ledger.Claim, res callResult) outcome {
	rec := resultRecord(obj, res)
	inv.logStripped(obj)
	inv.metrics.add(metricCreditsConsumed, float64(res.out.CreditsConsumed))
	inv.metrics.millis(metricServiceLatency, res.out.RoundTrip)
	if rec.ErrorKm != nil {
		inv.metrics.accuracy(rec.ModelID, *rec.ErrorKm)
	}

	err := inv.persist(ctx, obj, "record result", func(ctx context.Context) error {
		return inv.h.deps.Ledger.Complete(ctx, claim, rec)
	})
	if errors.Is(err, ledger.ErrClaimLost) {
		obj.logger.Error("result not recorded: another attempt took the object over after this one's lease expired",
			"prediction_id", rec.PredictionID, "place", rec.Place, "credits", rec.CreditsConsumed)
		return outcome{kind: outcomeDuplicate, reason: "claim_lost"}
	}
	if err != nil {
		// Paid but unrecorded after retrying for the whole finishing window:
		// the record stays in progress and is never called again (its lease
		// expires into outcome_unknown). The result survives in this log line.
		obj.logger.Error("result not recorded: message returned for retry", "error", err,
			"prediction_id", rec.PredictionID, "place", rec.Place, "country", rec.CountryCode,
			"latitude", rec.Latitude, "longitude", rec.Longitude, "credits", rec.CreditsConsumed)
		return retryLater(retryLedger)
	}
	inv.metrics.count(metricImagesSucceeded)
	inv.logRecorded(obj, ledger.StatusSucceeded, &rec)
	return outcome{kind: outcomeSucceeded}
}

// reservation is credits reserved against the daily budget for one call;
// nil when no budget is configured.
type reservation struct {
	inv     *invocation
	obj     *object
	day     string
	credits int
}

// reserveBudget reserves the call's expected cost. Past the budget the
// message waits (returned for retry, its redelivery delayed when possible).
func (inv *invocation) reserveBudget(ctx context.Context, obj *object) (*reservation, outcome, bool) {
	cfg := inv.h.cfg
	if cfg.DailyBudget <= 0 {
		return nil, outcome{}, true
	}
	credits := cfg.ExpectedCost()
	if cfg.ModelFallback && inv.h.modelRetired.Load() {
		credits = 1 // the default model will run
	}
	now := inv.h.opts.Clock()
	day := ledger.Day(now)
	ok, err := inv.h.deps.Ledger.ReserveCredits(ctx, day, credits, cfg.DailyBudget)
	if err != nil {
		obj.logger.Error("budget reservation failed: message returned for retry", "error", err)
		return nil, retryLater(retryLedger), false
	}
	if !ok {
		inv.metrics.count(metricBudgetDeferred)
		delay := untilNextDay(now)
		obj.logger.Warn("daily credit budget reached: message waits", "budget", cfg.DailyBudget, "day", day)
		inv.delayMessage(ctx, obj, delay)
		return nil, retryLater(retryBudget), false
	}
	return &reservation{inv: inv, obj: obj, day: day, credits: credits}, outcome{}, true
}

// settle gives back what was reserved and not charged, or records an
// overspend (a model dearer than expected) so the counter stays true.
func (r *reservation) settle(ctx context.Context, charged int) {
	if r == nil {
		return
	}
	ledgerAPI := r.inv.h.deps.Ledger
	var err error
	switch diff := r.credits - charged; {
	case diff > 0:
		err = ledgerAPI.ReleaseCredits(ctx, r.day, diff)
	case diff < 0:
		_, err = ledgerAPI.ReserveCredits(ctx, r.day, -diff, 1<<31-1)
	}
	if err != nil {
		r.obj.logger.Error("settle daily budget failed", "reserved", r.credits, "charged", charged, "error", err)
	}
	r.credits = charged
}

// untilNextDay is the time left in now's UTC day, when the budget resets,
// capped at SQS's 12-hour visibility limit.
func untilNextDay(now time.Time) time.Duration {
	now = now.UTC()
	next := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	return min(next.Sub(now), maxVisibility)
}

// delayMessage hides a message from the queue for d when a
// VisibilityChanger is configured, at most for what SQS still allows after
// the receive (visibilityLeft). When nothing is left it leaves the message
// as it is: it returns after the queue's visibility timeout.
func (inv *invocation) delayMessage(ctx context.Context, obj *object, d time.Duration) {
	if obj.msg == nil || inv.h.deps.Visibility == nil {
		return
	}
	left := visibilityLeft(inv.h.opts.Clock().Sub(inv.start))
	if d > left {
		obj.logger.Debug("delay capped by the visibility limit counted from the receive",
			"wanted_ms", d.Milliseconds(), "capped_ms", left.Milliseconds())
		d = left
	}
	if d <= 0 {
		obj.logger.Warn("message not delayed: the invocation is too old for SQS to extend its visibility")
		return
	}
	if err := inv.h.deps.Visibility.ChangeVisibility(ctx, *obj.msg, d); err != nil {
		obj.logger.Warn("delay message failed; it returns after the queue's visibility timeout", "error", err)
	}
}
