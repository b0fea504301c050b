package geosim

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
)

// Top-N limits of the contract.
const (
	MinTopN     = 1
	MaxTopN     = 15
	DefaultTopN = 5
)

// Result shapes. coordinates and accuracy are the contract's, with the
// public backend's additions where the contract is silent (admin2 and
// points in a cluster); vehicle and property are the backend's.
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
		Center   center   `json:"center"`
		Location location `json:"location"`
		RadiusKM float64  `json:"radius_km"`
		Points   []center `json:"points"`
		// Confidence is the contract profile's own addition; the backend
		// sends none.
		Confidence *float64 `json:"confidence,omitempty"`
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
		Make       string   `json:"make"`
		Model      string   `json:"model"`
		Year       string   `json:"year"`
		Confidence float64  `json:"confidence"` // 0 to 100
		Variant    *string  `json:"variant"`
		Images     []string `json:"images"`
	}
	property struct {
		Name        string   `json:"name"`
		Location    string   `json:"location"`
		Country     string   `json:"country"`
		Coordinates center   `json:"coordinates"`
		Confidence  float64  `json:"confidence"` // 0 to 100
		Category    string   `json:"category"`
		Address     *string  `json:"address"`
		Images      []string `json:"images"`
	}
	matchesResult[T any] struct {
		ResultType       string `json:"result_type"`
		Predictions      []T    `json:"predictions"`
		ProcessingTimeMS int64  `json:"processing_time_ms"`
	}
)

// backendClusters is how many clusters the public backend returns at most,
// whatever top_n asks (it reads top_k, whose default is 5).
const backendClusters = 5

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

// predictionFor builds the data.prediction object of a model type. topN
// is the number of clusters (coordinates) or predictions (accuracy) asked
// for; the backend profile ignores it and clusters backendClusters points.
//
// p, when not nil, moves the top answer towards the file's true position
// (truth.go).
func predictionFor(t ModelType, sha string, topN int, backend bool, p *pull) any {
	all, ms := guesses(sha)
	p.apply(&all[0])
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
		makes := [][2]string{{"Renault", "Clio"}, {"Toyota", "Corolla"}, {"Ford", "Transit"}, {"Volkswagen", "Golf"}, {"Fiat", "500"}}
		r := matchesResult[vehicle]{ResultType: "vehicle", ProcessingTimeMS: ms}
		for i, g := range all[:2] {
			mm := makes[(int(g.headingDeg)+i)%len(makes)]
			r.Predictions = append(r.Predictions, vehicle{Make: mm[0], Model: mm[1],
				Year: strconv.Itoa(2010 + int(g.radiusKM)%15), Confidence: round(g.confidence*100, 1), Images: []string{}})
		}
		return r
	case TypeProperty:
		g := all[0]
		address := g.place.Name + " " + strconv.Itoa(1+int(g.radiusKM))
		return matchesResult[property]{ResultType: "property", ProcessingTimeMS: ms, Predictions: []property{{
			Name: "Hotel SIM-" + sha[:6], Location: g.place.Name + ", " + g.place.Admin1, Country: g.place.CountryCode,
			Coordinates: center{g.lat, g.lon}, Confidence: round(g.confidence*100, 1), Category: "hotel",
			Address: &address, Images: []string{},
		}}}
	default:
		r := coordinatesResult{ResultType: "coordinates", ProcessingTimeMS: ms}
		n := topN
		if backend {
			// Five points, clustered: between one and five clusters.
			n = 1 + int(all[0].headingDeg)%backendClusters
		}
		for i, g := range all[:n] {
			c := cluster{
				Center: center{g.lat, g.lon}, Location: g.location(true), RadiusKM: g.radiusKM,
				Points: g.points(1 + (i+int(g.radiusKM))%3),
			}
			if !backend {
				c.Confidence = &all[i].confidence
			}
			r.Clusters = append(r.Clusters, c)
		}
		return r
	}
}

// points spreads n prediction points around the guess.
func (g guess) points(n int) []center {
	out := make([]center, n)
	for i := range out {
		d := float64(i) * 0.01
		out[i] = center{round(g.lat+d, 6), round(g.lon-d, 6)}
	}
	return out
}
