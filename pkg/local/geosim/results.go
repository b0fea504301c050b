package geosim

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"slices"
)

// Top-N limits of the contract.
const (
	MinTopN     = 1
	MaxTopN     = 15
	DefaultTopN = 5
)

// Result shapes. coordinates and accuracy are the contract's; vehicle and
// property are invented, as the contract does not show them, so clients
// meet a result type they do not know.
type (
	location struct {
		Name        string `json:"name"`
		Admin1      string `json:"admin1"`
		Admin2      string `json:"admin2,omitempty"`
		CountryCode string `json:"country_code"`
	}
	center struct {
		Latitude  float64 `json:"latitude"`
		Longitude float64 `json:"longitude"`
	}
	cluster struct {
		Center     center   `json:"center"`
		Location   location `json:"location"`
		RadiusKM   float64  `json:"radius_km"`
		Confidence float64  `json:"confidence"`
	}
	coordinatesResult struct {
		ResultType       string    `json:"result_type"`
		Clusters         []cluster `json:"clusters"`
		ProcessingTimeMS int64     `json:"processing_time_ms"`
	}
	pointPrediction struct {
		Latitude   float64  `json:"latitude"`
		Longitude  float64  `json:"longitude"`
		Confidence float64  `json:"confidence"`
		Rank       int      `json:"rank"`
		Location   location `json:"location"`
		HeadingDeg float64  `json:"heading_deg"`
	}
	accuracyResult struct {
		ResultType       string            `json:"result_type"`
		Predictions      []pointPrediction `json:"predictions"`
		TopPrediction    pointPrediction   `json:"top_prediction"`
		ProcessingTimeMS int64             `json:"processing_time_ms"`
	}
	vehicle struct {
		Make        string  `json:"make"`
		BodyStyle   string  `json:"body_style"`
		PlateRegion string  `json:"plate_region"`
		Confidence  float64 `json:"confidence"`
	}
	vehicleResult struct {
		ResultType       string    `json:"result_type"`
		Vehicles         []vehicle `json:"vehicles"`
		ProcessingTimeMS int64     `json:"processing_time_ms"`
	}
	property struct {
		ParcelRef  string   `json:"parcel_ref"`
		Location   location `json:"location"`
		Point      center   `json:"point"`
		Confidence float64  `json:"confidence"`
	}
	propertyResult struct {
		ResultType       string     `json:"result_type"`
		Properties       []property `json:"properties"`
		ProcessingTimeMS int64      `json:"processing_time_ms"`
	}
)

// guess is one ranked candidate, derived from the file hash.
type guess struct {
	place      place
	lat, lon   float64
	confidence float64
	radiusKM   float64
	headingDeg float64
}

// guesses derives MaxTopN ranked candidates from the file's sha256 alone:
// the same bytes always give the same answer, and a smaller top_n is a
// prefix of a larger one.
func guesses(sha string) ([]guess, int64) {
	sum, err := hex.DecodeString(sha)
	if err != nil || len(sum) < 16 {
		sum = make([]byte, 16)
	}
	rng := rand.New(rand.NewPCG(binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:16])))
	order := rng.Perm(len(gazetteer))[:MaxTopN]
	weights := make([]float64, MaxTopN)
	var total float64
	for i := range weights {
		weights[i] = math.Pow(rng.Float64(), 3) + 0.001
		total += weights[i]
	}
	slices.SortFunc(weights, func(a, b float64) int { return cmpDesc(a, b) })
	out := make([]guess, MaxTopN)
	for i, idx := range order {
		p := gazetteer[idx]
		conf := round(weights[i]/total, 4)
		out[i] = guess{
			place:      p,
			lat:        round(p.Lat+(rng.Float64()-0.5)*0.1, 6),
			lon:        round(p.Lon+(rng.Float64()-0.5)*0.1, 6),
			confidence: conf,
			radiusKM:   round(2+(1-conf)*rng.Float64()*250, 1),
			headingDeg: round(rng.Float64()*360, 1),
		}
	}
	return out, 80 + rng.Int64N(400)
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

func (g guess) location(withAdmin2 bool) location {
	l := location{Name: g.place.Name, Admin1: g.place.Admin1, CountryCode: g.place.CountryCode}
	if withAdmin2 {
		l.Admin2 = g.place.Admin2
	}
	return l
}

// predictionFor builds the data.prediction object of a model type.
func predictionFor(t ModelType, sha string, topN int) any {
	all, ms := guesses(sha)
	top := all[:topN]
	switch t {
	case TypeHighAccuracy:
		r := accuracyResult{ResultType: "accuracy", ProcessingTimeMS: ms}
		for i, g := range top {
			r.Predictions = append(r.Predictions, pointPrediction{
				Latitude: g.lat, Longitude: g.lon, Confidence: g.confidence, Rank: i + 1,
				Location: g.location(true), HeadingDeg: g.headingDeg,
			})
		}
		r.TopPrediction = r.Predictions[0]
		return r
	case TypeVehicleID:
		makes := []string{"Renault", "Toyota", "Ford", "Volkswagen", "Fiat"}
		styles := []string{"hatchback", "sedan", "van", "suv"}
		g := top[0]
		return vehicleResult{ResultType: "vehicle", ProcessingTimeMS: ms, Vehicles: []vehicle{{
			Make:        makes[int(g.headingDeg)%len(makes)],
			BodyStyle:   styles[int(g.radiusKM)%len(styles)],
			PlateRegion: g.place.CountryCode,
			Confidence:  g.confidence,
		}}}
	case TypeProperty:
		g := top[0]
		return propertyResult{ResultType: "property", ProcessingTimeMS: ms, Properties: []property{{
			ParcelRef: "SIM-" + sha[:12], Location: g.location(true),
			Point: center{g.lat, g.lon}, Confidence: g.confidence,
		}}}
	default:
		r := coordinatesResult{ResultType: "coordinates", ProcessingTimeMS: ms}
		for _, g := range top {
			r.Clusters = append(r.Clusters, cluster{
				Center: center{g.lat, g.lon}, Location: g.location(false),
				RadiusKM: g.radiusKM, Confidence: g.confidence,
			})
		}
		return r
	}
}
