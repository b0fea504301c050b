package jobs

import "github.com/geolocate-aws/geolocate/pkg/pacer"

// The share of the pacer's rate a job and the live uploads together may
// use, by the pacer's spacing. jobsim (pkg/local/jobsim: the shared
// schedule at pacer.DefaultSpacing, MaxSlotWait 1 s, Poisson uploads at
// 5 a minute, a job fed evenly over each minute) measured a live upload's
// upload-to-record p50 against its 0.44 s without a job, at 30 a minute:
// 0.9 of pacer.Rate less the uploads 2.27 s, 0.8 1.80 s, 0.7 1.31 s,
// 0.6 1.08 s, 0.5 0.56 s; at 120 a minute 0.9 gave 0.71 s against 0.43 s,
// at 600 0.47 s against 0.42 s. With slots two seconds apart a burst of
// uploads books the schedule ahead and an evenly fed job keeps it booked,
// so an upload waits its place behind job calls: the slower the rate, the
// more room the uploads need. Issue 47 asks for the p50 within 1 s.
const (
	// SlowShare is the share at a spacing of a second or more (60 calls
	// a minute and below): 1.31 s against 0.44 s at 30 a minute.
	SlowShare = 0.7
	// BusyShare is the share above 60 a minute, as the reprocess sender
	// this replaces kept (pkg/reprocess's SendShare): fed a tenth slower
	// than the pacer calls, the schedule's lead on the job shrinks with
	// each message.
	BusyShare = 0.9
	// slowRate is the highest rate at SlowShare: a second's spacing.
	slowRate = 60
)

// minShare is the least share of the pacer's rate a job keeps however many
// uploads arrive: a job is never starved to nothing by a busy day, and the
// uploads above the rest wait their slots as they would without it.
const minShare = 0.1

// Share is the share of the pacer's rate a job and the live uploads may use
// together on a stack whose rate is ratePerMinute.
func Share(ratePerMinute float64) float64 {
	if ratePerMinute <= slowRate {
		return SlowShare
	}
	return BusyShare
}

// Rate is the calls a minute a job feeds at on a stack whose rate is
// ratePerMinute: Share of the pacer's rate (pacer.Rate: 29.5 a minute for
// 30, so 20.6 a job alone), less the uploads a minute the stack expects
// alongside (livePerMinute, when known: 15.6 at 30 a minute with 5
// uploads), but never below minShare of the pacer's rate.
func Rate(ratePerMinute float64, livePerMinute ...float64) float64 {
	pr := pacer.Rate(ratePerMinute)
	r := Share(ratePerMinute) * pr
	for _, live := range livePerMinute {
		r -= max(live, 0)
	}
	return max(r, minShare*pr)
}
