package predictor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geolocate-aws/geolocate/pkg/imageformat"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// object is one upload being processed and what has been learned about it.
type object struct {
	upload
	contentType string
	msg         *events.SQSMessage // nil for direct invocations
	logger      *slog.Logger       // carries request id, bucket and key
}

func (o *object) ref() ledger.ObjectRef {
	return ledger.ObjectRef{Bucket: o.Bucket, Key: o.Key, VersionID: o.VersionID, ETag: o.ETag}
}

func (o *object) info() ledger.ObjectInfo {
	return ledger.ObjectInfo{Size: o.Size, ContentType: o.contentType}
}

// processObject takes one upload through every step, cheapest first: the
// checks that cost nothing, then the budget, the rate limiter, the claim and
// at most one paid call.
func (inv *invocation) processObject(ctx context.Context, u upload, msg *events.SQSMessage) outcome {
	logger := inv.logger
	if msg != nil {
		logger = logger.With("message_id", msg.MessageId)
	}
	obj := &object{upload: u, msg: msg, logger: logger.With("bucket", u.Bucket, "key", u.Key)}
	start := inv.h.opts.Clock()
	o := inv.process(ctx, obj)
	obj.logger.Debug("object processed", "outcome", o.kind.String(), "reason", o.reason,
		"elapsed_ms", inv.h.opts.Clock().Sub(start).Milliseconds())
	return o
}

func (inv *invocation) process(ctx context.Context, obj *object) outcome {
	cfg := inv.h.cfg
	if cfg.BucketName != "" && obj.Bucket != cfg.BucketName {
		obj.logger.Warn("ignored: not the configured bucket", "configured_bucket", cfg.BucketName)
		return outcome{kind: outcomeIgnored, reason: "other_bucket"}
	}
	if inv.outOfCredits.Load() {
		return retryLater(retryOutOfCredits)
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
	if imageformat.TooLarge(obj.Size) {
		return inv.reject(ctx, obj, ReasonTooLarge, fmt.Sprintf("%d bytes is more than the service's limit of %d bytes",
			obj.Size, imageformat.MaxImageBytes))
	}
	if o, done := inv.checkLedger(ctx, obj); done {
		return o
	}
	head, err := readHead(ctx, inv.h.deps.Objects, obj.upload)
	if err != nil {
		return inv.storageError(ctx, obj, err)
	}
	format, ok := imageformat.Detect(head)
	if !ok {
		return inv.reject(ctx, obj, ReasonNotAnImage, "the first bytes are not those of a supported image format")
	}
	obj.contentType = format.MIME
	return inv.predict(ctx, obj)
}

// storageError turns an S3 failure into a rejection when the object is gone
// (nothing to predict, ever) and into a retry otherwise.
func (inv *invocation) storageError(ctx context.Context, obj *object, err error) outcome {
	if objectGone(err) {
		return inv.reject(ctx, obj, ReasonObjectNotFound, "the object version was deleted or replaced before processing")
	}
	obj.logger.Warn("S3 read failed: message returned for retry", "error", err)
	return retryLater(retryStorage)
}

// checkLedger looks for an existing record before anything is read or
// reserved: a redelivery of a finished object stops here.
func (inv *invocation) checkLedger(ctx context.Context, obj *object) (outcome, bool) {
	rec, err := inv.h.deps.Ledger.Lookup(ctx, obj.ref())
	if err != nil {
		obj.logger.Error("ledger lookup failed: message returned for retry", "error", err)
		return retryLater(retryLedger), true
	}
	if rec == nil {
		return outcome{}, false
	}
	switch {
	case rec.Final():
		return inv.duplicate(obj, rec.Status), true
	case rec.Status == ledger.StatusInProgress && rec.LeaseUntil.Unix() > inv.h.opts.Clock().Unix():
		return inv.busy(obj), true
	case rec.Status == ledger.StatusInProgress:
		return inv.outcomeUnknown(ctx, obj, rec), true
	}
	return outcome{}, false // failed and retryable: claim it again
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
	obj.logger.Info("rejected without a call", "reason", reason, "detail", detail, "size", obj.Size)
	inv.metrics.countReason(metricImagesRejected, reason)
	inv.logRecorded(obj, ledger.StatusRejected, nil)
	return outcome{kind: outcomeRejected, reason: reason}
}
