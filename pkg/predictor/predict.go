package predictor

import (
	"context"
	"errors"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// predict spends, holding the claim: it opens the object once to sniff it,
// reserves budget, takes a call slot (waiting for it, or holding it while
// the message goes back to the queue) and makes the paid call with that
// same stream, then records the outcome. Every early exit releases the
// claim or turns it into a final record.
//
// What decides that no call is made comes before the budget and the slot,
// so a photo that makes no call costs neither, and takes no place in the
// schedule every instance shares: the object's first bytes are read (a
// non-image, absurd dimensions, metadata that cannot be stripped are
// rejected), a photo over the limit (oversize=downscale) is downscaled, and
// with exifGps=skip its EXIF position decides. The stream then stays open
// while the invocation waits for its slot, at most MaxSlotWait; a slot
// further away closes it, and the delivery that calls opens it again.
//
// st is the object's staging, started beside the claim (nil for a photo
// over the limit): its GET, sniffing and digest already ran, so predict
// only decides with their findings.
func (inv *invocation) predict(ctx context.Context, obj *object, claim *ledger.Claim, key string, st *staging) outcome {
	var body *openedObject // the object's stream once opened; stays nil when the downscaled image is sent
	// Closed on every exit, a panic's included; a no-op once the upload
	// has consumed and closed it.
	defer func() { body.closeIfOpened() }()
	var (
		o  outcome
		ok bool
		op opened
	)
	if st == nil {
		o, ok = inv.prepareOversize(ctx, obj, claim)
	} else {
		op = st.result(ctx, obj)
		body, o, ok = inv.settleOpen(ctx, obj, claim, op)
	}
	if !ok {
		return o
	}
	if inv.knownPosition(obj) {
		return inv.completeFromEXIF(ctx, obj, claim)
	}
	if inv.h.cfg.reuseOn() && !op.hashed {
		// The downscaled JPEG's digest (the object's stream is hashed in
		// staging).
		op.digest, op.digestErr = inv.contentDigest(obj, body)
		body.closeIfOpened()
		body = nil
	}
	content, o, ok := inv.claimContent(ctx, obj, claim, op.digest, op.digestErr)
	if !ok {
		return o
	}
	if content != nil {
		// Deferred first, so it runs last: after the object's record.
		defer inv.endContent(ctx, obj, content)
	}

	budget, o, ok := inv.reserveBudget(ctx, obj)
	if !ok {
		return inv.release(ctx, obj, claim, o, budgetDetail(o))
	}
	// The budget is settled here and only here, on every exit, a panic's
	// included: what the call charged (or may have charged) stays counted,
	// the rest goes back. From the call's start it counts as charged until
	// the answer says otherwise.
	charged := 0
	defer func() { budget.settle(ctx, charged) }()

	slot, held, err := inv.slotFor(ctx, obj, claim)
	if err != nil {
		obj.logger.Warn("no call slot: message returned for retry", "error", err)
		return inv.release(ctx, obj, claim, inv.noSlot(err), err.Error())
	}
	if !inv.soonEnough(obj, slot, held) {
		return inv.hold(ctx, obj, claim, slot)
	}
	if err := inv.sleepUntil(ctx, slot); err != nil {
		return inv.release(ctx, obj, claim, retryLater(retryRateWait), err.Error())
	}
	// Checked again right before the call: another worker of this batch
	// may have hit 402 while this one waited.
	if inv.outOfCredits.Load() {
		return inv.release(ctx, obj, claim, inv.outage(obj, retryOutOfCredits), "another call of the batch found the account out of credits")
	}
	charged = budget.reserved()
	obj.called = true
	callCtx, cancelCall := inv.callContext(ctx)
	res := inv.call(callCtx, obj, key, body)
	cancelCall()
	obj.result = &res

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
		charged = 0
		return inv.rejectClaimed(fctx, obj, claim, ReasonTooLarge, "the service refused the image as too large: "+res.err.Error())
	case errors.As(res.err, &unsupported):
		budget.settle(fctx, 0)
		return inv.rejectClaimed(fctx, obj, claim, ReasonUnsupportedFormat, "the service refused the file's type: "+res.err.Error())
	case res.err != nil:
		f := classifyFailure(res.err)
		var de *geoapi.DecodeError
		switch {
		case !f.maybeCharged:
			charged = 0
		case errors.As(res.err, &de) && de.CreditsConsumed != nil:
			// An unreadable answer that says what it charged: never less
			// than the reservation, more when it says so.
			charged = max(charged, *de.CreditsConsumed)
		}
		return inv.fail(fctx, obj, claim, res, f)
	}
	charged = inv.counted(obj, budget, res.out)
	res.charged = charged
	return inv.complete(fctx, obj, claim, res)
}

// opened is what one GET of the object and its first bytes said, found
// without the claim (startStaging runs it while the claim is taken):
// settleOpen decides with the claim.
type opened struct {
	body   *openedObject // the stream, still open; nil once hashed or closed
	err    error         // the GET failed
	reason string        // the head rejects the object (with detail)
	detail string
	// hashed says the stream was read to its end for the content digest
	// (contentDigest): digest, or digestErr when the read failed.
	hashed    bool
	digest    string
	digestErr error
}

// open opens the object with one GET, sniffs its first bytes and reads EXIF
// from them (into obj.photo). forUpload adds the stripping check of
// openForUpload and, when answers are reused and the photo is to be called
// for, its content digest. It writes nothing but obj's photo facts and
// content type, so it can run beside the claim on a copy of obj; every
// decision that needs the claim is settleOpen's.
func (inv *invocation) open(ctx context.Context, obj *object, forUpload bool) opened {
	body, err := openObject(ctx, inv.h.deps.Objects, obj.upload)
	if err != nil {
		return opened{err: err}
	}
	v := examineHead(body.head, obj.Size, inv.h.cfg)
	obj.contentType = v.format.MIME
	if v.reason != "" {
		body.Close()
		return opened{reason: v.reason, detail: v.detail}
	}
	inv.readEXIF(obj, body.head, v.exif, v.exifErr)
	if !forUpload {
		return opened{body: body}
	}
	if detail, ok := inv.checkStrippable(obj, body.head); !ok {
		body.Close()
		return opened{reason: ReasonCannotStripMetadata, detail: detail}
	}
	if !inv.h.cfg.reuseOn() || inv.knownPosition(obj) {
		return opened{body: body}
	}
	sum, err := inv.contentDigest(obj, body)
	body.Close()
	return opened{hashed: true, digest: sum, digestErr: err}
}

// settleOpen ends the claim when open found the object unfit: a non-image,
// an image whose header declares absurd dimensions, metadata that cannot be
// stripped or a vanished object as rejected; any other S3 error releases it
// for a retry.
func (inv *invocation) settleOpen(ctx context.Context, obj *object, claim *ledger.Claim, op opened) (*openedObject, outcome, bool) {
	if op.err == nil && op.reason == "" {
		return op.body, outcome{}, true
	}
	fctx, cancel := finishContext(ctx)
	defer cancel()
	switch {
	case op.reason != "":
		return nil, inv.rejectClaimed(fctx, obj, claim, op.reason, op.detail), false
	case objectGone(op.err):
		return nil, inv.rejectClaimed(fctx, obj, claim, ReasonObjectNotFound,
			"the object version was deleted or replaced before processing"), false
	}
	obj.logger.Warn("S3 read failed: message returned for retry", "error", op.err)
	return nil, inv.releaseAs(fctx, obj, claim, retryLater(retryStorage), CodeStorage, op.err.Error()), false
}

// openImage opens the object (open) holding the claim, for the downscaling
// path. The stream is closed unless returned.
func (inv *invocation) openImage(ctx context.Context, obj *object, claim *ledger.Claim) (*openedObject, outcome, bool) {
	return inv.settleOpen(ctx, obj, claim, inv.open(ctx, obj, false))
}

// release gives the claim back before any call, as a retryable failure
// whose code is the retry reason (nothing was charged), so a later delivery
// can claim again, and returns o.
func (inv *invocation) release(ctx context.Context, obj *object, claim *ledger.Claim, o outcome, detail string) outcome {
	return inv.giveBack(ctx, obj, claim, o, o.reason, detail, time.Time{})
}

// releaseAs is release with a code other than the retry reason.
func (inv *invocation) releaseAs(ctx context.Context, obj *object, claim *ledger.Claim, o outcome, code, detail string) outcome {
	return inv.giveBack(ctx, obj, claim, o, code, detail, time.Time{})
}

// giveBack writes the retryable record (waiting, code and detail, holding
// slot when not zero) within the finishing window and returns o.
func (inv *invocation) giveBack(ctx context.Context, obj *object, claim *ledger.Claim, o outcome, code, detail string, slot time.Time) outcome {
	fctx, cancel := finishContext(ctx)
	defer cancel()
	err := inv.persist(fctx, obj, "release", func(ctx context.Context) error {
		return inv.h.deps.Ledger.Release(ctx, claim, code, detail, slot)
	})
	if err != nil && !errors.Is(err, ledger.ErrClaimLost) {
		// The record stays in progress until its lease expires; the
		// redelivery then finalises it as outcome_unknown.
		obj.logger.Error("release claim failed", "code", code, "error", err)
		return retryLater(retryLedger)
	}
	return o
}

// fail records a failed call, classified as f: retryable failures free the
// object for a later delivery and return the message (until the next call
// can be made: see retryOf); final ones are acknowledged.
func (inv *invocation) fail(ctx context.Context, obj *object, claim *ledger.Claim, res callResult, f failure) outcome {
	switch f.code {
	case CodeOutOfCredits:
		if inv.outOfCredits.CompareAndSwap(false, true) {
			obj.logger.Error("out of credits: no more calls in this batch; the remaining messages wait for a top-up")
		}
		inv.metrics.count(metricOutOfCredits)
	case CodeRateLimited:
		inv.metrics.count(metricRateLimited)
	}
	var retry outcome
	var slot time.Time
	if f.retryable {
		retry, slot = inv.retryOf(obj, res.err, f.code)
	}
	charged := chargedFailure(obj, res, f)
	err := inv.persist(ctx, obj, "record failure", func(ctx context.Context) error {
		switch {
		case f.retryable:
			return inv.h.deps.Ledger.Release(ctx, claim, f.code, failureDetail(f, res.err), slot)
		case charged != nil:
			return inv.h.deps.Ledger.FailCharged(ctx, claim, f.code, failureDetail(f, res.err), *charged)
		}
		return inv.h.deps.Ledger.Fail(ctx, claim, f.code, failureDetail(f, res.err), false)
	})
	if errors.Is(err, ledger.ErrResultReduced) {
		err = nil
	}
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
			"code", f.code, "error", res.err, "retry_in_ms", retry.delay.Milliseconds(), "delayed", retry.delayed)
		return retry
	}
	obj.logger.Error("call failed for good", "code", f.code, "error", res.err)
	if charged != nil {
		inv.metrics.add(metricCreditsConsumed, float64(charged.CreditsConsumed))
	}
	inv.metrics.countReason(metricImagesFailed, f.code)
	inv.logRecorded(obj, ledger.StatusFailed, nil)
	o := outcome{kind: outcomeFailed, reason: f.code}
	if charged != nil {
		o.credits = charged.CreditsConsumed
	}
	return o
}

// retryOf is when the object of a retryable call failure is tried again,
// and the slot it holds for it: until HeldSlotLead before the slot, or
// until the end of the wait the call stopped on (returnUntil), after the
// outage backoff while the credits or the key are missing, after the delay
// a 429 asked for (capped) when the client gave up waiting for it, else
// after the queue's visibility timeout.
func (inv *invocation) retryOf(obj *object, err error, code string) (outcome, time.Time) {
	var (
		ru *returnUntil
		rl *geoapi.RateLimitedError
	)
	switch {
	case errors.As(err, &ru) && !ru.slot.IsZero():
		return inv.heldFor(code, ru.slot), ru.slot
	case errors.As(err, &ru):
		return retryLater(code).after(ru.at.Sub(inv.now())), time.Time{}
	case outageReason(code):
		return inv.outage(obj, code), time.Time{}
	case errors.As(err, &rl) && rl.RetryAfter > 0:
		return retryLater(code).after(min(rl.RetryAfter, inv.h.cfg.MaxServerDelay)), time.Time{}
	}
	return retryLater(code), time.Time{}
}

// complete records a successful call. The credits are counted at once (they
// were spent whatever happens next); the success only once it is recorded,
// so an image is never counted both succeeded and, after its lease expires
// unrecorded, failed.
func (inv *invocation) complete(ctx context.Context, obj *object, claim *ledger.Claim, res callResult) outcome {
	rec := resultRecord(obj, res)
	inv.addHistory(ctx, obj, &rec)
	// On whichever line ends this paid upload: what it carried of the
	// photo's metadata.
	stripped := inv.strippedAttrs(obj)
	inv.metrics.add(metricCreditsConsumed, float64(res.charged))
	inv.metrics.millis(metricServiceLatency, res.out.RoundTrip)
	if rec.ErrorKm != nil {
		inv.metrics.accuracy(rec.ModelID, *rec.ErrorKm)
	}

	err := inv.persist(ctx, obj, "record result", func(ctx context.Context) error {
		return inv.h.deps.Ledger.Complete(ctx, claim, rec)
	})
	if errors.Is(err, ledger.ErrResultReduced) {
		// Final: the paid call is recorded, with its credits, as failed.
		obj.logger.Error("result refused by DynamoDB: recorded as failed without it", "code", ledger.ErrorCodeResultNotStorable,
			"prediction_id", rec.PredictionID, "credits", rec.CreditsConsumed, "error", err)
		inv.metrics.countReason(metricImagesFailed, ledger.ErrorCodeResultNotStorable)
		inv.logRecorded(obj, ledger.StatusFailed, nil, stripped...)
		return outcome{kind: outcomeFailed, reason: ledger.ErrorCodeResultNotStorable, credits: res.charged}
	}
	if errors.Is(err, ledger.ErrClaimLost) {
		obj.logger.Error("result not recorded: another attempt took the object over after this one's lease expired",
			append([]any{"prediction_id", rec.PredictionID, "place", rec.Place, "credits", rec.CreditsConsumed}, stripped...)...)
		return outcome{kind: outcomeDuplicate, reason: "claim_lost"}
	}
	if err != nil {
		// Paid but unrecorded after retrying for the whole finishing window:
		// the record stays in progress and is never called again (its lease
		// expires into outcome_unknown). The result survives in this log line.
		obj.logger.Error("result not recorded: message returned for retry", append([]any{"error", err,
			"prediction_id", rec.PredictionID, "place", rec.Place, "country", rec.CountryCode,
			"latitude", rec.Latitude, "longitude", rec.Longitude, "credits", rec.CreditsConsumed}, stripped...)...)
		return retryLater(retryLedger)
	}
	obj.answerRecorded = obj.content != nil
	inv.metrics.succeeded(rec.ModelID)
	inv.logRecorded(obj, ledger.StatusSucceeded, &rec, stripped...)
	return outcome{kind: outcomeSucceeded, credits: res.charged}
}
