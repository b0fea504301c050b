package predictor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// object is one upload being processed and what has been learned about it.
type object struct {
	upload
	contentType string
	photo       photoFacts         // EXIF and downscaling, once the object is opened
	msg         *events.SQSMessage // the message that delivered it
	logger      *slog.Logger       // carries request id, bucket and key

	// How far the object got, for a contained panic (contain): the claim
	// once acquired, whether the paid call started, and its result once it
	// returned.
	claim  *ledger.Claim
	called bool
	result *callResult

	// content is the photo's content identity once hashed (reuse.go).
	content *ledger.ContentRef
	// answerRecorded says the object's record now holds a paid answer
	// for content (Complete landed): ClaimContent reuses it whatever the
	// content item's state, so the item need not be ended.
	answerRecorded bool
}

func (o *object) ref() ledger.ObjectRef {
	return o.upload.ref()
}

func (u upload) ref() ledger.ObjectRef {
	return ledger.ObjectRef{Bucket: u.Bucket, Key: u.Key, VersionID: u.VersionID, ETag: u.ETag, Run: u.Run}
}

func (o *object) info() ledger.ObjectInfo {
	return ledger.ObjectInfo{Size: o.Size, ContentType: o.contentType, Content: o.verdictContent()}
}

// processObject takes one upload through every step, cheapest first: the
// checks that cost nothing, the claim, the budget, the rate limiter, one S3
// read and at most one paid call. A panic on the way is contained here, in
// the object's own worker, so the batch's other objects are unaffected.
func (inv *invocation) processObject(ctx context.Context, u upload, msg *events.SQSMessage) (o outcome) {
	logger := inv.logger.With("message_id", msg.MessageId)
	obj := &object{upload: u, msg: msg, logger: logger.With("bucket", u.Bucket, "key", u.Key)}
	if u.Run != "" {
		obj.logger = obj.logger.With("run", u.Run, "run_model", u.Model)
	}
	if u.Job != "" {
		obj.logger = obj.logger.With("job", u.Job)
		if o, stop := inv.jobGate(ctx, obj); stop {
			return o
		}
		defer func() { inv.countJobEnd(ctx, obj, o) }()
	}
	start := inv.now()
	defer func() {
		if r := recover(); r != nil {
			stack := debug.Stack()
			if p, ok := r.(stagedPanic); ok {
				r, stack = p.value, p.stack
			}
			o = inv.contain(ctx, obj, r, stack)
		}
		obj.logger.Debug("object processed", "outcome", o.kind.String(), "reason", o.reason,
			"elapsed_ms", inv.now().Sub(start).Milliseconds())
	}()
	return inv.process(ctx, obj)
}

// contain ends an object whose processing panicked with a true record,
// after logging the panic with the object's bucket and key and the stack.
// Before the paid call (or after one that certainly did not charge), it is
// a final rejection with its own reason: the same bytes would panic again,
// so a retry would only spend receives. Once the call has started, the
// usual rule holds (geoapi.MaybeCharged): it may have charged, so it is
// final and never called again (outcome_unknown; an operator can requeue
// it deliberately).
func (inv *invocation) contain(ctx context.Context, obj *object, r any, stack []byte) outcome {
	obj.logger.Error("processing the object panicked: contained, the batch goes on",
		"panic", fmt.Sprint(r), "stack", string(stack), "claimed", obj.claim != nil, "called", obj.called)
	fctx, cancel := finishContext(ctx)
	defer cancel()
	detail := fmt.Sprintf("processing the object panicked (%v); the same bytes would panic again, so it is not retried", r)
	switch {
	case obj.claim == nil:
		return inv.reject(fctx, obj, ReasonProcessingPanic, detail)
	case !obj.called || (obj.result != nil && obj.result.out == nil && !classifyFailure(obj.result.err).maybeCharged):
		return inv.rejectClaimed(fctx, obj, obj.claim, ReasonProcessingPanic, detail)
	}
	if res := obj.result; res != nil && res.out != nil {
		detail = fmt.Sprintf("the service answered (prediction %s, %d credits) and recording it panicked (%v): not called again",
			res.out.PredictionID, res.out.CreditsConsumed, r)
	} else {
		detail = fmt.Sprintf("the paid call was under way when processing panicked (%v): the service may have charged, so it is not called again (requeue deliberately with geolocate backfill --requeue-unknown)", r)
	}
	err := inv.persist(fctx, obj, "record contained panic", func(ctx context.Context) error {
		return inv.h.deps.Ledger.Fail(ctx, obj.claim, CodeOutcomeUnknown, detail, false)
	})
	if errors.Is(err, ledger.ErrClaimLost) {
		return outcome{kind: outcomeDuplicate, reason: "claim_lost"}
	}
	if err != nil {
		obj.logger.Error("record contained panic failed: message returned for retry", "error", err)
		return retryLater(retryLedger)
	}
	inv.metrics.countReason(metricImagesFailed, CodeOutcomeUnknown)
	inv.logRecorded(obj, ledger.StatusFailed, nil)
	return outcome{kind: outcomeFailed, reason: CodeOutcomeUnknown}
}

// process runs the steps in the order that spends least per image:
//
//  1. Checks that need no I/O, from the event alone (bucket, out-of-credits
//     flag, folder marker, size; a HEAD only when the event lacks the size or
//     the version). Their rejections write a final record with Reject.
//  2. The claim: one conditional write both takes the object and, when it
//     cannot, says why (already done, busy elsewhere, or a vanished attempt),
//     so no ledger read comes first.
//  3. The budget reservation and the rate limiter (in predict), before any
//     S3 connection is opened, so none is held open while waiting.
//  4. One S3 GET whose first bytes are sniffed and whose stream is then
//     uploaded: a non-image is rejected through the claim, an image is read
//     once.
//
// Every exit after the claim either records a final state or gives the
// claim back as a retryable failure (nothing was charged), so a later
// delivery can claim again.
func (inv *invocation) process(ctx context.Context, obj *object) outcome {
	cfg := inv.h.cfg
	if cfg.BucketName != "" && obj.Bucket != cfg.BucketName {
		obj.logger.Warn("ignored: not the configured bucket", "configured_bucket", cfg.BucketName)
		return outcome{kind: outcomeIgnored, reason: "other_bucket"}
	}
	if inv.outOfCredits.Load() {
		return inv.outage(obj, retryOutOfCredits)
	}
	if obj.OtherKey != "" {
		given := obj.Key
		if err := resolveKey(ctx, inv.h.deps.Objects, &obj.upload); err != nil {
			return inv.storageError(ctx, obj, err)
		}
		if obj.Key != given {
			obj.logger = obj.logger.With("resolved_key", obj.Key)
			obj.logger.Info("the notification's key was URL-encoded: the object is under its decoded form", "notified_key", given)
		}
	}
	if strings.HasSuffix(obj.Key, "/") {
		return inv.reject(ctx, obj, ReasonFolderMarker, "the key ends with a slash: a folder marker, not an image")
	}
	if !obj.SizeKnown || (obj.VersionID == "" && obj.ETag == "") {
		if err := headObject(ctx, inv.h.deps.Objects, &obj.upload); err != nil {
			return inv.storageError(ctx, obj, err)
		}
	}
	if obj.Size == 0 {
		return inv.reject(ctx, obj, ReasonEmptyObject, "the object is empty")
	}
	if obj.Size > cfg.MaxImageBytes && cfg.Oversize == OversizeReject {
		return inv.reject(ctx, obj, ReasonTooLarge, fmt.Sprintf("%d bytes is more than the service's limit of %d bytes",
			obj.Size, cfg.MaxImageBytes))
	}
	if !inv.timeToCall() {
		// Untouched, so free: the redelivery starts with a fresh deadline.
		obj.logger.Info("too close to the invocation deadline to start a call: message returned for retry")
		return retryLater(retryDeadline)
	}
	key, err := inv.h.deps.Keys.Key(ctx)
	if err != nil {
		// The cached value may be the placeholder the operator has since
		// replaced: read the secret afresh (Refresh is rate-limited).
		key, err = inv.h.deps.Keys.Refresh(ctx)
	}
	if err != nil {
		// Before the claim: nothing is held, but the record says why the
		// object waits (often the placeholder secret written at deploy).
		obj.logger.Error("API key unavailable: message returned for retry", "error", err)
		detail := "the API key could not be read (put the geo_ key in the secret; a new stack's secret holds a placeholder): " + err.Error()
		if werr := inv.h.deps.Ledger.MarkWaiting(ctx, obj.ref(), retryKeyUnavailable, detail, false); werr != nil {
			obj.logger.Warn("record waiting failed", "error", werr)
		}
		return inv.outage(obj, retryKeyUnavailable)
	}
	var st *staging
	switch {
	case obj.Size > cfg.MaxImageBytes:
		// Downscaled, holding the claim (prepareOversize).
	case receiveCount(obj.msg) > 1:
		// A redelivery is where a refused claim (a duplicate, another
		// attempt at work) is likely and a moment matters least (it
		// waited out a visibility timeout): it claims before any GET, so
		// a refused claim costs nothing else.
		st = inv.stageAfterClaim(obj)
	default:
		// A first delivery reads beside the claim's write; the GET is
		// abandoned when the claim is refused.
		st = inv.startStaging(ctx, obj)
		defer st.stop()
	}
	claim, o, ok := inv.claim(ctx, obj)
	if !ok {
		return o
	}
	return inv.predict(ctx, obj, claim, key, st)
}

// staging runs open (the GET, the sniffing, EXIF and the content digest)
// for a photo sent as stored, while the claim's conditional write is under
// way: the pipeline's own time per image is then the longer of the two, not
// their sum. It holds to the order of process: nothing it does spends (a
// GET is no call, no budget and no slot), it writes nothing to the ledger,
// and every decision from what it found (a rejection, a release, the
// content claim) is taken only once the claim is held (settleOpen). When
// the claim is refused the GET was the only cost: a duplicate delivery pays
// one S3 request, never a credit.
type staging struct {
	inv *invocation
	// done is closed when the staging goroutine ends; nil for a staging
	// that runs open in result, holding the claim (stageAfterClaim).
	done   chan struct{}
	cancel context.CancelFunc
	// obj is a copy of the object that only the staging goroutine writes
	// until done: its photo facts and content type go to the object in
	// result, so the claim's writes to the object (its logger, its claim)
	// never race with it.
	obj      *object
	op       opened
	panicked *stagedPanic
}

// stagedPanic carries a panic of the staging goroutine, with its stack, to
// the object's own goroutine, where contain records it with the claim.
type stagedPanic struct {
	value any
	stack []byte
}

func (inv *invocation) startStaging(ctx context.Context, obj *object) *staging {
	sctx, cancel := context.WithCancel(ctx)
	st := &staging{inv: inv, done: make(chan struct{}), cancel: cancel,
		obj: &object{upload: obj.upload, msg: obj.msg, logger: obj.logger}}
	go func() {
		defer close(st.done)
		defer func() {
			if r := recover(); r != nil {
				st.panicked = &stagedPanic{value: r, stack: debug.Stack()}
			}
		}()
		st.op = inv.open(sctx, st.obj, true)
	}()
	return st
}

// stageAfterClaim is a staging that opens the object only once the claim
// is held, in the object's goroutine.
func (inv *invocation) stageAfterClaim(obj *object) *staging {
	return &staging{inv: inv, obj: obj}
}

// result waits for the staging and hands what it found to obj, the open
// stream included (stop no longer closes it). A panic of the staging is
// raised again here, in the object's goroutine, holding the claim.
func (st *staging) result(ctx context.Context, obj *object) opened {
	if st.done == nil {
		return st.inv.open(ctx, obj, true)
	}
	<-st.done
	if p := st.panicked; p != nil {
		panic(*p)
	}
	obj.photo, obj.contentType = st.obj.photo, st.obj.contentType
	op := st.op
	st.op.body = nil
	return op
}

// stop abandons what the staging still holds: it cancels its reads, waits
// for it and closes a stream result did not hand over. It runs when the
// object's processing ends, so a handed-over stream is read in full first.
func (st *staging) stop() {
	if st.done == nil {
		return
	}
	st.cancel()
	<-st.done
	st.op.body.closeIfOpened()
}

// claim takes the object with one conditional write. When the write is
// refused, the record it returns decides: a final record is a duplicate
// delivery, a live lease is another attempt at work, an expired lease is an
// attempt that vanished and is never called again.
func (inv *invocation) claim(ctx context.Context, obj *object) (*ledger.Claim, outcome, bool) {
	claim, claimed, err := inv.h.deps.Ledger.Claim(ctx, obj.ref(), inv.h.cfg.ClaimLease)
	if err != nil {
		obj.logger.Error("claim failed: message returned for retry", "error", err)
		return nil, retryLater(retryLedger), false
	}
	switch claimed {
	case ledger.ClaimAcquired:
		obj.logger = obj.logger.With("claim_attempt", claim.Attempt)
		obj.claim = claim
		return claim, outcome{}, true
	case ledger.ClaimDone:
		return nil, inv.duplicate(obj, claim.Record.Status), false
	case ledger.ClaimExpired:
		return nil, inv.outcomeUnknown(ctx, obj, claim.Record), false
	default:
		return nil, inv.busy(obj), false
	}
}

// storageError handles a failed HEAD, before any claim: a rejection when
// the object is gone (nothing to predict, ever), a retry otherwise.
func (inv *invocation) storageError(ctx context.Context, obj *object, err error) outcome {
	if objectGone(err) {
		return inv.reject(ctx, obj, ReasonObjectNotFound, "the object version was deleted or replaced before processing")
	}
	obj.logger.Warn("S3 read failed: message returned for retry", "error", err)
	return retryLater(retryStorage)
}

func (inv *invocation) duplicate(obj *object, status string) outcome {
	obj.logger.Info("duplicate delivery: already recorded", "status", status)
	inv.metrics.count(metricDuplicatesSkipped)
	return outcome{kind: outcomeDuplicate, reason: status}
}

func (inv *invocation) busy(obj *object) outcome {
	obj.logger.Info("another attempt holds the object: message returned for retry")
	inv.metrics.count(metricDuplicatesSkipped)
	return retryLater(retryBusy)
}

// outcomeUnknown finalises an object whose earlier attempt claimed it and
// vanished, possibly after the service charged: it is not called again. An
// operator can requeue it after checking.
func (inv *invocation) outcomeUnknown(ctx context.Context, obj *object, rec *ledger.Record) outcome {
	err := inv.h.deps.Ledger.MarkOutcomeUnknown(ctx, rec)
	if errors.Is(err, ledger.ErrClaimLost) {
		return inv.busy(obj)
	}
	if err != nil {
		obj.logger.Error("mark outcome unknown failed: message returned for retry", "error", err)
		return retryLater(retryLedger)
	}
	obj.logger.Error("an earlier attempt claimed this object and vanished; marked outcome_unknown and not called again",
		"attempts", rec.Attempts)
	inv.metrics.countReason(metricImagesFailed, ledger.ErrorCodeOutcomeUnknown)
	inv.logRecorded(obj, ledger.StatusFailed, nil)
	return outcome{kind: outcomeFailed, reason: ledger.ErrorCodeOutcomeUnknown}
}

// reject writes a final rejected record; no call is made.
func (inv *invocation) reject(ctx context.Context, obj *object, reason, detail string) outcome {
	err := inv.h.deps.Ledger.Reject(ctx, obj.ref(), reason, detail, obj.info())
	if errors.Is(err, ledger.ErrInProgress) {
		return inv.busy(obj)
	}
	if err != nil {
		obj.logger.Error("record rejection failed: message returned for retry", "reason", reason, "error", err)
		return retryLater(retryLedger)
	}
	return inv.rejected(obj, reason, detail)
}

// rejectClaimed turns the claim into a final rejected record, for an object
// found unfit after the claim (not an image, or gone); no call is made.
func (inv *invocation) rejectClaimed(ctx context.Context, obj *object, claim *ledger.Claim, reason, detail string) outcome {
	err := inv.h.deps.Ledger.RejectClaimed(ctx, claim, reason, detail, obj.info())
	if errors.Is(err, ledger.ErrClaimLost) {
		obj.logger.Error("rejection not recorded: another attempt took the object over", "reason", reason)
		return outcome{kind: outcomeDuplicate, reason: "claim_lost"}
	}
	if err != nil {
		// The record stays in progress until its lease expires; the
		// redelivery then finalises it as outcome_unknown (never called).
		obj.logger.Error("record rejection failed: message returned for retry", "reason", reason, "error", err)
		return retryLater(retryLedger)
	}
	return inv.rejected(obj, reason, detail)
}

// rejected logs and counts a recorded rejection.
func (inv *invocation) rejected(obj *object, reason, detail string) outcome {
	obj.logger.Info("rejected without a call", "reason", reason, "detail", detail, "size", obj.Size)
	inv.metrics.countReason(metricImagesRejected, reason)
	inv.logRecorded(obj, ledger.StatusRejected, nil)
	return outcome{kind: outcomeRejected, reason: reason}
}
