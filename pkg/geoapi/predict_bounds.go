package geoapi

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Bounds on what a prediction answer may carry onwards. A 200 is charged
// whatever it holds, so an answer is never refused for its size: what is
// over a bound is cut, and Result.Truncated says what. The bounds keep a
// record of the whole result (DynamoDB's item limit is 400 KB), a log line
// and an event small: MaxResultItems x the strings of one item is about
// 20 KB per list.
const (
	// MaxResultText bounds every string of a result (place names, admin
	// areas, country codes, vehicle and property fields) and the model id,
	// in bytes. Real place names are under 100 bytes.
	MaxResultText = 200
	// MaxResultItems bounds every list of a result (clusters, predictions,
	// the points of a cluster, vehicle and property matches). The service
	// sends at most top_n (1 to 10) items.
	MaxResultItems = 20
)

// truncMark ends a string that was cut.
const truncMark = "…"

// bounds cuts the strings and lists of a decoded answer and records what it
// cut, in the order met.
type bounds struct {
	cut []string
}

func (b *bounds) text(field string, s *string) {
	if len(*s) <= MaxResultText {
		return
	}
	b.cut = append(b.cut, fmt.Sprintf("%s: %d bytes cut to %d", field, len(*s), MaxResultText))
	*s = excerpt(*s, MaxResultText-len(truncMark)) + truncMark
}

func (b *bounds) location(field string, l *Location) {
	b.text(field+".name", &l.Name)
	b.text(field+".admin1", &l.Admin1)
	b.text(field+".admin2", &l.Admin2)
	b.text(field+".country_code", &l.CountryCode)
}

// list cuts *items to MaxResultItems.
func list[T any](b *bounds, field string, items *[]T) {
	if len(*items) <= MaxResultItems {
		return
	}
	b.cut = append(b.cut, fmt.Sprintf("%s: %d items cut to %d", field, len(*items), MaxResultItems))
	*items = (*items)[:MaxResultItems]
}

// boundResult cuts out's strings and lists to the bounds above, first the
// lists (so only kept items are visited) then the strings, and returns what
// was cut, or "".
func boundResult(out *PredictOutput) string {
	var b bounds
	b.text("model_id", &out.ModelID)
	b.text("message_code", &out.MessageCode)
	r := &out.Result
	b.text("result_type", &r.Type)
	list(&b, "clusters", &r.Clusters)
	for i := range r.Clusters {
		c := &r.Clusters[i]
		b.location(fmt.Sprintf("clusters[%d].location", i), &c.Location)
		list(&b, fmt.Sprintf("clusters[%d].points", i), &c.Points)
	}
	list(&b, "predictions", &r.Predictions)
	for i := range r.Predictions {
		b.location(fmt.Sprintf("predictions[%d].location", i), &r.Predictions[i].Location)
	}
	if r.TopPrediction != nil {
		b.location("top_prediction.location", &r.TopPrediction.Location)
	}
	list(&b, "vehicles", &r.Vehicles)
	for i := range r.Vehicles {
		v := &r.Vehicles[i]
		b.text(fmt.Sprintf("vehicles[%d].make", i), &v.Make)
		b.text(fmt.Sprintf("vehicles[%d].model", i), &v.Model)
		b.text(fmt.Sprintf("vehicles[%d].year", i), &v.Year)
		b.text(fmt.Sprintf("vehicles[%d].variant", i), &v.Variant)
	}
	list(&b, "properties", &r.Properties)
	for i := range r.Properties {
		p := &r.Properties[i]
		b.text(fmt.Sprintf("properties[%d].name", i), &p.Name)
		b.text(fmt.Sprintf("properties[%d].location", i), &p.Location)
		b.text(fmt.Sprintf("properties[%d].country", i), &p.Country)
		b.text(fmt.Sprintf("properties[%d].category", i), &p.Category)
		b.text(fmt.Sprintf("properties[%d].address", i), &p.Address)
	}
	// A cut list of thousands of items would make this note as long as
	// what it replaces: it names the first few cuts and counts the rest.
	const shown = 5
	if n := len(b.cut); n > shown {
		b.cut = append(b.cut[:shown], fmt.Sprintf("and %d more fields cut", n-shown))
	}
	return strings.Join(b.cut, "; ")
}

// checkResult refuses a location no map holds: a latitude or longitude
// outside +-90/+-180, a radius or confidence below zero (JSON cannot carry
// NaN or an infinity, and encoding/json refuses a number beyond float64, but
// the checks say so in case a decoder ever lets one through). Such an answer
// is malformed, never a success: recording latitude 1000 as a place would
// put nonsense on the map and in accuracy figures.
func checkResult(r *Result) error {
	for i, c := range r.Clusters {
		if err := checkPoint(fmt.Sprintf("clusters[%d].center", i), c.Center); err != nil {
			return err
		}
		if err := nonNegative(fmt.Sprintf("clusters[%d].radius_km", i), c.RadiusKM); err != nil {
			return err
		}
		if c.Confidence != nil {
			if err := nonNegative(fmt.Sprintf("clusters[%d].confidence", i), *c.Confidence); err != nil {
				return err
			}
		}
		for j, p := range c.Points {
			if err := checkPoint(fmt.Sprintf("clusters[%d].points[%d]", i, j), p); err != nil {
				return err
			}
		}
	}
	points := r.Predictions
	if r.TopPrediction != nil {
		points = append([]PointPrediction{*r.TopPrediction}, points...)
	}
	for i, p := range points {
		field := fmt.Sprintf("predictions[%d]", i)
		if r.TopPrediction != nil {
			field = "top_prediction"
			if i > 0 {
				field = fmt.Sprintf("predictions[%d]", i-1)
			}
		}
		if err := checkPoint(field, Coordinates{p.Latitude, p.Longitude}); err != nil {
			return err
		}
		if err := nonNegative(field+".confidence", p.Confidence); err != nil {
			return err
		}
		if p.HeadingDeg != nil && (math.IsNaN(*p.HeadingDeg) || math.IsInf(*p.HeadingDeg, 0) || math.Abs(*p.HeadingDeg) > 360) {
			return fmt.Errorf("%s.heading_deg %g is not a heading", field, *p.HeadingDeg)
		}
	}
	for i, p := range r.Properties {
		if p.Coordinates != nil {
			if err := checkPoint(fmt.Sprintf("properties[%d].coordinates", i), *p.Coordinates); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkPoint(field string, c Coordinates) error {
	if !(c.Latitude >= -90 && c.Latitude <= 90) || !(c.Longitude >= -180 && c.Longitude <= 180) {
		return fmt.Errorf("%s (%g, %g) is outside latitude +-90 and longitude +-180", field, c.Latitude, c.Longitude)
	}
	return nil
}

func nonNegative(field string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return fmt.Errorf("%s %g is not a finite, non-negative number", field, v)
	}
	return nil
}

// chargedCredits reads data.credits_consumed from a 2xx body that could not
// be used otherwise, so that its charge is still recorded; nil when the body
// does not say.
func chargedCredits(body []byte) *int {
	var env struct {
		Data struct {
			CreditsConsumed json.RawMessage `json:"credits_consumed"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &env) != nil || len(env.Data.CreditsConsumed) == 0 {
		return nil
	}
	n, invalid := creditsFigure(env.Data.CreditsConsumed)
	if invalid != "" {
		return nil
	}
	return &n
}
