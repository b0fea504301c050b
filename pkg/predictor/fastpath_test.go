package predictor

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
)

// TestRequestsPerImage pins what one delivery costs in S3 and DynamoDB
// requests: the claim decides duplicates without a ledger read. With
// reuseResults=off one unranged GET both sniffs the format and streams the
// upload; with content (the default) that GET is read to its end for the
// digest, a photo of at most OnePassMaxBytes is uploaded from the bytes
// kept while hashing (one GET), a larger one opens the object again (two),
// and the content is claimed with one more write (a recorded answer leaves
// it unended: copies reuse the answer whatever the content item says).
func TestRequestsPerImage(t *testing.T) {
	tests := []struct {
		name     string
		body     func(t *testing.T) []byte
		twice    bool // deliver the message a second time
		reuseOff bool
		want     map[string]int
		status   string
		calls    int
		outcome  string
	}{
		{
			name: "image", body: func(t *testing.T) []byte { return testJPEG(t, 70) },
			want:   map[string]int{"s3.GetObject": 1, "dynamodb.UpdateItem": 2, "dynamodb.PutItem": 1},
			status: ledger.StatusSucceeded, calls: 1,
		},
		{
			name: "image over OnePassMaxBytes", body: jpegOfSize(OnePassMaxBytes + 1),
			want:   map[string]int{"s3.GetObject": 2, "dynamodb.UpdateItem": 2, "dynamodb.PutItem": 1},
			status: ledger.StatusSucceeded, calls: 1,
		},
		{
			name: "image of OnePassMaxBytes", body: jpegOfSize(OnePassMaxBytes),
			want:   map[string]int{"s3.GetObject": 1, "dynamodb.UpdateItem": 2, "dynamodb.PutItem": 1},
			status: ledger.StatusSucceeded, calls: 1,
		},
		{
			name: "image, reuse off", body: func(t *testing.T) []byte { return testJPEG(t, 73) }, reuseOff: true,
			want:   map[string]int{"s3.GetObject": 1, "dynamodb.UpdateItem": 1, "dynamodb.PutItem": 1},
			status: ledger.StatusSucceeded, calls: 1,
		},
		{
			name: "not an image", body: func(*testing.T) []byte { return []byte("plain text, long enough to be sniffed as not an image\n") },
			want:   map[string]int{"s3.GetObject": 1, "dynamodb.UpdateItem": 2},
			status: ledger.StatusRejected,
		},
		{
			name: "redelivered image", body: func(t *testing.T) []byte { return testJPEG(t, 71) }, twice: true,
			// The second delivery (SQS's redelivery: a receive count of 2)
			// costs one refused claim and nothing else.
			want:   map[string]int{"s3.GetObject": 1, "dynamodb.UpdateItem": 3, "dynamodb.PutItem": 1},
			status: ledger.StatusSucceeded, calls: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, func(c *Config) {
				if tt.reuseOff {
					c.ReuseResults = ReuseOff
				}
			})
			u := e.put("req/"+tt.name, tt.body(t))
			deliveries := 1
			if tt.twice {
				deliveries = 2
			}
			for i := range deliveries {
				msg := uploadMessage("m", u)
				msg.receives = i + 1
				if failed := e.invokeSQS(sqsBatch(msg)); len(failed) != 0 {
					t.Fatalf("failures %v", failed)
				}
			}
			got := map[string]int{}
			for _, op := range []string{"s3.HeadObject", "s3.GetObject", "s3.GetObjectRange",
				"dynamodb.GetItem", "dynamodb.PutItem", "dynamodb.UpdateItem", "dynamodb.Query"} {
				if n := e.requests.get(op); n != 0 {
					got[op] = n
				}
			}
			if !mapsEqual(got, tt.want) {
				t.Errorf("requests = %v, want %v", got, tt.want)
			}
			if rec := e.record(u); rec == nil || rec.Status != tt.status {
				t.Fatalf("record = %+v, want %s", rec, tt.status)
			}
			if n := e.sim.CallCount(); n != tt.calls {
				t.Errorf("%d service calls, want %d", n, tt.calls)
			}
		})
	}
}

// jpegOfSize is a JPEG of exactly size bytes carrying the sample EXIF.
func jpegOfSize(size int64) func(t *testing.T) []byte {
	return func(t *testing.T) []byte {
		t.Helper()
		var buf bytes.Buffer
		if n, err := exiftest.WriteLargeJPEG(&buf, size, exiftest.Harbour().Bytes()); err != nil || n != size {
			t.Fatalf("JPEG of %d bytes: wrote %d, %v", size, n, err)
		}
		return buf.Bytes()
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestRetriedAttemptReopensTheObject: the first HTTP attempt uploads the
// stream opened for sniffing, a retry opens the object again, and every
// attempt sends the whole image (reuseResults=off: with content, the
// sniffing stream is read for the digest, and every attempt uploads the
// bytes hashed (TestRetriedAttemptSendsTheHashedBytes) or, over
// OnePassMaxBytes, opens its own).
func TestRetriedAttemptReopensTheObject(t *testing.T) {
	e := newTestEnv(t, reuseOff)
	img := testJPEG(t, 72)
	u := e.put("retried.jpg", img)
	// 500s: free (the service's own error), so the client retries them.
	e.sim.SetFaults(geosim.Faults{ServerErrorRate: 1})
	e.sim.Reseed(1)
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m", u))); !slices.Equal(failed, []string{"m"}) {
		t.Fatalf("failures = %v, want [m]", failed)
	}
	if n := e.requests.get("s3.GetObject"); n != 2 {
		t.Errorf("%d GETs for two attempts, want 2", n)
	}
	if rec := e.record(u); rec.Status != ledger.StatusWaiting || !rec.Retryable || rec.ErrorCode != CodeServerError {
		t.Fatalf("record after 5xx = %+v", rec)
	}

	e.sim.ResetFaults()
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m", u))); len(failed) != 0 {
		t.Fatalf("redelivery failures %v", failed)
	}
	calls := e.predictCalls()
	if len(calls) != 3 {
		t.Fatalf("%d calls, want 3 (two refused attempts, one success)", len(calls))
	}
	for i, c := range calls {
		if c.BytesReceived != int64(len(img)) {
			t.Errorf("call %d uploaded %d bytes, want %d", i, c.BytesReceived, len(img))
		}
	}
	if rec := e.record(u); rec.Status != ledger.StatusSucceeded || rec.Attempts != 2 || rec.ContentType != "image/jpeg" {
		t.Errorf("record = %+v", rec)
	}
	if c := e.sim.Charged(geosim.DefaultOrg); c != 1 {
		t.Errorf("charged %d, want 1", c)
	}
}

// TestRetriedAttemptSendsTheHashedBytes: with reuseResults=content a photo
// within OnePassMaxBytes is read once, for the digest, and every attempt
// (here a 500 and its redelivery's success) uploads the bytes hashed,
// without opening the object again.
func TestRetriedAttemptSendsTheHashedBytes(t *testing.T) {
	e := newTestEnv(t, nil)
	u := e.put("retried.jpg", testJPEG(t, 74))
	e.sim.SetFaults(geosim.Faults{ServerErrorRate: 1})
	e.sim.Reseed(1)
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m", u))); !slices.Equal(failed, []string{"m"}) {
		t.Fatalf("failures = %v, want [m]", failed)
	}
	if n := e.requests.get("s3.GetObject"); n != 1 {
		t.Errorf("%d GETs for two attempts of one delivery, want 1", n)
	}
	e.sim.ResetFaults()
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m", u))); len(failed) != 0 {
		t.Fatalf("redelivery failures %v", failed)
	}
	if n := e.requests.get("s3.GetObject"); n != 2 {
		t.Errorf("%d GETs for two deliveries, want 2 (one each)", n)
	}
	rec := e.record(u)
	if rec.Status != ledger.StatusSucceeded || rec.ContentSHA256 == "" {
		t.Fatalf("record = %+v", rec)
	}
	calls := e.predictCalls()
	if len(calls) != 3 {
		t.Fatalf("%d calls, want 3 (two refused attempts, one success)", len(calls))
	}
	for i, c := range calls {
		if c.FileSHA256 != rec.ContentSHA256 {
			t.Errorf("call %d uploaded %s, the digest is %s", i, c.FileSHA256, rec.ContentSHA256)
		}
	}
}

// flakyObjects fails the next GetObject calls with a transient error.
type flakyObjects struct {
	ObjectStore
	failures atomic.Int32
}

var errS3Unavailable = errors.New("simulated S3 503: slow down")

func (f *flakyObjects) GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	if f.failures.Add(-1) >= 0 {
		return nil, errS3Unavailable
	}
	return f.ObjectStore.GetObject(ctx, in, optFns...)
}

// TestHeldClaimIsGivenBackWhenNoCallIsMade: every step between the claim and
// the call that cannot go on now leaves a retryable failure (nothing was
// charged) and returns the message, so the next delivery claims again and
// makes the one paid call.
func TestHeldClaimIsGivenBackWhenNoCallIsMade(t *testing.T) {
	tests := []struct {
		name string
		// setup prepares the handler for the first delivery and returns
		// how to restore it for the second.
		setup    func(e *testEnv) (restore func())
		wantCode string
	}{
		{
			name: "S3 error when opening",
			setup: func(e *testEnv) func() {
				flaky := &flakyObjects{ObjectStore: e.objects}
				flaky.failures.Store(1)
				e.objects = flaky
				e.cfg.DailyBudget = 5
				e.h = e.newHandler(e.cfg)
				return func() {}
			},
			wantCode: CodeStorage,
		},
		{
			name: "daily budget reached",
			setup: func(e *testEnv) func() {
				e.cfg.DailyBudget = 1
				e.h = e.newHandler(e.cfg)
				if ok, err := e.store.ReserveCredits(context.Background(), ledger.Day(time.Now()), 1, 1); err != nil || !ok {
					e.t.Fatalf("use up the budget: %v %v", ok, err)
				}
				return func() {
					if err := e.store.ReleaseCredits(context.Background(), ledger.Day(time.Now()), 1); err != nil {
						e.t.Fatal(err)
					}
				}
			},
			wantCode: retryBudget,
		},
		{
			// One call a minute and the only token taken: the slot a
			// minute away is held while the message waits in the queue,
			// and the next delivery, at the slot, calls in it.
			name: "call slot beyond the invocation's wait",
			setup: func(e *testEnv) func() {
				e.cfg.DailyBudget = 5
				e.cfg.RatePerMinute = 1
				clk := simclock.New(time.Now())
				e.useFakeClock(clk)
				if _, err := e.h.deps.Pacer.Reserve(context.Background(), pacer.Unbounded); err != nil { // take the only token
					e.t.Fatal(err)
				}
				return func() {
					rec := e.record(e.lastPut)
					if rec.SlotAt.IsZero() || rec.SlotAt.Sub(clk.Now()) < 59*time.Second {
						e.t.Fatalf("record holds slot %v at %v, want one a minute away", rec.SlotAt, clk.Now())
					}
					if d, want := e.visibility.delayed["m"], (rec.SlotAt.Sub(clk.Now()) - e.h.opts.HeldSlotLead).Truncate(time.Second); d != want {
						e.t.Errorf("message hidden for %v, want until HeldSlotLead before its slot in whole seconds, %v", d, want)
					}
					clk.Advance(rec.SlotAt.Sub(clk.Now()))
				}
			},
			wantCode: CodeRateWait,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, nil)
			u := e.put("held.jpg", testJPEG(t, 73))
			restore := tt.setup(e)
			reservedBefore := e.creditsReserved()
			if failed := e.invokeSQS(sqsBatch(uploadMessage("m", u))); !slices.Equal(failed, []string{"m"}) {
				t.Fatalf("failures = %v, want [m]", failed)
			}
			if n := e.sim.CallCount(); n != 0 {
				t.Errorf("%d calls, want none", n)
			}
			rec := e.record(u)
			if rec == nil || rec.Status != ledger.StatusWaiting || !rec.Retryable || rec.ErrorCode != tt.wantCode || rec.Owner == "" {
				t.Fatalf("record = %+v, want waiting, retryable, %s", rec, tt.wantCode)
			}
			if got := e.creditsReserved(); got != reservedBefore {
				t.Errorf("credits reserved = %d, was %d: the reservation was not given back", got, reservedBefore)
			}

			restore()
			if failed := e.invokeSQS(sqsBatch(uploadMessage("m", u))); len(failed) != 0 {
				t.Fatalf("redelivery failures %v", failed)
			}
			if rec := e.record(u); rec.Status != ledger.StatusSucceeded || rec.Attempts != 2 {
				t.Errorf("record after redelivery = %+v", rec)
			}
			if c := e.sim.Charged(geosim.DefaultOrg); c != 1 {
				t.Errorf("charged %d, want 1", c)
			}
		})
	}
}

func (e *testEnv) creditsReserved() int {
	e.t.Helper()
	n, err := e.store.CreditsReserved(context.Background(), ledger.Day(time.Now()))
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// gatedObjects signals each GET of the object's stream on got.
type gatedObjects struct {
	ObjectStore
	got chan struct{}
}

func (g gatedObjects) GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	select {
	case g.got <- struct{}{}:
	default:
	}
	return g.ObjectStore.GetObject(ctx, in, optFns...)
}

// claimWatcher reports, for each claim, whether a GET of the object came
// while the claim's write was under way: it waits up to wait for one
// before writing.
type claimWatcher struct {
	Ledger
	got        chan struct{}
	wait       time.Duration
	overlapped []bool
}

func (c *claimWatcher) Claim(ctx context.Context, ref ledger.ObjectRef, lease time.Duration) (*ledger.Claim, ledger.ClaimOutcome, error) {
	select {
	case <-c.got:
		c.overlapped = append(c.overlapped, true)
	case <-time.After(c.wait):
		c.overlapped = append(c.overlapped, false)
	}
	return c.Ledger.Claim(ctx, ref, lease)
}

// TestFirstDeliveryReadsBesideTheClaim: on a first delivery the object's
// GET runs while the claim is taken, so the pipeline's own time is the
// longer of the two; a redelivery, where a refused claim is likely, claims
// before any GET, and its refusal costs nothing else.
func TestFirstDeliveryReadsBesideTheClaim(t *testing.T) {
	e := newTestEnv(t, nil)
	got := make(chan struct{}, 1)
	e.objects = gatedObjects{ObjectStore: e.objects, got: got}
	w := &claimWatcher{got: got, wait: 200 * time.Millisecond}
	e.wrapLedger = func(l Ledger) Ledger { w.Ledger = l; return w }
	e.h = e.newHandler(e.cfg)

	u := e.put("beside/claim.jpg", testJPEG(t, 80))
	for i := range 2 {
		msg := uploadMessage("m", u)
		msg.receives = i + 1
		if failed := e.invokeSQS(sqsBatch(msg)); len(failed) != 0 {
			t.Fatalf("delivery %d: failures %v", i+1, failed)
		}
	}
	if want := []bool{true, false}; !slices.Equal(w.overlapped, want) {
		t.Errorf("GET under way during the claim, per delivery: %v, want %v", w.overlapped, want)
	}
	if n := e.requests.get("s3.GetObject"); n != 1 {
		t.Errorf("%d GETs, want 1: the redelivery's refused claim costs no read", n)
	}
	if rec := e.record(u); rec == nil || rec.Status != ledger.StatusSucceeded || rec.CreditsConsumed != 1 {
		t.Fatalf("record %+v, want succeeded once", rec)
	}
}
