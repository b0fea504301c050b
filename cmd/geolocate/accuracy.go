package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/geolocate-aws/geolocate/pkg/geodist"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// accuracy is the service's accuracy on the records that have both a
// prediction and an EXIF position the upload did not carry: computed here
// from the records, exact over whatever the operator selected (--since,
// --status), where the dashboard's metrics give the same figures over time.
// Each photo counts once: copies of one photo (the same content, or an
// answer reused from another object) are one sample, not one per copy.
type accuracy struct {
	Photos   int                `json:"photos"`
	MedianKm float64            `json:"median_km"`
	P90Km    float64            `json:"p90_km"`
	Within   map[string]float64 `json:"within_share"` // threshold name -> share 0..1
	// Copies counts the records left out as another record's photo: four
	// copies of one photo were four samples of one answer.
	Copies int `json:"copies_counted_once,omitempty"`
	// PositionSent counts the predictions left out: their upload carried
	// the EXIF position (uploadMetadata=keep), so the service may have read
	// the answer off the file.
	PositionSent int `json:"left_out_position_sent,omitempty"`
	// Simulated says the answers came from the simulator, whose places are
	// made up: the figures measure it, not the service.
	Simulated bool `json:"simulated,omitempty"`
}

// photoIdentity is what makes two records one photo: the content the
// service was asked about (ContentSHA256, set when answers are reused),
// else the object whose answer a copy reused, else the object version.
func photoIdentity(r *ledger.Record) string {
	switch {
	case r.ContentSHA256 != "":
		return "content " + r.ContentSHA256
	case r.ReusedFrom != "":
		return strings.TrimSuffix(r.ReusedFrom, " run "+r.Run)
	}
	return ledger.ObjectRef{Bucket: r.Bucket, Key: r.Key, VersionID: r.VersionID, ETag: r.ETag}.String()
}

// measureAccuracy gathers the error of every photo with one, the first
// record of each photo standing for it; ok is false when there is none and
// none was left out.
func measureAccuracy(records []ledger.Record) (accuracy, bool) {
	var errs []float64
	sent, copies := 0, 0
	seen := map[string]bool{}
	for i := range records {
		r := &records[i]
		switch {
		case r.Status != ledger.StatusSucceeded:
		case r.ErrorKm != nil:
			if id := photoIdentity(r); seen[id] {
				copies++
			} else {
				seen[id] = true
				errs = append(errs, *r.ErrorKm)
			}
		case r.PositionSent && r.ExifLatitude != nil:
			sent++
		}
	}
	if len(errs) == 0 {
		return accuracy{PositionSent: sent}, sent > 0
	}
	slices.Sort(errs)
	a := accuracy{Photos: len(errs), MedianKm: quantile(errs, 0.5), P90Km: quantile(errs, 0.9), Within: map[string]float64{}, Copies: copies, PositionSent: sent}
	for _, th := range geodist.Thresholds {
		n := 0
		for _, km := range errs {
			if km <= th.Km {
				n++
			}
		}
		a.Within[th.Name] = float64(n) / float64(len(errs))
	}
	return a, true
}

// quantile of sorted values, by linear interpolation between closest ranks.
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	lo := int(pos)
	if lo+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (pos-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// String is "12 photo(s) with EXIF GPS, sent without it: median 8.2 km, p90
// 310 km; within 1 km 8%, 25 km 58%, 200 km 83%, 750 km 92%, 2500 km 100%",
// then the copies counted once and the photos left out because their
// upload carried the position. On the simulator it starts by saying that
// its places are made up: "median 933 km" was read as the service's.
func (a accuracy) String() string {
	var parts []string
	if a.Photos > 0 {
		var shares []string
		for _, th := range geodist.Thresholds {
			shares = append(shares, fmt.Sprintf("%s km %.0f%%", strconv.FormatFloat(th.Km, 'f', -1, 64), 100*a.Within[th.Name]))
		}
		line := fmt.Sprintf("%d photo(s) with EXIF GPS, sent without it: median %s, p90 %s; within %s",
			a.Photos, km(a.MedianKm), km(a.P90Km), strings.Join(shares, ", "))
		if a.Simulated {
			line = "the simulator's made-up places, not the service's accuracy: " + line
		}
		parts = append(parts, line)
	}
	if a.Copies > 0 {
		parts = append(parts, fmt.Sprintf("%d copy(ies) of these photos counted once", a.Copies))
	}
	if a.PositionSent > 0 {
		parts = append(parts, fmt.Sprintf("%d photo(s) left out: their upload carried the EXIF position (uploadMetadata=keep)", a.PositionSent))
	}
	return strings.Join(parts, "; ")
}

// km formats a distance with the precision it deserves.
func km(v float64) string {
	if v < 10 {
		return strconv.FormatFloat(v, 'f', 1, 64) + " km"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + " km"
}
