package geoapi

import "encoding/json"

// Result types. coordinates and accuracy are the contract's; vehicle and
// property are the public backend's (the contract leaves their bodies
// unshown). Other values are passed through with the raw result kept in
// Result.Raw.
const (
	ResultTypeCoordinates = "coordinates"
	ResultTypeAccuracy    = "accuracy"
	ResultTypeVehicle     = "vehicle"
	ResultTypeProperty    = "property"
)

// Result is a prediction result (data.prediction).
type Result struct {
	// Type is ResultTypeCoordinates, ResultTypeAccuracy or anything else.
	Type string
	// Clusters is set for coordinates results, highest confidence first.
	Clusters []Cluster
	// Predictions and TopPrediction are set for accuracy results.
	Predictions   []PointPrediction
	TopPrediction *PointPrediction
	// Vehicles and Properties are set for vehicle and property results, in
	// the order received (the backend's predictions list).
	Vehicles   []VehicleMatch
	Properties []PropertyMatch
	// ProcessingTimeMS is the service's processing time.
	ProcessingTimeMS int64
	// Raw is the data.prediction object as received, always kept.
	Raw json.RawMessage
	// Truncated says which strings and lists were cut to MaxResultText and
	// MaxResultItems, or is empty. Raw is never cut here.
	Truncated string
}

// Cluster is one location cluster of a coordinates result.
type Cluster struct {
	Center   Coordinates
	Location Location
	RadiusKM float64
	// Points are the individual predictions the cluster groups (the
	// backend's points); empty when the service sends none.
	Points []Coordinates
	// Confidence is the cluster's confidence when the service gives one.
	Confidence *float64
}

// VehicleMatch is one match of a vehicle result.
type VehicleMatch struct {
	Make, Model string
	// Year is as sent: "2023" or a range such as "2020-2023".
	Year string
	// ConfidencePercent is 0 to 100, as the backend sends it (point
	// predictions use 0 to 1).
	ConfidencePercent float64
	Variant           string
}

// PropertyMatch is one match of a property (hotel, rental) result.
type PropertyMatch struct {
	Name string
	// Location is a place description ("Roppongi Hills, Tokyo"), Country a
	// country name, not a code.
	Location, Country string
	// Coordinates is nil when the match has none.
	Coordinates       *Coordinates
	ConfidencePercent float64
	Category, Address string
}

// Coordinates are degrees of latitude and longitude.
type Coordinates struct {
	Latitude, Longitude float64
}

// Location names a place.
type Location struct {
	Name, Admin1, Admin2, CountryCode string
}

// PointPrediction is one prediction of an accuracy result.
type PointPrediction struct {
	Latitude, Longitude, Confidence float64
	Rank                            int
	Location                        Location
	// HeadingDeg is the estimated camera heading; nil when absent.
	HeadingDeg *float64
}

// TopLocation is the best location of a result, flattened.
type TopLocation struct {
	Name, Admin1, Admin2, CountryCode string
	Latitude, Longitude               float64
	// RadiusKM is set when the location came from a cluster.
	RadiusKM *float64
	// Confidence is set when the location came from a point prediction.
	Confidence *float64
}

// Top returns the best location: the first cluster of a coordinates result,
// or the top prediction (else the first prediction) of an accuracy result.
// It reports false when the result holds no location.
func (r Result) Top() (TopLocation, bool) {
	if len(r.Clusters) > 0 {
		c := r.Clusters[0]
		radius := c.RadiusKM
		return TopLocation{
			Name: c.Location.Name, Admin1: c.Location.Admin1, Admin2: c.Location.Admin2,
			CountryCode: c.Location.CountryCode,
			Latitude:    c.Center.Latitude, Longitude: c.Center.Longitude,
			RadiusKM: &radius,
		}, true
	}
	p := r.TopPrediction
	if p == nil && len(r.Predictions) > 0 {
		p = &r.Predictions[0]
	}
	if p == nil {
		return TopLocation{}, false
	}
	confidence := p.Confidence
	return TopLocation{
		Name: p.Location.Name, Admin1: p.Location.Admin1, Admin2: p.Location.Admin2,
		CountryCode: p.Location.CountryCode,
		Latitude:    p.Latitude, Longitude: p.Longitude,
		Confidence: &confidence,
	}, true
}
