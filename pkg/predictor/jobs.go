package predictor

import (
	"context"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
)

// Outcomes of a job's message that its job's state ends (deleted, no call,
// nothing charged).
const (
	reasonJobPaused    = "job_paused"
	reasonJobCancelled = "job_cancelled"
)

// jobGate reads the state of the job obj belongs to (cached, DefaultStateTTL)
// and stops a message its job no longer wants: a paused job's is dropped
// and its position recorded for the resume, a cancelled (or deleted) job's
// is dropped. Both are deleted from the queue with nothing claimed, called
// or charged. A state that cannot be read returns the message for retry:
// nothing is spent on a job that may have been cancelled.
func (inv *invocation) jobGate(ctx context.Context, obj *object) (outcome, bool) {
	if inv.h.jobStates == nil {
		return outcome{}, false
	}
	st, err := inv.h.jobStates.State(ctx, obj.Job)
	if err != nil {
		obj.logger.Warn("job state unreadable: message returned for retry", "error", err)
		return retryLater(retryLedger), true
	}
	switch st {
	case jobs.StatePaused:
		fctx, cancel := finishContext(ctx)
		defer cancel()
		if err := inv.h.deps.Jobs.Drop(fctx, obj.Job, obj.JobPos); err != nil {
			// Not recorded, the message must stay: the resume would
			// never send it again.
			obj.logger.Warn("paused job's message not recorded as dropped: returned for retry", "error", err)
			return retryLater(retryLedger), true
		}
		obj.logger.Info("job paused: message dropped, sent again on resume", "pos", obj.JobPos)
		return outcome{kind: outcomeIgnored, reason: reasonJobPaused}, true
	case jobs.StateCancelled:
		obj.logger.Info("job cancelled: message dropped")
		return outcome{kind: outcomeIgnored, reason: reasonJobCancelled}, true
	}
	return outcome{}, false
}

// jobOutcome is how a job counts an object's outcome; ok false while the
// object is not done with (a retry).
func jobOutcome(o outcome) (jobs.Outcome, bool) {
	switch o.kind {
	case outcomeSucceeded:
		return jobs.OutcomeDone, true
	case outcomeFailed:
		return jobs.OutcomeFailed, true
	case outcomeRejected, outcomeDuplicate, outcomeIgnored:
		return jobs.OutcomeSkipped, true
	}
	return 0, false
}

// countJobEnd adds an object's end to its job's counters. A count that
// fails is logged, not retried: the record is what is true, the counters
// are progress, and the job settles by the queue's horizon anyway.
func (inv *invocation) countJobEnd(ctx context.Context, obj *object, o outcome) {
	jo, ended := jobOutcome(o)
	if !ended || inv.h.deps.Jobs == nil {
		return
	}
	fctx, cancel := finishContext(ctx)
	defer cancel()
	if err := inv.h.deps.Jobs.AddEnd(fctx, obj.Job, jo, o.credits, inv.now()); err != nil {
		obj.logger.Warn("job progress not counted", "outcome", o.kind.String(), "error", err)
	}
}
