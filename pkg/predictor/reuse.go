package predictor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/photo/metastrip"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// Reuse modes (GEO_REUSE_RESULTS).
const (
	// ReuseContent pays once per photo: an answer is reused for every
	// object whose upload would send the service the same bytes with the
	// same request (ledger.ClaimContent).
	ReuseContent = settings.ReuseContent
	// ReuseOff pays once per object version, as before content identity.
	ReuseOff = settings.ReuseOff
)

// retryContentBusy: another object with the same content is calling now.
const retryContentBusy = "content_claimed_elsewhere"

// reuseOn reports whether answers are reused: unless the operator turned
// it off, whatever the value (the zero one included).
func (c Config) reuseOn() bool { return c.ReuseResults != ReuseOff }

// contentRequest names everything of the request, besides the bytes sent,
// that changes the service's answer: the model asked for and top_n. The
// upload mode, the downscale and the stripping change the bytes, and so the
// digest.
func (c Config) contentRequest() string {
	model, topN := c.ModelID, "default"
	if model == "" {
		model = "default"
	}
	if c.TopN > 0 {
		topN = strconv.Itoa(c.TopN)
	}
	return "model=" + model + ";top_n=" + topN
}

// runContentRequest is the content request of a reprocess run's object: its
// run and model lead, so copies within one run are paid once, and a run
// never receives an answer paid by run 0 or by another run (or model).
// Run 0's requests (contentRequest) are unchanged.
func runContentRequest(run, model string, topN int) string {
	return "run=" + run + ";" + Config{ModelID: model, TopN: topN}.contentRequest()
}

// OnePassMaxBytes is the largest photo whose bytes sent are kept in memory
// while they are hashed, and uploaded from there: the photo is then read
// from S3 once (one GET, one first-byte latency) instead of twice. 4 MiB
// holds a typical phone photo (a 12 MP JPEG is 2-5 MB, a HEIC 1-3 MB);
// DefaultParallelism workers hold at most 16 MiB so, within what
// downscale.ProcessReserve keeps for the batch's other objects (their
// downscaled JPEGs, up to 10 MB each, are never held by the same worker
// as these bytes), so the downscale's memory budget is unchanged. A larger
// photo is hashed in constant memory and streamed by a second GET, so the
// peak stays that of BenchmarkHandler10MBPeakHeap.
const OnePassMaxBytes = 4 << 20

// sentBytes are the bytes sent of a photo of at most OnePassMaxBytes, kept
// while they were hashed: every attempt of the call uploads them, so what
// the service receives is exactly what the digest names.
type sentBytes struct {
	data []byte
	// stripped is the stripping reader they came out of (uploadMetadata=
	// strip), for what was removed; nil with keep.
	stripped *metastrip.Reader
}

// contentDigest is the SHA-256 of exactly the bytes the service would
// receive for obj: the downscaled JPEG; else the object's stream through
// the stripping reader the upload uses (uploadMetadata=strip), else the
// object as stored. Copies that differ only in metadata values that strip
// blanks count as one. The stream, a GET of the notification's version
// (version id, else If-Match on its ETag: "To return a different version,
// use the versionId subresource", GetObject's versionId,
// https://docs.aws.amazon.com/sdk-for-kotlin/api/latest/s3/aws.sdk.kotlin.services.s3.model/-get-object-request/version-id.html),
// is read to its end here. A photo of at most OnePassMaxBytes keeps what was
// hashed in obj.photo.sent and the call uploads that; a larger one is
// hashed in constant memory and the call opens the object again (the
// stripping reader's output depends on the input bytes alone, so that
// upload sends what was hashed).
func (inv *invocation) contentDigest(obj *object, body *openedObject) (string, error) {
	if d := obj.photo.downscaled; d != nil {
		sum := sha256.Sum256(d.JPEG)
		return hex.EncodeToString(sum[:]), nil
	}
	var (
		keep *bytes.Buffer
		r    io.Reader = body
	)
	if obj.Size <= OnePassMaxBytes {
		keep = bytes.NewBuffer(make([]byte, 0, obj.Size))
		// One byte past the size tells a longer stream, without holding it.
		r = io.LimitReader(body, obj.Size+1)
	}
	d, err := hashStream(r, !inv.h.cfg.keepMetadata(), keep)
	if err != nil {
		return "", err
	}
	if d.n != obj.Size {
		// The upload announces obj.Size: a digest of other bytes would
		// name another photo.
		return "", fmt.Errorf("read %d bytes of a %d byte object", d.n, obj.Size)
	}
	if keep != nil {
		obj.photo.sent = &sentBytes{data: keep.Bytes(), stripped: d.stripped}
	}
	return d.sum, nil
}

// streamDigest is the hex SHA-256 of r, through a stripping reader when
// strip, and how many bytes it covered.
func streamDigest(r io.Reader, strip bool) (string, int64, error) {
	d, err := hashStream(r, strip, nil)
	return d.sum, d.n, err
}

// digest is what hashStream read.
type digest struct {
	sum      string // hex SHA-256
	n        int64  // bytes hashed
	stripped *metastrip.Reader
}

// hashStream hashes r, through a stripping reader when strip, and copies
// the hashed bytes to keep when it is not nil.
func hashStream(r io.Reader, strip bool, keep *bytes.Buffer) (digest, error) {
	var d digest
	if strip {
		sr, err := metastrip.New(r, stripOptions)
		if err != nil {
			return d, err
		}
		d.stripped, r = sr, sr
	}
	h := sha256.New()
	var w io.Writer = h
	if keep != nil {
		w = io.MultiWriter(h, keep)
	}
	n, err := io.Copy(w, r)
	d.n = n
	if err != nil {
		return d, err
	}
	d.sum = hex.EncodeToString(h.Sum(nil))
	return d, nil
}

// claimContent consults the content ledger with the photo's digest (sum,
// or err when reading the photo to hash it failed), holding the object's
// claim and before any budget, slot or call: an answer for the same
// content and request is copied (no call), a copy being called for
// elsewhere sends the message back until that call has ended, and
// otherwise the object pays and holds the content until its record is
// written (endContent). The call uploads the bytes kept while hashing
// (obj.photo.sent), or opens the object again for a larger photo.
func (inv *invocation) claimContent(ctx context.Context, obj *object, claim *ledger.Claim, sum string, err error) (*ledger.ContentClaim, outcome, bool) {
	cfg := inv.h.cfg
	if !cfg.reuseOn() {
		return nil, outcome{}, true
	}
	if err != nil {
		fctx, cancel := finishContext(ctx)
		defer cancel()
		obj.logger.Warn("S3 read failed while hashing the photo: message returned for retry", "error", err)
		return nil, inv.releaseAs(fctx, obj, claim, retryLater(retryStorage), CodeStorage, "read object to hash it: "+err.Error()), false
	}
	c := ledger.ContentRef{SHA256: sum, Request: cfg.contentRequest()}
	if obj.Run != "" {
		c.Request = runContentRequest(obj.Run, obj.Model, cfg.TopN)
	}
	obj.content = &c
	obj.logger = obj.logger.With("content_sha256", sum)

	cc, got, err := inv.h.deps.Ledger.ClaimContent(ctx, c, obj.ref(), cfg.ClaimLease, cfg.ReuseMaxAge)
	switch {
	case err != nil:
		obj.logger.Error("content claim failed: message returned for retry", "error", err)
		return nil, inv.release(ctx, obj, claim, retryLater(retryLedger), err.Error()), false
	case got == ledger.ContentReusable:
		return nil, inv.completeReused(ctx, obj, claim, cc), false
	case got == ledger.ContentBusy:
		inv.metrics.count(metricDuplicatesSkipped)
		wait := inv.contentBusyWait(cc.LeaseUntil, receiveCount(obj.msg))
		obj.logger.Info("a copy of this photo is being called for elsewhere: message returned until its answer",
			"retry_in_ms", wait.Milliseconds())
		return nil, inv.release(ctx, obj, claim, retryLater(retryContentBusy).after(wait),
			"another object with the same content holds its claim until "+cc.LeaseUntil.UTC().Format(time.RFC3339)), false
	}
	return cc, outcome{}, true
}

// ContentBusyBase is the first wait of a copy whose content another
// object's attempt holds: that attempt is calling now, and a call with its
// recording takes a few seconds. The wait doubles with each receive, so a
// holder that takes its whole invocation (at most 900 s) costs a copy at
// most eight receives (5 s to 640 s: 1,275 s in all), and it never reaches
// past the holder's lease, after which the content is taken over.
const ContentBusyBase = 5 * time.Second

// contentBusyWait is how long a copy received receives times waits for the
// attempt whose lease on its content ends at leaseUntil.
func (inv *invocation) contentBusyWait(leaseUntil time.Time, receives int) time.Duration {
	n := min(max(receives, 1)-1, 20) // 2^20 bases is far past any lease
	return max(min(ContentBusyBase<<n, leaseUntil.Sub(inv.now())), 0)
}

// endContent ends the object's content claim once its record is written,
// whatever it says (a copy reads it): a failure only keeps copies waiting
// until the lease ends. After a recorded answer it writes nothing: a copy
// reuses that answer whatever the content item's state (ClaimContent reads
// the payer's record first), so ending the item would only cost a write
// unit per paid photo. Every other end (a failure, a release, a reduced
// record) still frees the item, so copies need not wait out its lease.
func (inv *invocation) endContent(ctx context.Context, obj *object, cc *ledger.ContentClaim) {
	if obj.answerRecorded {
		return
	}
	fctx, cancel := finishContext(ctx)
	defer cancel()
	if err := inv.h.deps.Ledger.EndContent(fctx, cc); err != nil {
		obj.logger.Warn("content claim not ended: copies wait for its lease", "error", err)
	}
}

// completeReused records the answer paid for by another object with the
// same content and request, without a call: 0 credits, reused_from naming
// the payer, and this object's own photo facts (EXIF, downscale, error_km
// against its own EXIF position). A rejection by the service is copied as a
// rejection.
func (inv *invocation) completeReused(ctx context.Context, obj *object, claim *ledger.Claim, cc *ledger.ContentClaim) outcome {
	fctx, cancel := finishContext(ctx)
	defer cancel()
	paid := cc.Paid
	from := cc.PaidRef.String()
	if paid.Status == ledger.StatusRejected {
		info := obj.info()
		info.Content, info.ReusedFrom = obj.content, from
		err := inv.persist(fctx, obj, "record reused rejection", func(ctx context.Context) error {
			return inv.h.deps.Ledger.RejectClaimed(ctx, claim, paid.ErrorCode, paid.ErrorMessage, info)
		})
		if o, done := inv.reuseWriteFailed(obj, err); done {
			return o
		}
		inv.metrics.count(metricnames.ImagesReused)
		obj.logger.Info("rejection reused from a copy", "reused_from", from)
		return inv.rejected(obj, paid.ErrorCode, paid.ErrorMessage)
	}
	rec := ledger.ReusedResult(paid, cc.PaidRef)
	rec.Size, rec.ContentType = obj.Size, obj.contentType
	// The copy sent the same bytes: if the payer's upload carried the
	// position, so would this one's, and its error says nothing.
	rec.PositionSent = paid.PositionSent
	applyPhoto(&rec, obj.photo)
	inv.addHistory(fctx, obj, &rec)
	err := inv.persist(fctx, obj, "record reused result", func(ctx context.Context) error {
		return inv.h.deps.Ledger.Complete(ctx, claim, rec)
	})
	if o, done := inv.reuseWriteFailed(obj, err); done {
		return o
	}
	inv.metrics.count(metricnames.ImagesReused)
	inv.metrics.add(metricnames.CreditsSaved, float64(paid.CreditsConsumed))
	inv.metrics.succeeded(rec.ModelID)
	obj.logger.Info("result reused from a copy, no call", "reused_from", from, "credits_saved", paid.CreditsConsumed)
	inv.logRecorded(obj, ledger.StatusSucceeded, &rec)
	return outcome{kind: outcomeSucceeded, reason: "reused"}
}

// reuseWriteFailed turns a failed write of a reused answer into the
// object's outcome; done is false when the write landed.
func (inv *invocation) reuseWriteFailed(obj *object, err error) (o outcome, done bool) {
	switch {
	case err == nil:
		return outcome{}, false
	case errors.Is(err, ledger.ErrClaimLost):
		obj.logger.Error("reused answer not recorded: another attempt took the object over")
		return outcome{kind: outcomeDuplicate, reason: "claim_lost"}, true
	}
	// Nothing was called: the record stays in progress until its lease
	// expires and the redelivery finalises it as outcome_unknown, as for
	// any claim whose end was not written.
	obj.logger.Error("reused answer not recorded: message returned for retry", "error", err)
	return retryLater(retryLedger), true
}

// verdictContent is the content a rejection is the service's verdict on
// (it refused the file itself: the same bytes would be refused again), so
// that copies reuse it; nil for any other rejection.
func (o *object) verdictContent() *ledger.ContentRef {
	if o.content == nil || o.result == nil {
		return nil
	}
	var (
		tooLarge    *geoapi.TooLargeError
		unsupported *geoapi.UnsupportedFormatError
	)
	if errors.As(o.result.err, &tooLarge) || errors.As(o.result.err, &unsupported) {
		return o.content
	}
	return nil
}

// ContentDigest is the digest ClaimContent identifies a photo sent as
// stored or stripped (not downscaled) by, under uploadMetadata (strip or
// keep), and how many bytes it covered: what geolocate backfill
// --count-reuse computes ahead of the predictor.
func ContentDigest(r io.Reader, uploadMetadata string) (string, int64, error) {
	return streamDigest(r, uploadMetadata != UploadMetadataKeep)
}
