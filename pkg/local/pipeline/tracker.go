package pipeline

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/shared/jobmsg"
)

// tracker follows each upload until it settles, reporting it once.
type tracker struct {
	store    *ledger.Store
	queue    *sqsqueue.Queue
	progress io.Writer
	onResult func(Result)

	mu      sync.Mutex
	results []Result
	done    []bool
}

func (t *tracker) add(u Upload) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.results = append(t.results, Result{Upload: u})
	t.done = append(t.done, false)
}

// sweep reads the record of every upload not yet settled and reports the
// ones that settled since the last sweep.
func (t *tracker) sweep(ctx context.Context) error {
	// Dead letters by message id (an upload's notification) and by the
	// object a job's message names (a backfilled object has no message of
	// its own: the job's feeder sent it).
	dead := map[string]*sqsqueue.Message{}
	deadObjects := map[ledger.ObjectRef]*sqsqueue.Message{}
	letters := t.queue.DeadLetters()
	for i := range letters {
		dead[letters[i].ID] = &letters[i]
		if o, ok, err := jobmsg.Parse([]byte(letters[i].Body)); ok && err == nil && o.Kind == jobmsg.KindBackfill {
			deadObjects[ledger.ObjectRef{Bucket: o.Bucket, Key: o.Key, VersionID: o.VersionID}] = &letters[i]
		}
	}
	t.mu.Lock()
	pending := make([]int, 0, len(t.results))
	for i, d := range t.done {
		if !d {
			pending = append(pending, i)
		}
	}
	t.mu.Unlock()

	for _, i := range pending {
		t.mu.Lock()
		r := t.results[i]
		t.mu.Unlock()
		rec, err := t.store.Lookup(ctx, r.Upload.Ref())
		if err != nil {
			return fmt.Errorf("read record of %s: %w", r.Upload.Key, err)
		}
		r.Record = rec
		r.DeadLetter = dead[r.Upload.MessageID]
		if r.Upload.MessageID == "" {
			r.DeadLetter = deadObjects[ledger.ObjectRef{Bucket: r.Upload.Bucket, Key: r.Upload.Key, VersionID: r.Upload.VersionID}]
		}
		t.mu.Lock()
		t.results[i] = r
		settledNow := r.Settled() && !t.done[i]
		if settledNow {
			t.done[i] = true
		}
		t.mu.Unlock()
		if settledNow {
			fmt.Fprintf(t.progress, "done      %s\n", describeResult(r))
			if t.onResult != nil {
				t.onResult(r)
			}
		}
	}
	return nil
}

// pending counts the uploads not settled yet.
func (t *tracker) pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, d := range t.done {
		if !d {
			n++
		}
	}
	return n
}

// snapshot returns the results, marking unsettled uploads whose message is
// still in the queue.
func (t *tracker) snapshot() []Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]Result(nil), t.results...)
	for i := range out {
		if !out[i].Settled() {
			out[i].Queued = t.queue.Holds(out[i].Upload.MessageID)
		}
	}
	return out
}

// describeResult is a one-line account of a settled upload.
func describeResult(r Result) string {
	line := fmt.Sprintf("%-40s %s", r.Upload.Key, r.Status())
	rec := r.Record
	switch {
	case rec != nil && rec.Status == ledger.StatusSucceeded:
		place := rec.Place
		if rec.CountryCode != "" {
			place += ", " + rec.CountryCode
		}
		line += fmt.Sprintf("  %s (%d credit%s)", place, rec.CreditsConsumed, plural(rec.CreditsConsumed))
	case rec != nil && rec.ErrorCode != "":
		line += "  " + rec.ErrorCode
	case r.DeadLetter != nil && r.DeadLetter.LastFailure != "":
		line += "  " + r.DeadLetter.LastFailure
	}
	return line
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
