package geoapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

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
		CreditsConsumed json.RawMessage `json:"credits_consumed"`
	}
	// wireResult is the fields every result type shares; predictions are
	// decoded per type, since vehicle and property results reuse the name.
	wireResult struct {
		ResultType       string          `json:"result_type"`
		Clusters         []wireCluster   `json:"clusters"`
		Predictions      json.RawMessage `json:"predictions"`
		TopPrediction    *wirePoint      `json:"top_prediction"`
		ProcessingTimeMS *json.Number    `json:"processing_time_ms"`
	}
	wireCoordinates struct {
		Latitude  float64 `json:"latitude"`
		Longitude float64 `json:"longitude"`
	}
	wireCluster struct {
		Center     wireCoordinates   `json:"center"`
		Location   wireLocation      `json:"location"`
		RadiusKM   float64           `json:"radius_km"`
		Points     []wireCoordinates `json:"points"`
		Confidence *float64          `json:"confidence"`
	}
	wireVehicle struct {
		Make       string       `json:"make"`
		Model      string       `json:"model"`
		Year       any          `json:"year"`
		Confidence *json.Number `json:"confidence"`
		Variant    string       `json:"variant"`
	}
	wireProperty struct {
		Name        string           `json:"name"`
		Location    any              `json:"location"`
		Country     string           `json:"country"`
		Coordinates *wireCoordinates `json:"coordinates"`
		Confidence  *json.Number     `json:"confidence"`
		Category    string           `json:"category"`
		Address     string           `json:"address"`
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
	if len(d.CreditsConsumed) == 0 || bytes.Equal(d.CreditsConsumed, []byte("null")) {
		return nil, errors.New("no data.credits_consumed")
	}
	// A figure that cannot be a charge does not make the paid answer
	// unreadable: the result is kept and the caller counts what it
	// reserved (PredictOutput.CreditsInvalid).
	credits, invalid := creditsFigure(d.CreditsConsumed)
	result, err := decodeResult(d.Prediction)
	if err != nil {
		return nil, err
	}
	if err := checkResult(&result); err != nil {
		return nil, fmt.Errorf("data.prediction: %w", err)
	}
	out := &PredictOutput{
		MessageCode:     env.MessageCode,
		PredictionID:    id,
		ModelID:         d.ModelID,
		CreditsConsumed: credits,
		CreditsInvalid:  invalid,
		Result:          result,
	}
	if invalid != "" {
		out.CreditsReported = string(bytes.TrimSpace(d.CreditsConsumed))
	}
	out.Result.Truncated = boundResult(out)
	return out, nil
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
	switch r.Type {
	case ResultTypeVehicle, ResultTypeProperty:
		// Not a location: the typed matches are a convenience, best effort,
		// and Raw keeps everything, so a shape this client does not expect
		// never turns a paid answer into an error.
		decodeMatches(&r, raw)
		return r, nil
	}
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
		cl := Cluster{
			Center:     Coordinates(c.Center),
			Location:   c.Location.toLocation(),
			RadiusKM:   c.RadiusKM,
			Confidence: c.Confidence,
		}
		for _, p := range c.Points {
			cl.Points = append(cl.Points, Coordinates(p))
		}
		r.Clusters = append(r.Clusters, cl)
	}
	// Under a type this client does not know, predictions is left to Raw,
	// never read as locations it may not be (vehicle and property results
	// reuse the name).
	if !known {
		return r, nil
	}
	preds, err := decodeList(w.Predictions, wirePoint.toPoint)
	if err != nil {
		return r, fmt.Errorf("data.prediction.predictions (%s): %w", r.Type, err)
	}
	r.Predictions = preds
	if w.TopPrediction != nil {
		top := w.TopPrediction.toPoint()
		r.TopPrediction = &top
	}
	return r, nil
}

// decodeMatches reads the predictions of a vehicle or property result, each
// match on its own: one the client cannot read is skipped, the rest kept.
func decodeMatches(r *Result, raw json.RawMessage) {
	var w struct {
		Predictions      []json.RawMessage `json:"predictions"`
		ProcessingTimeMS *json.Number      `json:"processing_time_ms"`
	}
	if json.Unmarshal(raw, &w) != nil {
		return
	}
	if w.ProcessingTimeMS != nil {
		r.ProcessingTimeMS = int64(numberOr0(w.ProcessingTimeMS))
	}
	for _, item := range w.Predictions {
		switch r.Type {
		case ResultTypeVehicle:
			var v wireVehicle
			if json.Unmarshal(item, &v) == nil {
				r.Vehicles = append(r.Vehicles, v.toVehicle())
			}
		case ResultTypeProperty:
			var p wireProperty
			if json.Unmarshal(item, &p) == nil {
				r.Properties = append(r.Properties, p.toProperty())
			}
		}
	}
}

// decodeList decodes a JSON array of W and converts each element; a
// missing or null list is empty.
func decodeList[W, T any](raw json.RawMessage, convert func(W) T) ([]T, error) {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var items []W
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	out := make([]T, 0, len(items))
	for _, it := range items {
		out = append(out, convert(it))
	}
	return out, nil
}

func (v wireVehicle) toVehicle() VehicleMatch {
	return VehicleMatch{Make: v.Make, Model: v.Model, Year: scalarText(v.Year),
		ConfidencePercent: numberOr0(v.Confidence), Variant: v.Variant}
}

func (p wireProperty) toProperty() PropertyMatch {
	m := PropertyMatch{Name: p.Name, Location: scalarText(p.Location), Country: p.Country,
		ConfidencePercent: numberOr0(p.Confidence), Category: p.Category, Address: p.Address}
	if p.Coordinates != nil {
		c := Coordinates(*p.Coordinates)
		m.Coordinates = &c
	}
	return m
}

// scalarText renders a string or a number as text ("2023" and 2023 alike);
// anything else (an object, a list) is left to Raw.
func scalarText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

func numberOr0(n *json.Number) float64 {
	if n == nil {
		return 0
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0
	}
	return f
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
