package jobs

import "github.com/geolocate-aws/geolocate/pkg/pacer"

// BusyShare is the share of the pacer's rate a job feeds at. Fed at exactly
// the pacer's rate, a job keeps whatever lead the schedule has on it when it
// starts, and every message arrives that much before its slot; a tenth
// slower, the lead shrinks by a tenth of a spacing with each message, and a
// tenth of the call slots stays free for uploads (the bench measured it
// for the reprocess sender this replaces: pkg/reprocess's SendShare).
const BusyShare = 0.9

// minShare is the least share of the pacer's rate a job keeps however many
// uploads arrive: a job is never starved to nothing by a busy day, and the
// uploads above the rest wait their slots as they would without it.
const minShare = 0.1

// Rate is the calls a minute a job feeds at on a stack whose rate is
// ratePerMinute: BusyShare of the pacer's rate (pacer.Rate: 26.6 a minute
// for 30), less the uploads a minute the stack expects alongside
// (livePerMinute, when known), but never below minShare of the pacer's rate.
func Rate(ratePerMinute float64, livePerMinute ...float64) float64 {
	pr := pacer.Rate(ratePerMinute)
	r := BusyShare * pr
	for _, live := range livePerMinute {
		r -= max(live, 0)
	}
	return max(r, minShare*pr)
}
