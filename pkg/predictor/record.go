package predictor

import (
	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// resultRecord flattens a successful call into the record's result fields;
// identity and bookkeeping fields are the ledger's.
func resultRecord(obj *object, res callResult) ledger.Record {
	out := res.out
	rec := ledger.Record{
		Size:            obj.Size,
		ContentType:     obj.contentType,
		ModelID:         out.ModelID,
		Fallback:        res.fallback,
		PredictionID:    out.PredictionID.String(),
		CreditsConsumed: res.charged,
		CreditsReported: out.CreditsReported,
		CreditsInvalid:  out.CreditsInvalid,
		ResultType:      out.Result.Type,
		ProcessingMS:    out.Result.ProcessingTimeMS,
		RoundTripMS:     out.RoundTrip.Milliseconds(),
		Source:          ledger.SourceService,
		Truncated:       out.Result.Truncated,
	}
	if res.requestedModelID != "" {
		rec.RequestedModelID = res.requestedModelID
	}
	if top, ok := out.Result.Top(); ok {
		rec.Place, rec.Admin1, rec.Admin2, rec.CountryCode = top.Name, top.Admin1, top.Admin2, top.CountryCode
		rec.Latitude, rec.Longitude = ptr(top.Latitude), ptr(top.Longitude)
		rec.RadiusKM, rec.Confidence = top.RadiusKM, top.Confidence
	}
	if p := out.Result.TopPrediction; p != nil {
		rec.HeadingDeg = p.HeadingDeg
	} else if len(out.Result.Predictions) > 0 {
		rec.HeadingDeg = out.Result.Predictions[0].HeadingDeg
	}
	for _, c := range out.Result.Clusters {
		rec.Clusters = append(rec.Clusters, ledger.Cluster{
			Latitude: c.Center.Latitude, Longitude: c.Center.Longitude,
			Name: c.Location.Name, Admin1: c.Location.Admin1, Admin2: c.Location.Admin2, CountryCode: c.Location.CountryCode,
			RadiusKM: ptr(c.RadiusKM), Confidence: c.Confidence,
		})
	}
	for _, v := range out.Result.Vehicles {
		rec.Vehicles = append(rec.Vehicles, ledger.Vehicle(v))
	}
	for _, p := range out.Result.Properties {
		m := ledger.Property{Name: p.Name, Location: p.Location, Country: p.Country,
			ConfidencePercent: p.ConfidencePercent, Category: p.Category, Address: p.Address}
		if p.Coordinates != nil {
			m.Latitude, m.Longitude = ptr(p.Coordinates.Latitude), ptr(p.Coordinates.Longitude)
		}
		rec.Properties = append(rec.Properties, m)
	}
	for _, p := range out.Result.Predictions {
		rec.Predictions = append(rec.Predictions, ledger.Prediction{
			Rank: p.Rank, Latitude: p.Latitude, Longitude: p.Longitude, Confidence: p.Confidence,
			Name: p.Location.Name, Admin1: p.Location.Admin1, Admin2: p.Location.Admin2,
			CountryCode: p.Location.CountryCode, HeadingDeg: p.HeadingDeg,
		})
	}
	switch out.Result.Type {
	case geoapi.ResultTypeCoordinates, geoapi.ResultTypeAccuracy:
	default:
		// Vehicle and property results, typed above as far as the client
		// knows them, and shapes the pipeline does not know at all, are
		// still successes: keep them verbatim for whoever can read them.
		rec.RawResult = string(out.Result.Raw)
	}
	applyPhoto(&rec, obj.photo)
	if c := obj.content; c != nil {
		rec.ContentSHA256, rec.ContentRequest = c.SHA256, c.Request
	}
	return rec
}

func ptr[T any](v T) *T { return &v }

// logRecorded writes the one line per recorded object that the dashboard's
// Logs Insights table reads: bucket and key come from the object's logger,
// extra adds attributes of this object's outcome (strippedAttrs). Fields
// with nothing to say (no reuse, no EXIF distance) are left out: a missing
// field reads as empty in Logs Insights, and each costs log bytes per image.
func (inv *invocation) logRecorded(obj *object, status string, rec *ledger.Record, extra ...any) {
	if rec == nil {
		rec = &ledger.Record{}
	}
	attrs := append([]any{
		"status", status,
		"place", rec.Place,
		"admin1", rec.Admin1,
		"country", rec.CountryCode,
		"latitude", rec.Latitude,
		"longitude", rec.Longitude,
		"credits", rec.CreditsConsumed,
		"model_id", rec.ModelID,
		"source", rec.Source,
		"downscaled", rec.Downscaled,
	}, extra...)
	if rec.ErrorKm != nil {
		attrs = append(attrs, "error_km", *rec.ErrorKm)
	}
	if rec.ReusedFrom != "" {
		attrs = append(attrs, "reused_from", rec.ReusedFrom)
	}
	obj.logger.Info("prediction recorded", attrs...)
}
