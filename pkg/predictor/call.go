package predictor

import (
	"context"
	"errors"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
)

// callResult is the outcome of the paid call, fallback and key refresh
// included.
type callResult struct {
	out              *geoapi.PredictOutput
	err              error
	requestedModelID string // the configured model, "" when none
	fallback         bool   // the default model ran instead of the retired configured one
	// charged is the credits a successful call counts (counted): its
	// budget, its run's cap, its record and the CreditsConsumed metric.
	charged int
}

// call makes the prediction call, every attempt uploading the downscaled
// JPEG or the bytes kept while hashing when there are some, else the first
// attempt uploading body (later ones reopen the object): a 401 refreshes the key and retries once; a 422
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
	} else if sent := obj.photo.sent; sent != nil {
		// Already stripped: sent as hashed, by every attempt.
		in.Image = geoapi.BytesSource(sent.data)
		inv.uploadedFromMemory(obj, sent)
	} else {
		in.Image = inv.uploadSource(obj, in.Image)
	}
	model, fallback := inv.modelFor(obj)
	res := callResult{requestedModelID: model}
	if model != "" {
		if fallback && inv.h.modelRetired.Load() {
			res.fallback = true
		} else {
			in.ModelID = model
		}
	}
	res.out, res.err = inv.predictRefreshingKey(ctx, obj, in)
	if in.ModelID != "" && retiredModel(res.err, in.ModelID) {
		if obj.Run != "" {
			return res // a run's own model, not the configured one
		}
		inv.h.modelRetired.Store(true)
		if !fallback {
			return res
		}
		obj.logger.Warn("configured model is retired: falling back to the default model",
			"requested_model_id", in.ModelID)
		in.ModelID = ""
		res.fallback = true
		if err := inv.waitForRate(ctx, obj); err != nil {
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

// modelFor is the model asked for obj, and whether the default model may
// run instead when it is retired: a reprocess run asks exactly its own
// model (its comparison would mean nothing otherwise), an upload the
// configured one, with the configured fallback.
func (inv *invocation) modelFor(obj *object) (string, bool) {
	if obj.Run != "" {
		return obj.Model, false
	}
	return inv.h.cfg.ModelID, inv.h.cfg.ModelFallback
}

// predictRefreshingKey calls the service; on a 401 it fetches the current
// secret and, if the key changed (it was regenerated), retries once.
func (inv *invocation) predictRefreshingKey(ctx context.Context, obj *object, in *geoapi.PredictInput) (*geoapi.PredictOutput, error) {
	withLogger := func(o *geoapi.Options) {
		o.Logger = obj.logger
		o.Sleep = func(ctx context.Context, d time.Duration) error { return inv.paceRetry(ctx, obj, d) }
		// The call's context bounds the schedule writes: detached from it,
		// a slow DynamoDB could hold the retry loop past the call deadline.
		o.OnRateLimited = func(ctx context.Context, e *geoapi.RateLimitedError) {
			inv.h.deps.Pacer.Throttled(ctx, min(e.RetryAfter, inv.h.cfg.MaxServerDelay))
		}
		if learner, ok := inv.h.deps.Pacer.(serviceClockLearner); ok {
			o.OnAnswer = func(_ context.Context, a geoapi.Answer) { learner.Answered(a.Date, a.RoundTrip) }
		}
		o.MaxImageBytes = inv.h.cfg.MaxImageBytes
		o.MaxServerDelay = inv.h.cfg.MaxServerDelay
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
	if werr := inv.waitForRate(ctx, obj); werr != nil {
		return nil, werr
	}
	return inv.h.deps.Service.Predict(ctx, in, withLogger)
}
