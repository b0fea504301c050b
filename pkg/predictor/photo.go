package predictor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/emf"
	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/geodist"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/photo/downscale"
	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
	"github.com/geolocate-aws/geolocate/pkg/photo/metastrip"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// photoFacts is what the predictor learns about a photo from the head of
// its one S3 read (EXIF) and, over the limit, from downscaling it.
type photoFacts struct {
	exif photoexif.Meta
	// exifProblem is why exif.GPS is nil: a photoexif reason.
	exifProblem photoexif.Reason
	// downscaled is the re-encoded image sent instead of the object; nil
	// when the object itself is sent.
	downscaled *downscale.Result
	// sent holds the bytes sent of a photo of at most OnePassMaxBytes,
	// kept while they were hashed (contentDigest); nil otherwise.
	sent *sentBytes
	// gpsInFile says the file holds a valid EXIF position, whatever
	// exifGps does with it: with uploadMetadata=keep the service gets it.
	gpsInFile bool
	// upload is how the object's own bytes were sent; nil before the call
	// and for a downscaled photo.
	upload *uploadMeta
}

// headVerdict is what an object's first bytes decide before anything is
// uploaded or decoded.
type headVerdict struct {
	format imageformat.Format // zero when not an image
	// reason and detail reject the object; reason is "" when it goes on.
	reason, detail string
	exif           photoexif.Meta
	exifErr        error
}

// examineHead runs every check the predictor makes on an object's first
// bytes (photoexif.DefaultCaptureLimit of them, peeked before anything is
// uploaded), cheapest first: the format sniff, the dimensions the header
// declares, EXIF, and, for a photo over the limit that will be downscaled,
// the downscale's memory estimate. It does no I/O and keeps no state, so
// that FuzzPhotoPath drives on arbitrary bytes exactly what the predictor
// runs between the S3 GET and the upload; it must never panic, whatever
// the bytes.
func examineHead(head []byte, size int64, cfg Config) headVerdict {
	format, ok := imageformat.Detect(head)
	if !ok {
		return headVerdict{reason: ReasonNotAnImage, detail: "the first bytes are not those of a supported image format"}
	}
	v := headVerdict{format: format}
	if detail, ok := checkDeclaredPixels(head); !ok {
		v.reason, v.detail = ReasonTooManyPixels, detail
		return v
	}
	v.exif, v.exifErr = photoexif.ParseHead(head, size)
	if size > cfg.MaxImageBytes && cfg.Oversize == OversizeDownscale {
		// Downscale checks again on the stream (the head may end before a
		// JPEG's frame header); refusing here spares the wait for the
		// instance's downscaler.
		if _, _, err := downscale.Estimate(head, cfg.DownscaleOptions()); err != nil {
			v.reason, v.detail = downscaleVerdict(err, nil, size, cfg)
		}
	}
	return v
}

// readEXIF keeps what examineHead read of the EXIF block, so that the
// position is known before deciding to pay. Nothing about EXIF ever stops
// the pipeline: damaged, truncated or absent EXIF, or a block beyond the
// head, only means no position (and the reason is recorded).
// exifGps=ignore still reads the capture time and camera but drops the
// position.
func (inv *invocation) readEXIF(obj *object, head []byte, meta photoexif.Meta, err error) {
	obj.photo.gpsInFile = meta.GPS != nil
	if inv.h.cfg.ExifGPS == ExifGPSIgnore {
		meta.GPS, meta.GPSProblem = nil, nil
	}
	obj.photo.exif = meta
	if meta.GPSProblem != nil {
		obj.photo.exifProblem = meta.GPSProblem.Reason
	}
	var problem *photoexif.Problem
	if errors.As(err, &problem) && problem.Reason == photoexif.ReasonBeyondHead {
		// Not read: a second (ranged) GET would cost a request and time for
		// a field that only matters for accuracy figures and skip mode.
		obj.logger.Info("EXIF lies beyond the streamed head: not read, the photo is predicted without it",
			"head_bytes", len(head), "exif_offset", problem.Offset)
	} else if err != nil && problem != nil && problem.Reason != photoexif.ReasonNoEXIF {
		obj.logger.Info("EXIF not usable", "reason", string(problem.Reason), "detail", problem.Detail)
	}
}

// knownPosition reports whether the photo is recorded from its EXIF position
// instead of calling the service (exifGps=skip and a valid position).
//
// Never for a reprocess run: it asks the service deliberately, and judging
// a model on photos with a known position is its very purpose.
func (inv *invocation) knownPosition(obj *object) bool {
	return inv.h.cfg.ExifGPS == ExifGPSSkip && obj.photo.exif.GPS != nil && obj.Run == ""
}

// applyPhoto adds what the photo itself says to a record: EXIF position,
// time and camera, the distance from the prediction to the EXIF position,
// how the image was downscaled, and what of its metadata was sent.
func applyPhoto(rec *ledger.Record, p photoFacts) {
	m := p.exif
	if u := p.upload; u != nil {
		rec.UploadMetadata, rec.MetadataRemoved, rec.PositionSent = u.mode, u.removed(), u.mode == UploadMetadataKeep && p.gpsInFile
	}
	if g := m.GPS; g != nil {
		rec.ExifLatitude, rec.ExifLongitude = ptr(g.Lat), ptr(g.Lon)
		rec.ExifAltitudeM, rec.ExifDirectionDeg = g.Altitude, g.Direction
		// The distance measures recognition only when the upload did not
		// carry the position: otherwise the service may have read it.
		if rec.Source == ledger.SourceService && rec.Latitude != nil && rec.Longitude != nil && !rec.PositionSent {
			rec.ErrorKm = ptr(geodist.Km(*rec.Latitude, *rec.Longitude, g.Lat, g.Lon))
		}
	} else {
		rec.ExifGPSProblem = string(p.exifProblem)
	}
	if m.Captured != nil {
		rec.CapturedAt = capturedAt(*m.Captured, m.CapturedZoneKnown)
	}
	rec.CameraMake, rec.CameraModel = m.CameraMake, m.CameraModel
	if d := p.downscaled; d != nil {
		// Re-encoded: no metadata at all left the account, whatever the
		// setting.
		rec.Downscaled = true
		rec.OriginalWidth, rec.OriginalHeight = d.SourceWidth, d.SourceHeight
		rec.SentBytes, rec.SentWidth, rec.SentHeight = d.Bytes, d.Width, d.Height
	}
}

// capturedAt formats a capture time with its offset when EXIF gave one, and
// without any zone when it did not: a wall clock must not pass for UTC.
func capturedAt(t time.Time, zoneKnown bool) string {
	const wallClock = "2006-01-02T15:04:05.999999999"
	if zoneKnown {
		return t.Format(time.RFC3339Nano)
	}
	return t.Format(wallClock)
}

// accuracy publishes the error of a prediction against the EXIF position:
// the distance (per pipeline and per model, for p50/p90 over time) and one
// count per threshold it falls within. The shares are those counts over the
// distance's SampleCount, so the dashboard and alarms can compute them with
// metric math over any period, which per-invocation ratios could not give.
func (m *metrics) accuracy(modelID string, km float64) {
	model := emf.Dim{Name: metricnames.DimModelID, Value: modelOrDefault(modelID)}
	m.rec.Add(metricnames.PredictionErrorKm, emf.None, km)
	m.rec.Add(metricnames.PredictionErrorKm, emf.None, km, model)
	for _, th := range geodist.Within(km) {
		level := emf.Dim{Name: metricnames.DimThreshold, Value: th.Name}
		m.rec.Add(metricnames.PredictionsWithin, emf.Count, 1, level)
		m.rec.Add(metricnames.PredictionsWithin, emf.Count, 1, level, model)
	}
}

// modelOrDefault names the model dimension of a result that did not say
// which model ran.
func modelOrDefault(id string) string {
	if id == "" {
		return "default"
	}
	return id
}

// completeFromEXIF records a photo from its own valid EXIF position, without
// a call (exifGps=skip): source exif, 0 credits, no place name.
func (inv *invocation) completeFromEXIF(ctx context.Context, obj *object, claim *ledger.Claim) outcome {
	fctx, cancel := finishContext(ctx)
	defer cancel()
	g := obj.photo.exif.GPS
	rec := ledger.Record{
		Size:        obj.Size,
		ContentType: obj.contentType,
		Source:      ledger.SourceEXIF,
		Latitude:    ptr(g.Lat),
		Longitude:   ptr(g.Lon),
	}
	applyPhoto(&rec, obj.photo)
	err := inv.persist(fctx, obj, "record EXIF position", func(ctx context.Context) error {
		return inv.h.deps.Ledger.Complete(ctx, claim, rec)
	})
	if errors.Is(err, ledger.ErrClaimLost) {
		obj.logger.Error("EXIF position not recorded: another attempt took the object over")
		return outcome{kind: outcomeDuplicate, reason: "claim_lost"}
	}
	if err != nil {
		// The record stays in progress until its lease expires; the
		// redelivery then finalises it as outcome_unknown (never called).
		obj.logger.Error("EXIF position not recorded: message returned for retry", "error", err, "position", g.String())
		return retryLater(retryLedger)
	}
	obj.logger.Info("recorded from the photo's EXIF position, no call", "position", g.String())
	inv.metrics.count(metricnames.ImagesFromEXIF)
	inv.metrics.count(metricImagesSucceeded)
	inv.logRecorded(obj, ledger.StatusSucceeded, &rec)
	return outcome{kind: outcomeSucceeded}
}

// Reasons of rejections added for photos as people take them.
const (
	// ReasonTooManyPixels: the header declares more pixels than anyone
	// should decode (a decompression bomb), or an empty side.
	ReasonTooManyPixels = "too_many_pixels"
	// ReasonCannotDownscale: over the limit and not downscalable (HEIC,
	// HEIF, AVIF, GIF, TIFF, BMP; or data that does not decode).
	ReasonCannotDownscale = "cannot_downscale"
	// ReasonOverMemory: over the limit, and decoding and downscaling it
	// would need more memory than the function can spare, as its header
	// tells (a 100 MP progressive JPEG on a 1,024 MB function).
	ReasonOverMemory = "over_memory_budget"
	// ReasonDecodeTooCostly: over the limit, and its decode was stopped
	// by its own work bound (a progressive JPEG whose scans walk its blocks
	// more than downscale.MaxProgressivePasses times): the same bytes would
	// be stopped again, so the refusal is final, never a retry.
	ReasonDecodeTooCostly = "decode_too_costly"
	// ReasonCannotStripMetadata: uploadMetadata=strip and the photo's
	// metadata cannot be removed without re-encoding it (GIF, TIFF), or its
	// structure breaks within the head, so it is not sent at all.
	ReasonCannotStripMetadata = "cannot_strip_metadata"
)

// checkDeclaredPixels refuses, from the head alone, an image whose header
// declares more than downscale.DefaultMaxPixels pixels: a tiny file
// declaring 100,000 x 100,000 would fail at the service after being paid
// for, or exhaust the downscaler. A header that cannot be read from the head
// is no reason to refuse: the service decides, as before.
func checkDeclaredPixels(head []byte) (string, bool) {
	_, _, err := downscale.CheckHeader(head, downscale.DefaultMaxPixels)
	if err == nil {
		return "", true
	}
	return fmt.Sprintf("refused before decoding or sending, from its header alone: %v", err), false
}

// The stripping step (uploadMetadata=strip): the object still streams from
// S3 to the service, through a metastrip.Reader that blanks its metadata in
// place. The upload keeps the object's length, so the announced size and
// Content-Length stay exact, and every attempt (a retry reads the object
// again) sends the same bytes.

// uploadMeta is what of the photo's metadata went to the service.
type uploadMeta struct {
	mode string // UploadMetadataStrip or UploadMetadataKeep
	// last is the stripping reader of the latest attempt: the one whose
	// upload the recorded answer is about.
	last atomic.Pointer[metastrip.Reader]
}

// removed is what the latest attempt blanked, kind -> bytes.
func (u *uploadMeta) removed() map[string]int64 {
	if r := u.last.Load(); r != nil {
		return r.Report().ByKind()
	}
	return nil
}

// stripOptions bounds what a Reader may hold of a HEIF header to the head
// checked before the call, so that Check sees everything the stream will.
func stripOptions(o *metastrip.Options) { o.MaxHeaderBytes = headBytes }

// checkStrippable refuses, from the head and before any credit is spent, a
// photo whose metadata cannot be stripped: a format that cannot be stripped
// without re-encoding, or a structure that breaks within the head (a stream
// would have to send the rest as zeros). With uploadMetadata=keep every
// photo passes.
func (inv *invocation) checkStrippable(obj *object, head []byte) (string, bool) {
	if inv.h.cfg.keepMetadata() {
		return "", true
	}
	if _, err := metastrip.Check(head, obj.Size, stripOptions); err != nil {
		return fmt.Sprintf("uploadMetadata=strip and the photo's metadata cannot be removed: %v "+
			"(set uploadMetadata=keep to send such photos as they are)", err), false
	}
	return "", true
}

// newUploadMeta starts obj.photo.upload: how the object's own bytes are sent.
func (inv *invocation) newUploadMeta(obj *object) *uploadMeta {
	u := &uploadMeta{mode: UploadMetadataStrip}
	if inv.h.cfg.keepMetadata() {
		u.mode = UploadMetadataKeep
	}
	obj.photo.upload = u
	return u
}

// uploadedFromMemory records that the call sends sent, the bytes kept while
// hashing: what was stripped is what the hashing reader removed.
func (inv *invocation) uploadedFromMemory(obj *object, sent *sentBytes) {
	u := inv.newUploadMeta(obj)
	if sent.stripped != nil {
		u.last.Store(sent.stripped)
	}
}

// uploadSource wraps the object's source so that, with uploadMetadata=strip,
// each attempt streams through a new stripping Reader (the source is opened
// once per attempt).
func (inv *invocation) uploadSource(obj *object, src geoapi.ImageSource) geoapi.ImageSource {
	u := inv.newUploadMeta(obj)
	if u.mode == UploadMetadataKeep {
		return src
	}
	return func(ctx context.Context) (io.ReadCloser, error) {
		rc, err := src(ctx)
		if err != nil {
			return nil, err
		}
		r, err := metastrip.New(rc, stripOptions)
		if err != nil {
			rc.Close()
			// checkStrippable passed the same head: only a read error of S3
			// gets here, and nothing was sent.
			return nil, &sourceError{err: err}
		}
		u.last.Store(r)
		return struct {
			io.Reader
			io.Closer
		}{r, rc}, nil
	}
}

// strippedAttrs says what the paid upload carried of the photo's metadata,
// as attributes of the line that records its answer (one line per image
// instead of two: the request id and the key already tie them together),
// and warns on a line of its own when the stripper met a structure it could
// not follow past the head (the rest was sent as zeros). None for a photo
// whose own bytes were not sent (downscaled).
func (inv *invocation) strippedAttrs(obj *object) []any {
	u := obj.photo.upload
	if u == nil {
		return nil
	}
	r := u.last.Load()
	if r == nil {
		return []any{"upload_metadata", u.mode}
	}
	rep := r.Report()
	if p := rep.Problem; p != nil {
		obj.logger.Warn("metadata stripper could not follow the file: the rest was sent as zero bytes",
			"offset", p.Offset, "reason", p.Reason)
	}
	attrs := []any{"upload_metadata", u.mode, "metadata_removed", rep.String()}
	if n := rep.Bytes(); n > 0 {
		attrs = append(attrs, "removed_bytes", n)
	}
	if rep.Orientation != 0 {
		attrs = append(attrs, "orientation_kept", rep.Orientation)
	}
	return attrs
}
