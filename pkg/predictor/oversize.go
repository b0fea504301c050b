package predictor

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/photo/downscale"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// prepareOversize handles a photo over the service's limit
// (oversize=downscale), holding the claim and before any budget or call
// slot is taken: it opens the object once, reads EXIF from its head, records
// it from EXIF when exifGps=skip allows, and otherwise decodes the stream,
// resizes it and re-encodes it as a JPEG under the limit, kept in
// obj.photo.downscaled for the call. The S3 stream is read to its end and
// closed here, so no connection is held while waiting for a slot, and the
// call (and any retry) sends the same bytes without reading S3 again.
//
// ok is false when the object was finished here (recorded from EXIF,
// rejected) or handed back for a retry; o says how.
func (inv *invocation) prepareOversize(ctx context.Context, obj *object, claim *ledger.Claim) (o outcome, ok bool) {
	body, o, ok := inv.openImage(ctx, obj, claim)
	if !ok {
		return o, false
	}
	defer body.Close()
	if inv.knownPosition(obj) {
		return inv.completeFromEXIF(ctx, obj, claim), false
	}

	dctx, cancel := inv.callContext(ctx)
	defer cancel()
	select {
	case inv.h.downscaling <- struct{}{}:
		defer func() { <-inv.h.downscaling }()
	case <-dctx.Done():
		return inv.downscaleFailed(ctx, obj, claim, fmt.Errorf("wait for the instance's downscaler: %w", dctx.Err()), nil), false
	}
	start := inv.now()
	src := &readErrorTracker{r: body}
	res, err := downscale.Downscale(dctx, src, inv.h.cfg.DownscaleOptions())
	if err != nil {
		return inv.downscaleFailed(ctx, obj, claim, err, src.err), false
	}
	obj.photo.downscaled = &res
	inv.metrics.count(metricnames.ImagesDownscaled)
	obj.logger.Info("over the size limit: downscaled",
		"size", obj.Size, "width", res.SourceWidth, "height", res.SourceHeight,
		"sent_bytes", res.Bytes, "sent_width", res.Width, "sent_height", res.Height,
		"quality", res.Quality, "elapsed_ms", inv.now().Sub(start).Milliseconds())
	return outcome{}, true
}

// downscaleFailed ends the claim after a failed downscale: a photo that can
// never be downscaled is rejected with the reason; a read error of S3 or the
// invocation running out of time releases it for a retry (nothing was sent,
// so nothing was charged).
func (inv *invocation) downscaleFailed(ctx context.Context, obj *object, claim *ledger.Claim, err, readErr error) outcome {
	fctx, cancel := finishContext(ctx)
	defer cancel()
	if readErr != nil {
		// Checked first: a decoder reports a broken stream as corrupt data.
		obj.logger.Warn("S3 read failed while downscaling: message returned for retry", "error", readErr)
		return inv.releaseAs(fctx, obj, claim, retryLater(retryStorage), CodeStorage, "read object to downscale: "+readErr.Error())
	}
	if reason, detail := downscaleVerdict(err, readErr, obj.Size, inv.h.cfg); reason != "" {
		return inv.rejectClaimed(fctx, obj, claim, reason, detail)
	}
	obj.logger.Warn("downscale stopped: message returned for retry", "error", err)
	return inv.releaseAs(fctx, obj, claim, retryLater(retryDeadline), retryDeadline, "downscale: "+err.Error())
}

// downscaleVerdict is the final rejection a failed downscale of an object
// of size bytes earns, or "" when the failure is not the photo's (a read
// error of S3, the invocation running out of time) and it is retried: the
// same bytes always fail the same way, so retrying them only burns
// receives.
func downscaleVerdict(err, readErr error, size int64, cfg Config) (reason, detail string) {
	var (
		dims        *downscale.DimensionsError
		memory      *downscale.MemoryError
		unsupported *downscale.UnsupportedFormatError
		decodeErr   *downscale.DecodeError
		fit         *downscale.FitError
		cost        *downscale.CostError
	)
	switch {
	case readErr != nil:
		return "", ""
	case errors.As(err, &dims):
		return ReasonTooManyPixels, fmt.Sprintf("%d bytes is more than the service's limit and the photo cannot be downscaled: %v", size, err)
	case errors.As(err, &memory):
		return ReasonOverMemory, fmt.Sprintf("%d bytes is more than the service's limit, and downscaling it would not fit in the function's %d MB, so it is refused before decoding: %v",
			size, cfg.MemoryMB, err)
	case errors.As(err, &cost):
		return ReasonDecodeTooCostly, fmt.Sprintf("%d bytes is more than the service's limit, and downscaling it was stopped by its work bound: %v", size, err)
	case errors.As(err, &unsupported), errors.As(err, &decodeErr), errors.As(err, &fit):
		return ReasonCannotDownscale, fmt.Sprintf("%d bytes is more than the service's limit of %d bytes and the photo cannot be downscaled: %v",
			size, cfg.MaxImageBytes, err)
	}
	return "", ""
}

// readErrorTracker remembers the first read error other than io.EOF, so a
// failed S3 stream is told apart from a corrupt image.
type readErrorTracker struct {
	r   io.Reader
	err error
}

func (t *readErrorTracker) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && t.err == nil {
		t.err = err
	}
	return n, err
}
