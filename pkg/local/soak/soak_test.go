package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// Soak sizes and timings. The client's timeouts and backoffs are short so
// that the CI size finishes in a few minutes on a small machine; the claim
// lease is short so that crashed attempts expire within the run.
const (
	defaultSoakUploads = 2000
	soakAttemptTimeout = 250 * time.Millisecond
	soakLease          = 3 * time.Second
	soakRetryDelay     = 300 * time.Millisecond
	soakMaxReceives    = 20
	soakMalformed      = 5
	soakResendRate     = 0.10
	soakQueueDuplicate = 0.20
	soakSeed           = 20260122
)

// soakUploads is SOAK_UPLOADS, or the CI size.
func soakUploads(t *testing.T) int {
	v := os.Getenv("SOAK_UPLOADS")
	if v == "" {
		return defaultSoakUploads
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 100 {
		t.Fatalf("SOAK_UPLOADS=%q: want a number of at least 100", v)
	}
	return n
}

// soakUpload is one object of the soak and what must become of it.
type soakUpload struct {
	obj        object
	body       []byte
	sha        string // sha256 of the bytes the service receives (stripped), "" when no call may be made
	wantReason string // expected rejection reason; "" for an image
	deleted    bool   // deleted before its event is processed
	reupload   bool   // deleted, then uploaded again (same bytes) during the run
	crash      bool   // its first result write is lost to a crash
	exif       bool   // carries a valid EXIF GPS position
}

// planUpload decides upload i: mostly unique images, with the odd files a
// real bucket receives, under keys that need decoding.
func planUpload(t testing.TB, i int) *soakUpload {
	key := fmt.Sprintf("soak/%05d/photo %d.jpg", i, i)
	if i%10 == 5 {
		key = fmt.Sprintf("soak/%05d/été ☀ photo+%d%%.jpg", i, i)
	}
	u := &soakUpload{}
	switch {
	case i%250 == 3:
		key, u.wantReason = fmt.Sprintf("soak/%05d/", i), predictor.ReasonFolderMarker
	case i%100 == 7:
		u.body, u.wantReason = textFile(), predictor.ReasonNotAnImage
	case i%100 == 13:
		u.body, u.wantReason = []byte{}, predictor.ReasonEmptyObject
	case i%200 == 21:
		u.body, u.wantReason, u.deleted = uniqueJPEG(t, key), predictor.ReasonObjectNotFound, true
		u.reupload = i%400 == 21
	case i%50 == 9:
		u.body = uniqueHEIC("soak:" + key)
	case i%4 == 1:
		// A quarter of the photos carry an EXIF GPS position, as phone
		// photos do: read from the same stream, compared with the prediction.
		u.body, u.exif = exifGPSJPEG(key, i), true
	default:
		u.body = uniqueJPEG(t, key)
	}
	if u.wantReason == "" {
		u.sha = strippedSHA(t, u.body)
		u.crash = i%97 == 11
	}
	u.obj.Key = key
	return u
}

// planUploads plans n uploads, whose images all send the service different
// bytes: the accounting matches each charge to its upload by the SHA-256 of
// what was sent, and content reuse would make two uploads of one digest a
// single paid call.
func planUploads(t testing.TB, n int) []*soakUpload {
	t.Helper()
	ups := make([]*soakUpload, n)
	bySHA := map[string]string{}
	for i := range ups {
		u := planUpload(t, i)
		if other, ok := bySHA[u.sha]; ok && u.sha != "" {
			t.Fatalf("uploads %q and %q send the same bytes (sha256 %s): the soak's images must be unique", other, u.obj.Key, u.sha)
		}
		bySHA[u.sha] = u.obj.Key
		ups[i] = u
	}
	return ups
}

// TestSoak runs SOAK_UPLOADS uploads through the queue, several concurrent
// handler instances and the real handler under every fault in the
// schedule, then accounts for every upload and every credit. The runs
// (soakRuns) cover a versioned bucket (the stack's own) and an unversioned
// one (an existing bucket may be, where a key and ETag come back when the
// same bytes are uploaded again), the service's faults, AWS's faults
// (injected by awsfault proxies between the handler's shipped AWS clients
// and the local parts), and both together.
func TestSoak(t *testing.T) {
	for _, run := range soakRuns {
		t.Run(run.name, func(t *testing.T) { soak(t, run) })
	}
}

func soak(t *testing.T, run soakRun) {
	n := soakUploads(t)
	crashes := &crashLedger{}
	r := newRig(t, rigOptions{
		unversioned: run.unversioned,
		awsFaults:   run.aws,
		lease:       soakLease,
		logLevel:    "info",
		env: map[string]string{
			envvars.RatePerMinute:  "30000",
			envvars.MaxConcurrency: "4",
			// Never reached: every call reserves and settles credits on
			// the daily counter, whose final value is checked.
			envvars.DailyBudget: strconv.Itoa(100 * n),
		},
		simOpts: []func(*geosim.Config){
			geosim.WithSeed(soakSeed),
			geosim.WithRateLimit(60000, 20),
			func(c *geosim.Config) { c.Allowance = 10 * n },
		},
		client: func(o *geoapi.Options) {
			o.AttemptTimeout = soakAttemptTimeout
			o.MaxAttempts = 3
		},
		ledger: func(l predictor.Ledger) predictor.Ledger {
			crashes.Ledger = l
			return crashes
		},
	})

	ups := planUploads(t, n)
	crashKeys := map[string]bool{}
	for _, u := range ups {
		if u.crash {
			crashKeys[u.obj.Key] = true
		}
	}
	crashes.chosen = func(key string) bool { return crashKeys[key] }
	uploadAll(t, r, ups)

	q := sqsqueue.New(
		sqsqueue.WithVisibilityTimeout(30*time.Second),
		sqsqueue.WithMaxReceiveCount(soakMaxReceives),
		sqsqueue.Duplicate(soakQueueDuplicate),
		func(o *sqsqueue.Options) { o.Seed = soakSeed },
	)
	rng := rand.New(rand.NewPCG(soakSeed, 1))
	bodies := make([]string, len(ups))
	for i, u := range ups {
		bodies[i] = uploadEvent(t, u.obj)
	}
	order := rng.Perm(len(ups))
	for _, i := range order {
		q.Send(bodies[i])
	}
	for i := range soakMalformed {
		q.Send(fmt.Sprintf(`{"Records":[{"s3":{"object":{"key":"broken-%d`, i))
	}
	var sent sync.Mutex
	messages := len(ups) + soakMalformed
	resent := 0
	resend := func() {
		// Out of order: events already processed, sent again newest first.
		picked := rng.Perm(len(ups))[:int(soakResendRate*float64(len(ups)))]
		for j := len(picked) - 1; j >= 0; j-- {
			q.Send(bodies[picked[j]])
		}
		sent.Lock()
		messages += len(picked)
		resent = len(picked)
		sent.Unlock()
	}

	reupload := func() {
		// Objects deleted before their event was processed come back with
		// the same bytes: on an unversioned bucket the same key and ETag.
		for _, u := range ups {
			if !u.reupload {
				continue
			}
			obj, err := r.putObject(u.obj.Key, u.body)
			if err != nil {
				t.Error(err)
				continue
			}
			u.obj, u.wantReason, u.sha = obj, "", strippedSHA(t, u.body)
			q.Send(uploadEvent(t, obj))
			sent.Lock()
			messages++
			sent.Unlock()
		}
	}

	tracker := newDeliveryTracker()
	poller := &sqsqueue.Poller{
		Queue:       q,
		Handler:     crashingHandler(r.handler),
		Concurrency: 4,
		BatchSize:   10,
		Timeout:     30 * time.Second,
		RetryDelay:  soakRetryDelay,
		OnBatch:     tracker.observe,
		Logger:      lambdarun.NewLogger(r.logs, "info"),
	}
	schedule := &faultSchedule{
		rest:  make(chan struct{}),
		steps: soakSteps(r, run, resend, reupload),
		progress: func() float64 {
			sent.Lock()
			defer sent.Unlock()
			return float64(poller.Stats().Acked) / float64(messages)
		},
	}

	ctx, cancel := context.WithTimeout(context.Background(), soakDeadline(n))
	defer cancel()
	start := time.Now()
	schedule.start = start
	faultsCtx, stopFaults := context.WithCancel(ctx)
	var faultsDone sync.WaitGroup
	faultsDone.Go(func() { schedule.run(faultsCtx) })

	err := poller.RunUntilDrained(ctx)
	if err == nil {
		// Steps the run's progress did not reach before the queue drained
		// run now, and what they send (a re-upload) is drained too.
		close(schedule.rest)
		faultsDone.Wait()
		err = poller.RunUntilDrained(ctx)
	}
	if err != nil {
		t.Errorf("queue not drained: %v (%d messages left)", err, q.Len())
	}
	elapsed := time.Since(start)
	stopFaults()
	faultsDone.Wait()
	r.sim.ResetFaults()

	f := account(t, r, ups, q)
	stats := poller.Stats()
	f.Messages, f.Resent, f.Malformed, f.Elapsed = messages, resent, soakMalformed, elapsed
	f.Invocations, f.InvocationErrors, f.Crashes = stats.Invocations, stats.InvokeErrors, crashes.count.Load()
	f.Deliveries, f.QueueDuplicates, f.UploadsDuplicated = tracker.figures()
	f.Faults = schedule.done()
	f.KeyLeaks = keyLeaks(r)
	f.UnknownFromLostWrite = unknownFromLostWrite(ups, f.records, crashes)
	f.BudgetCounter = budgetCounter(t, r, start)
	if r.proxies != nil {
		f.AWSFaults = r.proxies.injected()
	}
	t.Logf("soak figures (SOAK_UPLOADS=%d, %s):\n%s", n, run.name, f)
	if path := os.Getenv("SOAK_LOG_FILE"); path != "" {
		// Every log line of the run, for a closer look.
		if err := os.WriteFile(path, []byte(r.logs.String()), 0o600); err != nil {
			t.Error(err)
		}
	}

	checkSoak(t, run, f, ups, crashes, len(schedule.steps))
}

// checkSoak asserts the promises: nothing lost, nothing charged twice,
// every credit explained, nothing stuck, no key anywhere; and that the run
// really exercised what it claims to.
func checkSoak(t *testing.T, run soakRun, f *figures, ups []*soakUpload, crashes *crashLedger, steps int) {
	t.Helper()
	if len(f.Lost) > 0 {
		t.Errorf("%d uploads lost (no final record, not on the dead-letter queue), e.g. %q", len(f.Lost), f.Lost[0])
	}
	if f.DoubleCharges != 0 || f.UnattributedCharges != 0 {
		t.Errorf("%d double charges, %d charges for unknown bytes", f.DoubleCharges, f.UnattributedCharges)
	}
	if f.Unexplained != 0 {
		t.Errorf("%d credits charged are explained by no record", f.Unexplained)
	}
	if f.Charged != f.ChargedInCallLog {
		t.Errorf("the account was charged %d credits, the call log says %d", f.Charged, f.ChargedInCallLog)
	}
	if f.StuckInProgress != 0 {
		t.Errorf("%d records in progress past their lease", f.StuckInProgress)
	}
	if f.KeyLeaks != 0 {
		t.Errorf("the key appears %d times in logs or records", f.KeyLeaks)
	}
	if f.MalformedDead != f.Malformed {
		t.Errorf("%d of %d malformed messages reached the dead-letter queue", f.MalformedDead, f.Malformed)
	}

	// Rejections are exactly the odd files planted, and none cost a call.
	want := map[string]int{}
	for _, u := range ups {
		if u.wantReason != "" {
			want[u.wantReason]++
		}
	}
	for reason, n := range want {
		if f.Rejected[reason] != n {
			t.Errorf("%d uploads rejected as %s, want %d", f.Rejected[reason], reason, n)
		}
	}
	if len(f.Rejected) != len(want) {
		t.Errorf("rejections %v, want %v", f.Rejected, want)
	}

	// The run exercised every fault it claims.
	if got := pct(f.UploadsDuplicated, f.Uploads); got < 20 {
		t.Errorf("only %.1f%% of uploads were delivered more than once, want at least 20%%", got)
	}
	if len(f.Faults) != steps {
		t.Errorf("only %d of %d fault steps ran before the queue drained:\n%s", len(f.Faults), steps, strings.Join(f.Faults, "\n"))
	}
	if f.Crashes == 0 {
		t.Error("no crash was simulated")
	}
	if f.Failed[ledger.ErrorCodeOutcomeUnknown] < int(f.Crashes) {
		t.Errorf("%d crashes but %d outcome_unknown records", f.Crashes, f.Failed[ledger.ErrorCodeOutcomeUnknown])
	}
	for _, u := range ups {
		// Called once uploaded again (a fault may still make the call
		// fail), never left rejected as gone.
		if rec := f.records[u.obj.Key]; u.reupload && (rec == nil || rec.Status == ledger.StatusRejected || rec.Attempts == 0) {
			t.Errorf("%q was deleted and uploaded again but never called: %+v", u.obj.Key, rec)
		}
	}
	// The photos with EXIF GPS: each one predicted, whatever faults it met
	// on the way, has its EXIF position and its error recorded.
	predictedWithEXIF := 0
	for _, u := range ups {
		rec := f.records[u.obj.Key]
		if !u.exif || rec == nil || rec.Status != ledger.StatusSucceeded {
			continue
		}
		predictedWithEXIF++
		if rec.ExifLatitude == nil || rec.ErrorKm == nil {
			t.Errorf("%q carries EXIF GPS but its record has exif_latitude %v, error_km %v", u.obj.Key, rec.ExifLatitude, rec.ErrorKm)
		}
	}
	if predictedWithEXIF == 0 {
		t.Error("no photo with EXIF GPS was predicted: the soak does not exercise the EXIF path")
	}
	// Every outcome_unknown is the service's doing (or a crash's): no
	// attempt lost its outcome to a failed ledger write.
	if f.UnknownFromLostWrite != 0 {
		t.Errorf("%d uploads are outcome_unknown because an attempt's ledger write was lost", f.UnknownFromLostWrite)
	}
	if f.Crashes > 0 && !strings.Contains(f.records[firstCrashed(ups, crashes)].ErrorMessage, "lease expired") {
		t.Error("a crashed attempt's record does not say its lease expired: unknownFromLostWrite would miss lost writes")
	}
	// The daily counter holds what was charged, plus the reservations of
	// outcome_unknown calls the service had not in fact charged (kept, as
	// the service may have charged).
	if want := f.Charged + f.UnknownUncharged; f.BudgetCounter != want {
		t.Errorf("daily credit counter %d, want %d (charged %d + %d outcome_unknown uncharged)",
			f.BudgetCounter, want, f.Charged, f.UnknownUncharged)
	}
	if run.service {
		for _, result := range []string{geosim.FaultServerError, geosim.FaultDrop, geosim.FaultGatewayAfterCharge, geosim.FaultStorm, "HTTP 402", "client gave up (timeout)"} {
			if f.CallsByResult[result] == 0 {
				t.Errorf("no call came to %q: the fault was not exercised", result)
			}
		}
	}
	if f.CallsByResult["HTTP 401"] == 0 {
		t.Error("no call came to HTTP 401: the key rotation was not exercised")
	}
	if run.aws {
		for _, want := range awsFaultsExpected {
			n := 0
			for k, v := range f.AWSFaults {
				if strings.HasPrefix(k, want.service+" ") && strings.HasSuffix(k, ": "+want.fault) {
					n += v
				}
			}
			if n == 0 {
				t.Errorf("no %s %s was injected: the fault was not exercised", want.service, want.fault)
			}
		}
	}
	for key := range crashedKeys(ups, crashes) {
		if f.records[key] == nil || f.records[key].ErrorCode != ledger.ErrorCodeOutcomeUnknown {
			t.Errorf("%q crashed after its call but is not recorded as outcome_unknown", key)
		}
	}
}

func crashedKeys(ups []*soakUpload, crashes *crashLedger) map[string]bool {
	keys := map[string]bool{}
	for _, u := range ups {
		if crashes.wasCrashed(u.obj.Key) {
			keys[u.obj.Key] = true
		}
	}
	return keys
}

// soakDeadline bounds the run generously: CI size in minutes, large runs
// scaled.
func soakDeadline(n int) time.Duration {
	return max(5*time.Minute, time.Duration(n)*100*time.Millisecond)
}

// uploadAll puts every object in S3 (in parallel) and deletes those meant
// to vanish before processing.
func uploadAll(t *testing.T, r *rig, ups []*soakUpload) {
	t.Helper()
	work := make(chan *soakUpload)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for u := range work {
				obj, err := r.putObject(u.obj.Key, u.body)
				if err == nil && u.deleted {
					err = r.deleteObject(obj)
				}
				if err != nil {
					t.Error(err)
				}
				u.obj = obj
				if !u.reupload {
					u.body = nil
				}
			}
		})
	}
	for _, u := range ups {
		work <- u
	}
	close(work)
	wg.Wait()
}

// keyLeaks counts the log lines and records that hold any key the secret
// ever held.
func keyLeaks(r *rig) int {
	items := r.scanTable()
	n := 0
	for _, k := range r.keys() {
		for _, l := range strings.Split(r.logs.String()+r.metrics.String(), "\n") {
			if strings.Contains(l, k) {
				n++
			}
		}
		n += strings.Count(items, k)
	}
	return n
}

// unknownFromLostWrite counts outcome_unknown uploads whose attempt did not
// crash yet recorded nothing: the record was finalised when the attempt's
// lease expired (ledger.Store.MarkOutcomeUnknown). Only a ledger write
// lost to a fault leaves an attempt without its outcome; the other
// outcome_unknown records are written by the attempt itself after the
// service's answer was lost (a drop, a gateway error, a timeout).
func unknownFromLostWrite(ups []*soakUpload, records map[string]*ledger.Record, crashes *crashLedger) int {
	n := 0
	for _, u := range ups {
		rec := records[u.obj.Key]
		if rec != nil && rec.ErrorCode == ledger.ErrorCodeOutcomeUnknown && !crashes.wasCrashed(u.obj.Key) &&
			strings.Contains(rec.ErrorMessage, "lease expired") {
			n++
		}
	}
	return n
}

// budgetCounter is the daily credit counter at the end, summed over the
// UTC days the run touched.
func budgetCounter(t *testing.T, r *rig, start time.Time) int {
	t.Helper()
	total := 0
	for _, day := range slices.Compact([]string{ledger.Day(start), ledger.Day(time.Now())}) {
		n, err := r.store.CreditsReserved(context.Background(), day)
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	return total
}

// firstCrashed is the key of a crashed upload.
func firstCrashed(ups []*soakUpload, crashes *crashLedger) string {
	for _, u := range ups {
		if crashes.wasCrashed(u.obj.Key) {
			return u.obj.Key
		}
	}
	return ""
}
