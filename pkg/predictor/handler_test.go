package predictor

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
)

func TestSQSUploadProducesFullRecord(t *testing.T) {
	e := newTestEnv(t, nil)
	u := e.put("uploads/harbour at dusk.jpg", testJPEG(t, 1))

	if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", u))); len(failed) != 0 {
		t.Fatalf("batch item failures: %v", failed)
	}

	rec := e.record(u)
	if rec == nil {
		t.Fatal("no record")
	}
	if rec.Status != ledger.StatusSucceeded || rec.Bucket != e.bucket || rec.Key != u.Key ||
		rec.VersionID != u.VersionID || rec.ETag != u.ETag || rec.Size != u.Size || rec.ContentType != "image/jpeg" {
		t.Errorf("identity/status: %+v", rec)
	}
	if rec.ModelID != geosim.ModelGlobalDefault || rec.RequestedModelID != "" || rec.Fallback ||
		rec.PredictionID == "" || rec.CreditsConsumed != 1 || rec.ResultType != "coordinates" || rec.Attempts != 1 {
		t.Errorf("call fields: model %q requested %q fallback %v prediction %q credits %d type %q attempts %d",
			rec.ModelID, rec.RequestedModelID, rec.Fallback, rec.PredictionID, rec.CreditsConsumed, rec.ResultType, rec.Attempts)
	}
	if rec.Place == "" || rec.CountryCode == "" || rec.Latitude == nil || rec.Longitude == nil || rec.RadiusKM == nil {
		t.Errorf("top location not flattened: %+v", rec)
	}
	if len(rec.Clusters) != 5 || rec.Clusters[0].Name != rec.Place || rec.Clusters[0].Latitude != *rec.Latitude {
		t.Errorf("clusters = %+v (place %q)", rec.Clusters, rec.Place)
	}
	if rec.CreatedAt.IsZero() || rec.UpdatedAt.IsZero() || rec.Owner == "" || !rec.LeaseUntil.IsZero() {
		t.Errorf("bookkeeping: created %v updated %v lease %v", rec.CreatedAt, rec.UpdatedAt, rec.LeaseUntil)
	}

	calls := e.predictCalls()
	if len(calls) != 1 || calls[0].ModelRequested != "" || calls[0].BytesReceived != u.Size || calls[0].Charged != 1 {
		t.Errorf("service calls = %+v", calls)
	}
	if e.metricSum(metricImagesSucceeded) != 1 || e.metricSum(metricCreditsConsumed) != 1 {
		t.Errorf("metrics: succeeded %v credits %v", e.metricSum(metricImagesSucceeded), e.metricSum(metricCreditsConsumed))
	}
	// The same result counted by the model that ran: the dashboard's
	// models in use.
	if got := e.metricModel(metricImagesSucceeded, geosim.ModelGlobalDefault); got != 1 {
		t.Errorf("ImagesSucceeded by ModelId %s = %v, want 1", geosim.ModelGlobalDefault, got)
	}

	lines := e.logLines("prediction recorded")
	if len(lines) != 1 {
		t.Fatalf("%d 'prediction recorded' lines", len(lines))
	}
	l := lines[0]
	if l["bucket"] != e.bucket || l["key"] != u.Key || l["status"] != "succeeded" || l["place"] != rec.Place ||
		l["country"] != rec.CountryCode || l["latitude"] != *rec.Latitude || l["credits"] != float64(1) ||
		l["model_id"] != geosim.ModelGlobalDefault || l["request_id"] != "req-"+t.Name() {
		t.Errorf("log line = %v", l)
	}
}

func TestTopNIsSent(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.TopN = 3 })
	u := e.put("top-n.jpg", testJPEG(t, 2))
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", u))); len(failed) != 0 {
		t.Fatalf("failures %v", failed)
	}
	rec := e.record(u)
	if rec.Status != ledger.StatusSucceeded || len(rec.Clusters) != 3 {
		t.Errorf("record status %s, %d clusters", rec.Status, len(rec.Clusters))
	}
	if calls := e.predictCalls(); len(calls) != 1 || calls[0].TopN != 3 {
		t.Errorf("calls = %+v", calls)
	}
}

// TestOnlySQSBatchesAreProcessed: the stack invokes the function through
// the queue only. A direct S3 event, or an EventBridge event, is refused
// with an error that says how to invoke it, and nothing is processed.
func TestOnlySQSBatchesAreProcessed(t *testing.T) {
	e := newTestEnv(t, nil)
	u := e.put("direct.jpg", testJPEG(t, 70))
	eventBridge := `{"version":"0","detail-type":"Object Created","source":"aws.s3","detail":{"bucket":{"name":"` +
		u.Bucket + `"},"object":{"key":"direct.jpg","size":1}}}`
	for name, payload := range map[string][]byte{"S3 event": s3Event(u), "EventBridge event": []byte(eventBridge)} {
		out, err := e.invoke(payload)
		if err == nil || !strings.Contains(err.Error(), "not an SQS batch") || !strings.Contains(err.Error(), "events/sqs-s3-put.json") {
			t.Errorf("%s: response %s, error %v; want a refusal saying how to invoke", name, out, err)
		}
	}
	if rec := e.record(u); rec != nil || e.sim.CallCount() != 0 {
		t.Errorf("record %+v, %d calls: nothing may be processed", rec, e.sim.CallCount())
	}
}

func TestRedeliveryIsANoOp(t *testing.T) {
	e := newTestEnv(t, nil)
	u := e.put("again.jpg", testJPEG(t, 3))
	batch := sqsBatch(uploadMessage("m1", u))
	for i := range 3 {
		if failed := e.invokeSQS(batch); len(failed) != 0 {
			t.Fatalf("delivery %d: failures %v", i+1, failed)
		}
	}
	if n := len(e.predictCalls()); n != 1 {
		t.Errorf("%d calls for three deliveries, want 1", n)
	}
	if c := e.sim.Charged(geosim.DefaultOrg); c != 1 {
		t.Errorf("charged %d, want 1", c)
	}
	if d := e.metricSum(metricDuplicatesSkipped); d != 2 {
		t.Errorf("duplicates skipped = %v, want 2", d)
	}
}

func TestConcurrentDeliveriesMakeOneCall(t *testing.T) {
	e := newTestEnv(t, nil)
	u := e.put("race.jpg", testJPEG(t, 4))
	batch := sqsBatch(uploadMessage("m1", u))

	const deliveries = 10
	var wg sync.WaitGroup
	retried := make([]bool, deliveries)
	for i := range deliveries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			retried[i] = len(e.invokeSQS(batch)) > 0
		}()
	}
	wg.Wait()
	if n := len(e.predictCalls()); n != 1 {
		t.Fatalf("%d calls for %d concurrent deliveries, want 1", n, deliveries)
	}
	// A delivery that found the claim busy returned its message; redeliver
	// those, as SQS would: they find the record done.
	for i, r := range retried {
		if r {
			if failed := e.invokeSQS(batch); len(failed) != 0 {
				t.Errorf("redelivery of %d still fails: %v", i, failed)
			}
		}
	}
	if n, c := len(e.predictCalls()), e.sim.Charged(geosim.DefaultOrg); n != 1 || c != 1 {
		t.Errorf("after redeliveries: %d calls, %d charged; want 1 and 1", n, c)
	}
	if rec := e.record(u); rec.Status != ledger.StatusSucceeded || rec.Attempts != 1 {
		t.Errorf("record %s attempts %d", rec.Status, rec.Attempts)
	}
}

func TestBatchReportsExactlyTheFailingMessages(t *testing.T) {
	e := newTestEnv(t, nil)
	good := e.put("good.jpg", testJPEG(t, 5))
	busy := e.put("busy.jpg", testJPEG(t, 6))
	// Another delivery holds busy.jpg right now.
	if _, got, err := e.store.Claim(t.Context(), ledger.ObjectRef{Bucket: busy.Bucket, Key: busy.Key, VersionID: busy.VersionID, ETag: busy.ETag}, DefaultClaimLease); err != nil || got != ledger.ClaimAcquired {
		t.Fatalf("pre-claim: %v %v", got, err)
	}
	folder := e.put("uploads/2026/", nil)

	failed := e.invokeSQS(sqsBatch(
		uploadMessage("good", good),
		sqsMessage{id: "malformed", body: `{"Records": [ this is not json`},
		uploadMessage("busy", busy),
		sqsMessage{id: "test-event", body: `{"Service":"Amazon S3","Event":"s3:TestEvent","Bucket":"` + e.bucket + `"}`},
		uploadMessage("folder", folder),
		sqsMessage{id: "removed", body: `{"Records":[{"eventSource":"aws:s3","eventName":"ObjectRemoved:Delete","s3":{"bucket":{"name":"b"},"object":{"key":"x.jpg"}}}]}`},
	))
	slices.Sort(failed)
	if !slices.Equal(failed, []string{"busy", "malformed"}) {
		t.Errorf("batch item failures = %v, want [busy malformed]", failed)
	}
	if n := len(e.predictCalls()); n != 1 {
		t.Errorf("%d calls, want 1 (good.jpg only)", n)
	}
	if rec := e.record(good); rec.Status != ledger.StatusSucceeded {
		t.Errorf("good.jpg: %s", rec.Status)
	}
	if rec := e.record(folder); rec.Status != ledger.StatusRejected || rec.ErrorCode != ReasonFolderMarker {
		t.Errorf("folder marker: %+v", rec)
	}
}

func TestKeyWithSpacesPlusPercentAndUnicode(t *testing.T) {
	e := newTestEnv(t, nil)
	key := "uploads/café résumé + 100% sûr/東京 photo.jpg"
	u := e.put(key, testJPEG(t, 7))
	msg := uploadMessage("m1", u)
	if failed := e.invokeSQS(sqsBatch(msg)); len(failed) != 0 {
		t.Fatalf("failures %v", failed)
	}
	rec := e.record(u)
	if rec == nil || rec.Status != ledger.StatusSucceeded || rec.Key != key {
		t.Fatalf("record = %+v", rec)
	}
	if len(e.predictCalls()) != 1 {
		t.Errorf("calls = %d", len(e.predictCalls()))
	}
}

func TestRejectedInputsMakeNoCall(t *testing.T) {
	tests := []struct {
		name   string
		key    string
		body   []byte
		edit   func(e *testEnv, u *upload)
		reason string
	}{
		{name: "folder marker", key: "photos/", body: nil, reason: ReasonFolderMarker},
		{name: "zero bytes", key: "empty.jpg", body: []byte{}, reason: ReasonEmptyObject},
		{
			name: "too large by the event's size", key: "huge.jpg", body: testJPEG(t, 8), reason: ReasonTooLarge,
			edit: func(_ *testEnv, u *upload) { u.Size = 10*1024*1024 + 1 },
		},
		{name: "not an image", key: "notes.jpg", body: []byte("these are plain text notes, not a photograph at all\n"), reason: ReasonNotAnImage},
		{
			name: "deleted before processing", key: "gone.jpg", body: testJPEG(t, 9), reason: ReasonObjectNotFound,
			edit: func(e *testEnv, u *upload) { e.deleteVersion(*u) },
		},
		{
			name: "size unknown and object deleted", key: "gone2.jpg", body: testJPEG(t, 10), reason: ReasonObjectNotFound,
			edit: func(e *testEnv, u *upload) { e.deleteVersion(*u); u.SizeKnown, u.Size = false, 0 },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// oversize=reject: the size alone decides, before any read (the
			// downscale path is tested in photo_test.go).
			e := newTestEnv(t, func(c *Config) { c.Oversize = OversizeReject })
			u := e.put(tt.key, tt.body)
			if tt.edit != nil {
				tt.edit(e, &u)
			}
			if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", u))); len(failed) != 0 {
				t.Fatalf("failures %v", failed)
			}
			if n := e.sim.CallCount(); n != 0 {
				t.Errorf("%d service calls, want none", n)
			}
			rec := e.record(u)
			if rec == nil || rec.Status != ledger.StatusRejected || rec.ErrorCode != tt.reason || rec.ErrorMessage == "" {
				t.Fatalf("record = %+v", rec)
			}
			if got := e.metricReason(metricImagesRejected, tt.reason); got != 1 {
				t.Errorf("ImagesRejected{Reason=%s} = %v", tt.reason, got)
			}
			if lines := e.logLines("prediction recorded"); len(lines) != 1 || lines[0]["status"] != "rejected" {
				t.Errorf("recorded lines = %v", lines)
			}
		})
	}
}

func TestOtherBucketIsIgnored(t *testing.T) {
	e := newTestEnv(t, nil)
	u := e.put("x.jpg", testJPEG(t, 11))
	u.Bucket = "someone-elses-bucket"
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", u))); len(failed) != 0 || e.sim.CallCount() != 0 {
		t.Errorf("failures %v, calls %d; want acknowledged without a call", failed, e.sim.CallCount())
	}
	if n := len(e.logLines("ignored: not the configured bucket")); n != 1 {
		t.Errorf("%d lines saying the bucket is ignored, want 1", n)
	}
}

func TestRegeneratedKeyTakesEffectAfterOneRefresh(t *testing.T) {
	e := newTestEnv(t, nil)
	first := e.put("before.jpg", testJPEG(t, 12))
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", first))); len(failed) != 0 {
		t.Fatalf("failures %v", failed)
	}

	newKey := e.sim.RegenerateKey(fakeKey)
	if newKey == "" {
		t.Fatal("regenerate key failed")
	}
	e.keys.rotate(newKey)

	second := e.put("after.jpg", testJPEG(t, 13))
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m2", second))); len(failed) != 0 {
		t.Fatalf("failures after rotation %v", failed)
	}
	if rec := e.record(second); rec.Status != ledger.StatusSucceeded {
		t.Errorf("after rotation: %+v", rec)
	}
	if n := e.keys.refreshCount(); n != 1 {
		t.Errorf("%d refreshes, want 1", n)
	}
	calls := e.predictCalls()
	statuses := []int{}
	for _, c := range calls {
		statuses = append(statuses, c.Status)
	}
	if !slices.Equal(statuses, []int{200, 401, 200}) {
		t.Errorf("call statuses = %v, want [200 401 200]", statuses)
	}
	if c := e.sim.Charged(geosim.DefaultOrg); c != 2 {
		t.Errorf("charged %d, want 2", c)
	}
}

func TestOutOfCreditsStopsTheBatchAndLosesNothing(t *testing.T) {
	e := newTestEnv(t, nil, func(c *geosim.Config) { c.Allowance = 2 })
	e.h = e.newHandler(e.cfg, func(o *Options) { o.Parallelism = 1 })
	var ups []upload
	var msgs []sqsMessage
	for i := range 4 {
		u := e.put("credit-"+string(rune('a'+i))+".jpg", testJPEG(t, 20+i))
		ups = append(ups, u)
		msgs = append(msgs, uploadMessage("m"+string(rune('1'+i)), u))
	}
	failed := e.invokeSQS(sqsBatch(msgs...))
	if !slices.Equal(failed, []string{"m3", "m4"}) {
		t.Fatalf("failures = %v, want [m3 m4]", failed)
	}
	if n := len(e.predictCalls()); n != 3 {
		t.Errorf("%d calls, want 3 (two paid, one 402, none after)", n)
	}
	if rec := e.record(ups[2]); rec.Status != ledger.StatusWaiting || !rec.Retryable || rec.ErrorCode != CodeOutOfCredits {
		t.Errorf("third record = %+v", rec)
	}
	if rec := e.record(ups[3]); rec != nil {
		t.Errorf("fourth object was touched: %+v", rec)
	}
	if e.metricSum(metricOutOfCredits) != 1 {
		t.Errorf("OutOfCredits = %v", e.metricSum(metricOutOfCredits))
	}

	if err := e.sim.TopUp(geosim.DefaultOrg, 10); err != nil {
		t.Fatal(err)
	}
	if failed := e.invokeSQS(sqsBatch(msgs[2], msgs[3])); len(failed) != 0 {
		t.Fatalf("after top-up: failures %v", failed)
	}
	for i, u := range ups {
		if rec := e.record(u); rec.Status != ledger.StatusSucceeded || rec.CreditsConsumed != 1 {
			t.Errorf("object %d: %+v", i, rec)
		}
	}
	if c := e.sim.Charged(geosim.DefaultOrg); c != 4 {
		t.Errorf("charged %d, want 4 (one per object)", c)
	}
}

func TestRetiredModelFallsBack(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.ModelID = geosim.ModelRetired })
	first := e.put("first.jpg", testJPEG(t, 30))
	second := e.put("second.jpg", testJPEG(t, 31))
	for i, u := range []upload{first, second} {
		if failed := e.invokeSQS(sqsBatch(uploadMessage("m", u))); len(failed) != 0 {
			t.Fatalf("object %d: failures %v", i, failed)
		}
		rec := e.record(u)
		if rec.Status != ledger.StatusSucceeded || !rec.Fallback || rec.RequestedModelID != geosim.ModelRetired ||
			rec.ModelID != geosim.ModelGlobalDefault {
			t.Errorf("object %d: status %s fallback %v requested %q ran %q", i, rec.Status, rec.Fallback, rec.RequestedModelID, rec.ModelID)
		}
	}
	var requested []string
	for _, c := range e.predictCalls() {
		requested = append(requested, c.ModelRequested)
	}
	// The first object learns the model is retired (422, not charged); the
	// second goes straight to the default model.
	if !slices.Equal(requested, []string{geosim.ModelRetired, "", ""}) {
		t.Errorf("models requested = %q", requested)
	}
	if c := e.sim.Charged(geosim.DefaultOrg); c != 2 {
		t.Errorf("charged %d, want 2", c)
	}
	if f := e.metricSum(metricModelFallbacks); f != 2 {
		t.Errorf("ModelFallbacks = %v, want 2", f)
	}
}

func TestRetiredModelWithoutFallbackFailsFinal(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.ModelID = geosim.ModelRetired; c.ModelFallback = false })
	u := e.put("strict.jpg", testJPEG(t, 32))
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m", u))); len(failed) != 0 {
		t.Fatalf("a final failure must be acknowledged, got failures %v", failed)
	}
	rec := e.record(u)
	if rec.Status != ledger.StatusFailed || rec.Retryable || rec.ErrorCode != CodeModelRetired {
		t.Errorf("record = %+v", rec)
	}
	if n, c := len(e.predictCalls()), e.sim.Charged(geosim.DefaultOrg); n != 1 || c != 0 {
		t.Errorf("%d calls, %d charged; want 1 and 0", n, c)
	}
	if e.metricReason(metricImagesFailed, CodeModelRetired) != 1 {
		t.Errorf("ImagesFailed{model_retired} missing")
	}
	// A redelivery does not call again.
	e.invokeSQS(sqsBatch(uploadMessage("m", u)))
	if n := len(e.predictCalls()); n != 1 {
		t.Errorf("redelivery called again: %d calls", n)
	}
}

func TestOtherModelsResultShapes(t *testing.T) {
	tests := []struct {
		model, resultType string
		credits           int
	}{
		{geosim.ModelHighAccuracy, "accuracy", 3},
		{geosim.ModelVehicle, "vehicle", 2},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			e := newTestEnv(t, func(c *Config) { c.ModelID = tt.model; c.DailyBudget = 100 })
			u := e.put("m.jpg", testJPEG(t, 40))
			if failed := e.invokeSQS(sqsBatch(uploadMessage("m", u))); len(failed) != 0 {
				t.Fatalf("failures %v", failed)
			}
			rec := e.record(u)
			if rec.Status != ledger.StatusSucceeded || rec.ModelID != tt.model || rec.ResultType != tt.resultType ||
				rec.CreditsConsumed != tt.credits {
				t.Fatalf("record = %+v", rec)
			}
			switch tt.resultType {
			case "accuracy":
				if len(rec.Predictions) == 0 || rec.Confidence == nil || rec.RadiusKM != nil || rec.Place == "" || rec.RawResult != "" {
					t.Errorf("accuracy record = %+v", rec)
				}
			default:
				if rec.RawResult == "" || len(rec.Clusters) != 0 {
					t.Errorf("unknown result type not kept raw: %+v", rec)
				}
			}
			// The budget counter holds exactly what was charged.
			reserved, err := e.store.CreditsReserved(t.Context(), ledger.Day(e.h.opts.Clock()))
			if err != nil || reserved != tt.credits {
				t.Errorf("budget counter = %d (%v), want %d", reserved, err, tt.credits)
			}
		})
	}
}

func TestDailyBudgetDefersMessages(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.DailyBudget = 2 })
	e.h = e.newHandler(e.cfg, func(o *Options) { o.Parallelism = 1 })
	var msgs []sqsMessage
	for i := range 3 {
		msgs = append(msgs, uploadMessage("m"+string(rune('1'+i)), e.put("b"+string(rune('1'+i))+".jpg", testJPEG(t, 50+i))))
	}
	failed := e.invokeSQS(sqsBatch(msgs...))
	if !slices.Equal(failed, []string{"m3"}) {
		t.Errorf("failures = %v, want [m3]", failed)
	}
	if n := len(e.predictCalls()); n != 2 {
		t.Errorf("%d calls, want 2", n)
	}
	if e.metricSum(metricBudgetDeferred) != 1 {
		t.Errorf("BudgetDeferred = %v", e.metricSum(metricBudgetDeferred))
	}
	if d := e.visibility.delayed["m3"]; d <= 0 {
		t.Errorf("deferred message not delayed: %v", e.visibility.delayed)
	}
}

func TestCrashedAttemptIsNeverCalledAgain(t *testing.T) {
	e := newTestEnv(t, nil)
	u := e.put("crashed.jpg", testJPEG(t, 60))
	// An attempt an hour ago claimed the object and vanished (maybe after
	// the service charged): its 15-minute lease has expired.
	past := ledger.New(e.storeClient(), e.cfg.TableName, func(o *ledger.Options) {
		o.Clock = func() time.Time { return time.Now().Add(-time.Hour) }
	})
	ref := ledger.ObjectRef{Bucket: u.Bucket, Key: u.Key, VersionID: u.VersionID, ETag: u.ETag}
	if _, got, err := past.Claim(t.Context(), ref, DefaultClaimLease); err != nil || got != ledger.ClaimAcquired {
		t.Fatalf("claim: %v %v", got, err)
	}

	if failed := e.invokeSQS(sqsBatch(uploadMessage("m", u))); len(failed) != 0 {
		t.Fatalf("failures %v", failed)
	}
	if n := e.sim.CallCount(); n != 0 {
		t.Errorf("%d calls, want none", n)
	}
	rec := e.record(u)
	if rec.Status != ledger.StatusFailed || rec.Retryable || rec.ErrorCode != ledger.ErrorCodeOutcomeUnknown {
		t.Errorf("record = %+v", rec)
	}
}

func TestSQSResponseShape(t *testing.T) {
	// An all-good batch must answer an empty list, not null: Lambda reads
	// a null batchItemFailures as "all succeeded" too, but an explicit
	// empty list is unambiguous.
	e := newTestEnv(t, nil)
	out, err := e.invoke(sqsBatch(sqsMessage{id: "t", body: `{"Event":"s3:TestEvent"}`}))
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"batchItemFailures":[]}` {
		t.Errorf("response = %s", out)
	}
}

func TestLostAnswerAfterChargeIsNeverCalledAgain(t *testing.T) {
	e := newTestEnv(t, nil)
	e.sim.SetFaults(geosim.Faults{DropAfterChargeRate: 1})
	u := e.put("lost-answer.jpg", testJPEG(t, 21))
	batch := sqsBatch(uploadMessage("m1", u))

	// The service charged, then the connection died: the outcome is unknown,
	// which is final. Neither the client nor a redelivery may pay again.
	if failed := e.invokeSQS(batch); len(failed) != 0 {
		t.Fatalf("failures %v, want the message acknowledged", failed)
	}
	e.sim.ResetFaults()
	if failed := e.invokeSQS(batch); len(failed) != 0 {
		t.Fatalf("redelivery failures %v", failed)
	}
	rec := e.record(u)
	if rec == nil || rec.Status != ledger.StatusFailed || rec.ErrorCode != CodeOutcomeUnknown || rec.Retryable {
		t.Fatalf("record = %+v, want final failed/%s", rec, CodeOutcomeUnknown)
	}
	if n, c := len(e.predictCalls()), e.sim.Charged(geosim.DefaultOrg); n != 1 || c != 1 {
		t.Errorf("calls = %d, charged = %d; want exactly one of each", n, c)
	}
}
