// Package jobs runs archive-size work in the account: backfills (every
// object of a bucket or prefix, as upload notifications), reprocess runs
// (a selection of the results table, asked again of a model) and
// requeue-unknown (a backfill that reopens outcome_unknown records), as
// durable, paced jobs that no terminal has to watch.
//
// A job lives in the results table (Store): its item holds the spec, the
// state, the listing cursor, the feeding position and the counters; its
// manifest is a sequence of chunk items the listing writes. The feeder
// (Feeder.Run, one run a minute from an EventBridge schedule) advances each
// active job's listing one bounded step, feeds the upload queue with at
// most WindowMinutes of calls at the job's rate in flight, and settles the
// job when everything listed was fed and has ended. The predictor reads the
// job's messages (pkg/shared/jobmsg), drops those of a paused or cancelled
// job, and adds each object's end to the job's counters.
//
// docs/jobs.md gives the design, the candidates considered, costs and
// limits.
package jobs

import (
	"math"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/shared/jobmsg"
)

// Kind is what a job does with the objects it lists.
type Kind string

const (
	// KindBackfill sends objects of a bucket as upload notifications
	// (Spec.Requeue: also those recorded failed/outcome_unknown).
	KindBackfill Kind = jobmsg.KindBackfill
	// KindReprocess asks a model again about a selection of the results
	// table, as a named run.
	KindReprocess Kind = jobmsg.KindReprocess
)

// State is where a job is in its life.
type State string

const (
	StateListing   State = "listing"   // the manifest is being written; what is listed is fed meanwhile
	StateRunning   State = "running"   // listing done; feeding and settling
	StatePaused    State = "paused"    // nothing fed, its queued messages dropped by the predictor
	StateCancelled State = "cancelled" // final: nothing more fed, its queued messages dropped
	StateDone      State = "done"      // final: everything listed was fed and has ended
)

// Active reports whether the feeder still works on a job in s.
func (s State) Active() bool { return s == StateListing || s == StateRunning || s == StatePaused }

// Why feeding waits (Job.Held).
const (
	HeldBudget = "budget" // the day's credit budget is spent: feeding resumes the next UTC day
	HeldPaused = "paused" // the operator paused the job
)

// Spec is what the operator asked for.
type Spec struct {
	Kind Kind
	// Bucket and Prefix: where a backfill lists (a reprocess's selection
	// has its own prefix).
	Bucket, Prefix string
	// Requeue: a backfill also sends objects recorded as
	// failed/outcome_unknown, reopening their records.
	Requeue bool
	// Run, ModelID and Price: a reprocess's run (ledger.Run), the model it
	// asks ("" the default) and the credits a call costs.
	Run, ModelID string
	Price        int
	// Selection is a reprocess's selection of the results table, as the
	// CLI encodes it (Selection.String).
	Selection string
	// RatePerMinute is the stack's call rate when the job was made (its
	// ratePerMinute); the job feeds at Rate of it. 0: the feeder's.
	RatePerMinute float64
}

// Job is one job as stored.
type Job struct {
	ID string
	Spec
	State State
	// Created is when the job was made, Updated its item's last change,
	// LastProgress the last time an object of it ended (or Created).
	Created, Updated, LastProgress time.Time
	// Listed objects are in the manifest; Sent were fed to the queue;
	// Done, Failed and Skipped ended (recorded, failed, or skipped as
	// already done or rejected before a call).
	Listed, Sent, Done, Failed, Skipped int64
	CreditsSpent                        int64
	// ListingDone: the manifest is complete.
	ListingDone bool
	// Held says why feeding waits: HeldBudget, HeldPaused, or "".
	Held string
	// Chunks is the number of manifest chunks written.
	Chunks int
	// Error is the last error the feeder met on this job ("" none): a
	// listing that S3 refuses, say. The job stays active and is retried.
	Error string
	// FeedRate is the calls a minute the feeder last fed the job at
	// (Rate of the stack's rate less the live uploads); 0 before it fed.
	FeedRate float64
}

// Ended is how many objects of the job have ended.
func (j Job) Ended() int64 { return j.Done + j.Failed + j.Skipped }

// Remaining is how many listed objects have not ended yet (a redelivered
// message can end twice: never below zero).
func (j Job) Remaining() int64 { return max(j.Listed-j.Ended(), 0) }

// ETA is when the job finishes from now: the remaining objects at the rate
// it is fed at (FeedRate, else Rate of RatePerMinute). A job that is done
// finished at Updated; one paused, cancelled or without a rate has no ETA
// (the zero time).
func (j Job) ETA(now time.Time) time.Time {
	switch {
	case j.State == StateDone:
		return j.Updated
	case j.State != StateListing && j.State != StateRunning:
		return time.Time{}
	}
	rate := j.FeedRate
	if rate <= 0 && j.RatePerMinute > 0 {
		rate = Rate(j.RatePerMinute)
	}
	if rate <= 0 {
		return time.Time{}
	}
	minutes := float64(j.Remaining()) / rate
	return now.Add(time.Duration(math.Ceil(minutes * float64(time.Minute))))
}
