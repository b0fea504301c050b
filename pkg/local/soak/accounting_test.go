package soak

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
)

// figures are the soak's accounts: where every upload ended, and where
// every credit went.
type figures struct {
	Uploads             int
	Messages            int // sent: one per upload, the re-sent duplicates and the malformed ones
	Resent              int // duplicates sent again later, out of order
	Deliveries          int // messages handed to an invocation, redeliveries included
	QueueDuplicates     int // extra copies delivered by the queue's at-least-once delivery
	UploadsDuplicated   int // uploads delivered twice or more by duplication (not by retries)
	Invocations         int64
	InvocationErrors    int64
	Crashes             int64 // invocations crashed between the paid call and the write
	Succeeded           int
	Rejected            map[string]int // by reason
	Failed              map[string]int // by error code
	Waiting             map[string]int // by error code: nothing charged, processed again when the cause clears
	DeadLetters         map[string]int // uploads on the dead-letter queue, by reason
	MalformedDead       int            // malformed messages on the dead-letter queue
	Malformed           int            // malformed messages sent
	Lost                []string       // uploads with neither a final record nor a dead letter
	InProgress          int            // records still in progress
	StuckInProgress     int            // ... past their lease
	Calls               int            // prediction requests the simulator saw
	CallsByResult       map[string]int
	Charged             int // credits the simulator charged
	ChargedInCallLog    int
	SucceededCredits    int // sum of credits_consumed of succeeded records
	UnknownOutcomeCreds int // credits of calls whose answer was lost (outcome_unknown, malformed_response)
	UnknownUncharged    int // outcome_unknown uploads the service had in fact not charged: the price of at most once
	Unexplained         int // Charged - SucceededCredits - UnknownOutcomeCreds: must be 0
	UnattributedCharges int // charged calls for bytes of no upload
	DoubleCharges       int // extra charged calls for an object version already charged
	KeyLeaks            int // log lines or records holding a key
	// UnknownFromLostWrite: outcome_unknown uploads (not crashed) whose
	// attempt recorded nothing: must be 0.
	UnknownFromLostWrite int
	BudgetCounter        int            // the daily credit counter at the end
	AWSFaults            map[string]int // injected by the proxies, by service, operation and fault
	Faults               []string
	Elapsed              time.Duration

	records map[string]*ledger.Record // by key
}

// account builds the figures from the final state of every part: the
// ledger, the queue's dead letters and the simulator's call log.
func account(t *testing.T, r *rig, ups []*soakUpload, q *sqsqueue.Queue) *figures {
	t.Helper()
	f := &figures{
		Uploads:       len(ups),
		Rejected:      map[string]int{},
		Failed:        map[string]int{},
		Waiting:       map[string]int{},
		DeadLetters:   map[string]int{},
		CallsByResult: map[string]int{},
	}
	records := make(map[string]*ledger.Record, len(ups))
	for _, u := range ups {
		records[u.obj.Key] = r.record(u.obj)
	}
	f.records = records

	deadKeys := map[string]bool{}
	malformedDead := map[string]bool{} // by message id: the queue's duplicate copies share it
	for _, m := range q.DeadLetters() {
		key, ok := eventKey(m.Body)
		if !ok {
			malformedDead[m.ID] = true
			continue
		}
		deadKeys[key] = true
		reason := m.LastFailure
		if rec := records[key]; rec != nil {
			reason = fmt.Sprintf("record %s (%s)", rec.Status, rec.ErrorCode)
		}
		f.DeadLetters[reason]++
	}
	f.MalformedDead = len(malformedDead)

	now := time.Now()
	for _, u := range ups {
		rec := records[u.obj.Key]
		switch {
		case rec == nil:
		case rec.Status == ledger.StatusSucceeded:
			f.Succeeded++
			f.SucceededCredits += rec.CreditsConsumed
		case rec.Status == ledger.StatusRejected:
			f.Rejected[rec.ErrorCode]++
		case rec.Status == ledger.StatusFailed:
			f.Failed[rec.ErrorCode]++
		case rec.Status == ledger.StatusWaiting:
			f.Waiting[rec.ErrorCode]++
		case rec.Status == ledger.StatusInProgress:
			f.InProgress++
			if rec.LeaseUntil.Before(now) {
				f.StuckInProgress++
			}
		}
		// An object deleted for good is accounted for by its rejection, even
		// where the rejection stays claimable for a re-upload (unversioned).
		gone := rec != nil && rec.Status == ledger.StatusRejected && rec.ErrorCode == ledger.ReasonObjectNotFound
		if (rec == nil || !(rec.Final() || gone)) && !deadKeys[u.obj.Key] {
			f.Lost = append(f.Lost, u.obj.Key)
		}
	}

	// Every charge is matched to the upload whose bytes it was for.
	bySHA := map[string]*soakUpload{}
	for _, u := range ups {
		if u.sha != "" {
			bySHA[u.sha] = u
		}
	}
	chargedCalls := map[string]int{}
	for _, c := range r.predictCalls() {
		f.Calls++
		f.CallsByResult[callResult(c)]++
		if c.Charged == 0 {
			continue
		}
		f.ChargedInCallLog += c.Charged
		u := bySHA[c.FileSHA256]
		if u == nil {
			f.UnattributedCharges++
			continue
		}
		chargedCalls[c.FileSHA256]++
		if chargedCalls[c.FileSHA256] > 1 {
			f.DoubleCharges++
		}
		if rec := records[u.obj.Key]; rec != nil && rec.Status == ledger.StatusFailed &&
			(rec.ErrorCode == ledger.ErrorCodeOutcomeUnknown || rec.ErrorCode == predictor.CodeMalformedResponse) {
			f.UnknownOutcomeCreds += c.Charged
		}
	}
	for _, u := range ups {
		if rec := records[u.obj.Key]; rec != nil && rec.ErrorCode == ledger.ErrorCodeOutcomeUnknown && chargedCalls[u.sha] == 0 {
			f.UnknownUncharged++
		}
	}
	f.Charged = r.sim.Charged(simOrg)
	f.Unexplained = f.Charged - f.SucceededCredits - f.UnknownOutcomeCreds

	// Each succeeded record was charged exactly once, for what it says.
	for _, u := range ups {
		if rec := records[u.obj.Key]; rec != nil && rec.Status == ledger.StatusSucceeded && chargedCalls[u.sha] != 1 {
			t.Errorf("%s succeeded but was charged %d times", u.obj.Key, chargedCalls[u.sha])
		}
	}
	return f
}

// callResult names what a call came to, for the figures.
func callResult(c geosim.Call) string {
	switch {
	case c.Fault != "" && c.Fault != geosim.FaultLatency:
		return c.Fault
	case c.Status == geosim.StatusClientClosedRequest:
		return "client gave up (timeout)"
	case c.Status == geosim.StatusDropped:
		return "dropped"
	}
	return fmt.Sprintf("HTTP %d", c.Status)
}

// String prints the figures as docs/reliability.md quotes them.
func (f *figures) String() string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	sorted := func(m map[string]int) string {
		if len(m) == 0 {
			return "none"
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
		return strings.Join(parts, ", ")
	}
	total := func(m map[string]int) int {
		n := 0
		for _, v := range m {
			n += v
		}
		return n
	}
	line("uploads                 %d", f.Uploads)
	line("messages sent           %d (%d re-sent out of order, %d malformed)", f.Messages, f.Resent, f.Malformed)
	line("deliveries              %d (%d queue duplicates; %d uploads = %.1f%% delivered twice or more)",
		f.Deliveries, f.QueueDuplicates, f.UploadsDuplicated, pct(f.UploadsDuplicated, f.Uploads))
	line("invocations             %d (%d failed as a whole, %d simulated crashes after the call)", f.Invocations, f.InvocationErrors, f.Crashes)
	line("succeeded               %d", f.Succeeded)
	line("rejected                %d: %s", total(f.Rejected), sorted(f.Rejected))
	line("failed                  %d: %s", total(f.Failed), sorted(f.Failed))
	line("waiting                 %d: %s", total(f.Waiting), sorted(f.Waiting))
	line("  outcome_unknown       %d uploads, not called again; the service had charged %d of them",
		f.Failed[ledger.ErrorCodeOutcomeUnknown], f.Failed[ledger.ErrorCodeOutcomeUnknown]-f.UnknownUncharged)
	line("dead letters            %d uploads: %s; %d/%d malformed messages", total(f.DeadLetters), sorted(f.DeadLetters), f.MalformedDead, f.Malformed)
	line("  from a lost write     %d (an attempt's ledger write lost, not a crash)", f.UnknownFromLostWrite)
	line("lost                    %d", len(f.Lost))
	line("in progress at the end  %d (%d past their lease)", f.InProgress, f.StuckInProgress)
	line("prediction calls        %d: %s", f.Calls, sorted(f.CallsByResult))
	line("credits charged         %d = %d (succeeded records) + %d (calls whose answer was lost) + %d unexplained",
		f.Charged, f.SucceededCredits, f.UnknownOutcomeCreds, f.Unexplained)
	line("double charges          %d (unattributed charges %d)", f.DoubleCharges, f.UnattributedCharges)
	line("daily credit counter    %d", f.BudgetCounter)
	if len(f.AWSFaults) > 0 {
		line("AWS faults injected     %d: %s", total(f.AWSFaults), sorted(f.AWSFaults))
	}
	line("key in logs or records  %d", f.KeyLeaks)
	line("elapsed                 %s (%.1f uploads/s)", f.Elapsed.Round(100*time.Millisecond), float64(f.Uploads)/f.Elapsed.Seconds())
	line("fault schedule:")
	for _, s := range f.Faults {
		line("  %s", s)
	}
	return b.String()
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}
