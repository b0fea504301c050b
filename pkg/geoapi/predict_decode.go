package geoapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/google/uuid"
)

// wire shapes of the prediction response.
type (
	predictEnvelope struct {
		MessageCode string       `json:"message_code"`
		Data        *predictData `json:"data"`
	}
	predictData struct {
		Prediction      json.RawMessage `json:"prediction"`
		PredictionID    *string         `json:"prediction_id"`
		ModelID         string          `json:"model_id"`
		CreditsConsumed *json.Number    `json:"credits_consumed"`
	}
	wireResult struct {
		ResultType       string        `json:"result_type"`
		Clusters         []wireCluster `json:"clusters"`
		Predictions      []wirePoint   `json:"predictions"`
		TopPrediction    *wirePoint    `json:"top_prediction"`
		ProcessingTimeMS *json.Number  `json:"processing_time_ms"`
	}
	wireCluster struct {
		Center struct {
			Latitude  float64 `json:"latitude"`
			Longitude float64 `json:"longitude"`
		} `json:"center"`
		Location wireLocation `json:"location"`
		RadiusKM float64      `json:"radius_km"`
	}
	wirePoint struct {
		Latitude   float64      `json:"latitude"`
		Longitude  float64      `json:"longitude"`
		Confidence float64      `json:"confidence"`
		Rank       int          `json:"rank"`
		Location   wireLocation `json:"location"`
		HeadingDeg *float64     `json:"heading_deg"`
	}
	wireLocation struct {
		Name        string `json:"name"`
		Admin1      string `json:"admin1"`
		Admin2      string `json:"admin2"`
		CountryCode string `json:"country_code"`
	}
)

// decodePredictBody parses a 2xx prediction body. The envelope fields the
// contract defines are required; the result is decoded according to its
// result_type, and a result type it does not know is kept raw, not an error.
func decodePredictBody(body []byte) (*PredictOutput, error) {
	var env predictEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, fmt.Errorf("envelope: %w", err)
	}
	if env.Data == nil {
		return nil, errors.New("no data object")
	}
	d := env.Data
	if len(d.Prediction) == 0 || bytes.Equal(d.Prediction, []byte("null")) {
		return nil, errors.New("no data.prediction")
	}
	if d.PredictionID == nil {
		return nil, errors.New("no data.prediction_id")
	}
	id, err := uuid.Parse(*d.PredictionID)
	if err != nil {
		return nil, fmt.Errorf("data.prediction_id %q is not a UUID: %w", oneLine(*d.PredictionID, 64), err)
	}
	// The contract puts credits_consumed in every success envelope. Reading
	// a missing figure as 0 would record a paid call as free.
	if d.CreditsConsumed == nil {
		return nil, errors.New("no data.credits_consumed")
	}
	credits, err := wholeNumber(*d.CreditsConsumed)
	if err != nil {
		return nil, fmt.Errorf("data.credits_consumed: %w", err)
	}
	result, err := decodeResult(d.Prediction)
	if err != nil {
		return nil, err
	}
	return &PredictOutput{
		MessageCode:     env.MessageCode,
		PredictionID:    id,
		ModelID:         d.ModelID,
		CreditsConsumed: credits,
		Result:          result,
	}, nil
}

func decodeResult(raw json.RawMessage) (Result, error) {
	r := Result{Raw: raw}
	var typeOnly struct {
		ResultType string `json:"result_type"`
	}
	if err := json.Unmarshal(raw, &typeOnly); err != nil {
		return r, fmt.Errorf("data.prediction: %w", err)
	}
	r.Type = typeOnly.ResultType
	known := r.Type == ResultTypeCoordinates || r.Type == ResultTypeAccuracy

	var w wireResult
	if err := json.Unmarshal(raw, &w); err != nil {
		if known {
			return r, fmt.Errorf("data.prediction (%s): %w", r.Type, err)
		}
		// An unknown shape may reuse field names differently; Raw has it all.
		return r, nil
	}
	if w.ProcessingTimeMS != nil {
		if f, err := w.ProcessingTimeMS.Float64(); err == nil && !math.IsInf(f, 0) {
			r.ProcessingTimeMS = int64(f)
		}
	}
	for _, c := range w.Clusters {
		r.Clusters = append(r.Clusters, Cluster{
			Center:   Coordinates{Latitude: c.Center.Latitude, Longitude: c.Center.Longitude},
			Location: c.Location.toLocation(),
			RadiusKM: c.RadiusKM,
		})
	}
	for _, p := range w.Predictions {
		r.Predictions = append(r.Predictions, p.toPoint())
	}
	if w.TopPrediction != nil {
		top := w.TopPrediction.toPoint()
		r.TopPrediction = &top
	}
	return r, nil
}

func (l wireLocation) toLocation() Location {
	return Location(l)
}

func (p wirePoint) toPoint() PointPrediction {
	return PointPrediction{
		Latitude: p.Latitude, Longitude: p.Longitude, Confidence: p.Confidence,
		Rank: p.Rank, Location: p.Location.toLocation(), HeadingDeg: p.HeadingDeg,
	}
}

// wholeNumber accepts 3 and 3.0 but not 2.5 or values out of int range.
func wholeNumber(n json.Number) (int, error) {
	f, err := n.Float64()
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return 0, fmt.Errorf("%s is not a whole number", n)
	}
	return int(f), nil
}
