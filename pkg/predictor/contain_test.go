package predictor

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// panickingObjects panics on the GET of one key, as a parser bug on that
// object's bytes would, before any call.
type panickingObjects struct {
	ObjectStore
	key string
}

func (p panickingObjects) GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	if *in.Key == p.key {
		panic("index out of range [4] with length 4")
	}
	return p.ObjectStore.GetObject(ctx, in, optFns...)
}

// panickingService panics while the call of an image of one size is under
// way: after the upload, the service may have charged.
type panickingService struct {
	Service
	size int64
}

func (p panickingService) Predict(ctx context.Context, in *geoapi.PredictInput, optFns ...func(*geoapi.Options)) (*geoapi.PredictOutput, error) {
	out, err := p.Service.Predict(ctx, in, optFns...)
	if in.Size == p.size {
		panic("nil map in the answer's decoder")
	}
	return out, err
}

// panickingLedger panics when recording the result of one key: the service
// has charged for it.
type panickingLedger struct {
	Ledger
	key string
}

func (p panickingLedger) Complete(ctx context.Context, claim *ledger.Claim, rec ledger.Record) error {
	if claim.Ref.Key == p.key {
		panic("recording the result")
	}
	return p.Ledger.Complete(ctx, claim, rec)
}

// TestAPanicIsContainedInItsObject: a panic while processing one object is
// recovered in that object's worker, logged with its bucket, key and stack,
// and ends in a true record; the batch's other objects are geolocated and
// recorded. Before the call it is a final rejection with its own reason
// (the same bytes would panic again); once the call is under way, or has
// charged, it is final and never called again (outcome_unknown).
func TestAPanicIsContainedInItsObject(t *testing.T) {
	tests := []struct {
		name       string
		inject     func(e *testEnv, boom upload)
		wantStatus string
		wantCode   string
		wantCalls  int // calls for the panicking object
	}{
		{"before the call", func(e *testEnv, boom upload) {
			e.objects = panickingObjects{ObjectStore: e.objects, key: boom.Key}
		}, ledger.StatusRejected, ReasonProcessingPanic, 0},
		{"during the call", func(e *testEnv, boom upload) {
			e.wrapService = func(s Service) Service { return panickingService{Service: s, size: boom.Size} }
		}, ledger.StatusFailed, CodeOutcomeUnknown, 1},
		{"recording a charged result", func(e *testEnv, boom upload) {
			e.wrapLedger = func(l Ledger) Ledger { return panickingLedger{Ledger: l, key: boom.Key} }
		}, ledger.StatusFailed, CodeOutcomeUnknown, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, nil)
			first := e.put("first.jpg", testJPEG(t, 500))
			boom := e.put("boom.jpg", append(testJPEG(t, 501), make([]byte, 17)...)) // a size of its own
			last := e.put("last.jpg", testJPEG(t, 502))
			tt.inject(e, boom)
			e.h = e.newHandler(e.cfg)
			batch := sqsBatch(uploadMessage("m1", first), uploadMessage("m2", boom), uploadMessage("m3", last))
			if failed := e.invokeSQS(batch); len(failed) != 0 {
				t.Fatalf("failures %v: every message has a final record", failed)
			}
			for _, u := range []upload{first, last} {
				if rec := e.record(u); rec == nil || rec.Status != ledger.StatusSucceeded {
					t.Errorf("%s: record %+v, want succeeded beside the panic", u.Key, rec)
				}
			}
			rec := e.record(boom)
			if rec == nil || rec.Status != tt.wantStatus || rec.ErrorCode != tt.wantCode || !rec.Final() {
				t.Fatalf("panicking object's record = %+v, want final %s/%s", rec, tt.wantStatus, tt.wantCode)
			}
			lines := e.logLines("processing the object panicked: contained, the batch goes on")
			if len(lines) != 1 {
				t.Fatalf("%d panic lines, want 1", len(lines))
			}
			l := lines[0]
			if l["bucket"] != boom.Bucket || l["key"] != boom.Key || !strings.Contains(l["stack"].(string), "runtime/debug.Stack") ||
				!strings.Contains(l["stack"].(string), "contain_test.go") {
				t.Errorf("panic line = %v, want bucket, key and the stack", l)
			}
			calls := len(e.predictCalls())
			if calls != 2+tt.wantCalls {
				t.Errorf("%d calls, want %d", calls, 2+tt.wantCalls)
			}
			// Redelivered, the panicking object is never called again.
			if failed := e.invokeSQS(sqsBatch(uploadMessage("m2", boom))); len(failed) != 0 {
				t.Errorf("redelivery failures %v", failed)
			}
			if n := len(e.predictCalls()); n != calls {
				t.Errorf("%d calls after the redelivery, want still %d", n, calls)
			}
			if n := e.metricReason(metricImagesRejected, ReasonProcessingPanic) + e.metricReason(metricImagesFailed, CodeOutcomeUnknown); n != 1 {
				t.Errorf("the contained panic was counted %v times, want once", n)
			}
		})
	}
}

// countingPacer counts the slots taken.
type countingPacer struct {
	Pacer
	reserves atomic.Int32
}

func (c *countingPacer) Reserve(ctx context.Context, within time.Duration) (time.Duration, error) {
	c.reserves.Add(1)
	return c.Pacer.Reserve(ctx, within)
}

// countingBudget counts the budget reservations.
type countingBudget struct {
	Ledger
	reservations *atomic.Int32
}

func (c countingBudget) ReserveCredits(ctx context.Context, day string, credits, budget int) (bool, error) {
	c.reservations.Add(1)
	return c.Ledger.ReserveCredits(ctx, day, credits, budget)
}

// TestASkippedPhotoTakesNoSlotAndNoBudget: with exifGps=skip a photo with
// a valid EXIF position is recorded from it before any budget or call slot
// is taken; a photo without one takes one of each.
func TestASkippedPhotoTakesNoSlotAndNoBudget(t *testing.T) {
	e := newTestEnv(t, func(c *Config) { c.ExifGPS = ExifGPSSkip; c.DailyBudget = 10 })
	var reservations atomic.Int32
	e.wrapLedger = func(l Ledger) Ledger { return countingBudget{Ledger: l, reservations: &reservations} }
	e.h = e.newHandler(e.cfg)
	pace := &countingPacer{Pacer: e.h.deps.Pacer}
	e.h.deps.Pacer = pace
	skipped := e.put("harbour.jpg", harbourJPEG())
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", skipped))); len(failed) != 0 {
		t.Fatalf("failures %v", failed)
	}
	if rec := e.record(skipped); rec.Source != ledger.SourceEXIF {
		t.Fatalf("record = %+v, want recorded from EXIF", rec)
	}
	if n := pace.reserves.Load(); n != 0 {
		t.Errorf("%d call slots taken for a photo that makes no call, want 0", n)
	}
	if n := reservations.Load(); n != 0 {
		t.Errorf("%d budget reservations for a photo that makes no call, want 0", n)
	}
	called := e.put("no-gps.jpg", testJPEG(t, 503))
	if failed := e.invokeSQS(sqsBatch(uploadMessage("m2", called))); len(failed) != 0 {
		t.Fatalf("failures %v", failed)
	}
	if n, b := pace.reserves.Load(), reservations.Load(); n != 1 || b != 1 {
		t.Errorf("%d call slots and %d budget reservations for a photo without a position, want 1 of each", n, b)
	}
}

// TestARejectedFileTakesNoSlotAndNoBudget: a file the predictor refuses
// from its first bytes (not an image, a header that cannot be stripped) is
// rejected before any budget or call slot is taken: it leaves no empty slot
// in the schedule every instance shares, and is never held for one.
func TestARejectedFileTakesNoSlotAndNoBudget(t *testing.T) {
	for _, tc := range []struct {
		name, reason string
		body         []byte
	}{
		{"not an image", ReasonNotAnImage, []byte("these are plain text notes, not a photograph at all\n")},
		{"gif under strip", ReasonCannotStripMetadata, append([]byte("GIF89a\x10\x00\x10\x00\x00\x00\x00"), make([]byte, 64)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestEnv(t, func(c *Config) { c.DailyBudget = 10 })
			var reservations atomic.Int32
			e.wrapLedger = func(l Ledger) Ledger { return countingBudget{Ledger: l, reservations: &reservations} }
			e.h = e.newHandler(e.cfg)
			pace := &countingPacer{Pacer: e.h.deps.Pacer}
			e.h.deps.Pacer = pace
			u := e.put("upload.jpg", tc.body)
			if failed := e.invokeSQS(sqsBatch(uploadMessage("m1", u))); len(failed) != 0 {
				t.Fatalf("failures %v", failed)
			}
			if rec := e.record(u); rec == nil || rec.Status != ledger.StatusRejected || rec.ErrorCode != tc.reason {
				t.Fatalf("record %+v, want rejected %s", rec, tc.reason)
			}
			if n, b := pace.reserves.Load(), reservations.Load(); n != 0 || b != 0 {
				t.Errorf("%d call slots and %d budget reservations for a file refused from its first bytes, want 0 of each", n, b)
			}
		})
	}
}
