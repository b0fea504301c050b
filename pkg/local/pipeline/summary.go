package pipeline

import (
	"time"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/monitor"
)

// Result is where one upload ended up.
type Result struct {
	Upload Upload
	// Record is the upload's record as last read; nil when there is none.
	Record *ledger.Record
	// DeadLetter is set when the upload's message went to the dead-letter
	// queue (an operator can inspect and redrive it: it is not lost).
	DeadLetter *sqsqueue.Message
	// Queued is set when the run ended (Ctrl-C) while the upload's message
	// was still in the queue.
	Queued bool
}

// Settled reports whether the upload reached an end: a final record or the
// dead-letter queue.
func (r Result) Settled() bool {
	return (r.Record != nil && r.Record.Final()) || r.DeadLetter != nil
}

// Lost reports an upload that is neither settled nor still queued: its
// message was deleted without a final record. This must never happen.
func (r Result) Lost() bool { return !r.Settled() && !r.Queued }

// Status is the record's status, "dead-lettered" for a dead letter without
// a final record, "queued" or "lost" otherwise.
func (r Result) Status() string {
	switch {
	case r.Record != nil && r.Record.Final():
		return r.Record.Status
	case r.DeadLetter != nil:
		return "dead-lettered"
	case r.Queued:
		return "queued"
	default:
		return "lost"
	}
}

// Summary is the outcome of a run.
type Summary struct {
	// Service describes the service used ("simulator at http://...").
	Service   string
	Simulated bool
	Bucket    string
	// Versioned reports whether the bucket had versioning enabled
	// (Options.Unversioned unset).
	Versioned bool
	Table     string
	// S3Endpoint and DynamoDBEndpoint are where the local services listened
	// (stopped by the time Run returns, unless DynamoDB was given).
	S3Endpoint       string
	DynamoDBEndpoint string

	// Results has one entry per upload, in upload order.
	Results []Result
	// DeadLetters are the messages in the dead-letter queue.
	DeadLetters []sqsqueue.Message

	// Monitor is the monitor's report from its run at the end; nil when it
	// did not run, with MonitorError saying why.
	Monitor      *monitor.Report
	MonitorError string

	// Jobs are the jobs the run created (Options.Backfill, Reprocess), as
	// they ended.
	Jobs []jobs.Job
	// QueuePeak is the most messages the upload queue held at once
	// (waiting, delayed or in flight), read at every progress sweep: with
	// a job, its window at its rate plus the uploads.
	QueuePeak int

	// Queue counts what the event source mapping did.
	Queue sqsqueue.Stats
	// PredictCalls and CreditsCharged are the simulator's own accounting of
	// this run (zero with the real service).
	PredictCalls   int
	CreditsCharged int

	// Events counts, by detail type, the result events the results pipe
	// would have published (Options.Events); EventErrors are the records
	// it could not render, which AWS would send to its dead-letter queue.
	Events      map[string]int
	EventErrors []string

	Elapsed time.Duration
}

// Lost lists the uploads that were lost (see Result.Lost).
func (s *Summary) Lost() []Result {
	var lost []Result
	for _, r := range s.Results {
		if r.Lost() {
			lost = append(lost, r)
		}
	}
	return lost
}

// Counts tallies the results by Status.
func (s *Summary) Counts() map[string]int {
	counts := map[string]int{}
	for _, r := range s.Results {
		counts[r.Status()]++
	}
	return counts
}

// CreditsRecorded sums credits_consumed over the records.
func (s *Summary) CreditsRecorded() int {
	total := 0
	for _, r := range s.Results {
		if r.Record != nil {
			total += r.Record.CreditsConsumed
		}
	}
	return total
}
