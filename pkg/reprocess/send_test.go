package reprocess

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/shared/reprocessmsg"
)

// fakeClock is a clock whose Sleep moves it on at once: the tests sleep
// for no real time.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.now = c.now.Add(d)
	return nil
}

// fakeQueue records each request's time and bodies; latency moves the
// clock on by that much per request, as a real SendMessageBatch takes time.
type fakeQueue struct {
	clock   *fakeClock
	latency time.Duration
	at      []time.Time
	bodies  [][]string
	// onSend runs before a request is recorded (to cancel, say).
	onSend func(ctx context.Context) error
}

func (q *fakeQueue) send(ctx context.Context, entries []sqstypes.SendMessageBatchRequestEntry) error {
	if q.onSend != nil {
		if err := q.onSend(ctx); err != nil {
			return err
		}
	}
	q.at = append(q.at, q.clock.now)
	var b []string
	for _, e := range entries {
		b = append(b, aws.ToString(e.MessageBody))
	}
	q.bodies = append(q.bodies, b)
	q.clock.now = q.clock.now.Add(q.latency)
	return nil
}

func (q *fakeQueue) sizes() []int {
	var n []int
	for _, b := range q.bodies {
		n = append(n, len(b))
	}
	return n
}

var t0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func bodiesN(n int) []string {
	b := make([]string, n)
	for i := range b {
		b[i] = fmt.Sprintf("m%d", i)
	}
	return b
}

func newFakes(latency time.Duration) (*fakeClock, *fakeQueue) {
	c := &fakeClock{now: t0}
	return c, &fakeQueue{clock: c, latency: latency}
}

func withClock(c *fakeClock, perMinute float64) func(*Options) {
	return func(o *Options) { o.PerMinute, o.Clock, o.Sleep = perMinute, c.Now, c.Sleep }
}

// TestSendPacesAtTheRate: at 30 a minute, 30 messages go one per request,
// message i exactly 2i seconds after the first, in order.
func TestSendPacesAtTheRate(t *testing.T) {
	clock, q := newFakes(0)
	p, err := New(q.send, withClock(clock, 30)).Send(context.Background(), bodiesN(30))
	if err != nil || p.Sent != 30 || p.Batches != 30 {
		t.Fatalf("sent %+v, %v; want 30 in 30 requests", p, err)
	}
	for i, at := range q.at {
		if want := t0.Add(time.Duration(i) * 2 * time.Second); !at.Equal(want) || q.bodies[i][0] != fmt.Sprintf("m%d", i) {
			t.Fatalf("request %d at %v with %v; want m%d at %v", i, at.Sub(t0), q.bodies[i], i, want.Sub(t0))
		}
	}
}

// TestSendCatchesUpWhenSendingIsSlow: when a request takes longer than the
// interval, each request sends every message due (at most 10), so the run
// keeps the rate and no message goes before its time.
func TestSendCatchesUpWhenSendingIsSlow(t *testing.T) {
	clock, q := newFakes(250 * time.Millisecond)
	const perMinute = 600 // one due every 100 ms
	p, err := New(q.send, withClock(clock, perMinute)).Send(context.Background(), bodiesN(100))
	if err != nil || p.Sent != 100 {
		t.Fatalf("sent %+v, %v", p, err)
	}
	sent := 0
	for i, at := range q.at {
		if n := len(q.bodies[i]); n > BatchMax || n < 1 {
			t.Fatalf("request %d holds %d messages", i, n)
		}
		// The last message of the request was due by then.
		last := sent + len(q.bodies[i]) - 1
		if due := t0.Add(time.Duration(last) * 100 * time.Millisecond); at.Before(due) {
			t.Fatalf("message %d sent at %v, before it was due at %v", last, at.Sub(t0), due.Sub(t0))
		}
		sent += len(q.bodies[i])
	}
	// 100 messages due over 9.9 s: sent within a request of the last's due time.
	if end := q.at[len(q.at)-1].Sub(t0); end > 9900*time.Millisecond+250*time.Millisecond {
		t.Errorf("last request at %v: the slow sends fell behind the rate", end)
	}
	if len(q.at) > 50 {
		t.Errorf("%d requests for 100 messages at 250 ms each: not catching up in batches", len(q.at))
	}
}

// TestSendAllAtOnce: rate 0 sends in batches of 10 without waiting.
func TestSendAllAtOnce(t *testing.T) {
	clock, q := newFakes(0)
	p, err := New(q.send, withClock(clock, 0)).Send(context.Background(), bodiesN(23))
	if err != nil || p.Sent != 23 || !slices.Equal(q.sizes(), []int{10, 10, 3}) || !clock.now.Equal(t0) {
		t.Errorf("sent %+v, %v in batches %v, clock moved %v; want 23 in 10, 10, 3 at once", p, err, q.sizes(), clock.now.Sub(t0))
	}
}

// TestSendStopsOnInterrupt: Ctrl-C during a request lets that request
// finish (it is not cancelled, so its messages count), then stops: the
// count is exactly what reached the queue, and the error says why.
func TestSendStopsOnInterrupt(t *testing.T) {
	clock, q := newFakes(0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q.onSend = func(sendCtx context.Context) error {
		if len(q.at) == 4 {
			cancel()
		}
		return sendCtx.Err() // a cancelled request would fail here
	}
	var reports []Progress
	p, err := New(q.send, withClock(clock, 30), func(o *Options) { o.Progress = func(p Progress) { reports = append(reports, p) } }).
		Send(ctx, bodiesN(30))
	if !errors.Is(err, context.Canceled) || p.Sent != 5 || len(q.at) != 5 {
		t.Fatalf("after Ctrl-C during request 5: sent %d (%d requests), %v; want 5 and context.Canceled", p.Sent, len(q.at), err)
	}
	if last := reports[len(reports)-1]; last.Sent != 5 || last.Total != 30 || last.Left != 25*2*time.Second {
		t.Errorf("last progress %+v; want 5 of 30, 50s left", last)
	}
}

// TestSendReportsProgress: every 30 s of the clock and at the end, with
// the time left at the rate.
func TestSendReportsProgress(t *testing.T) {
	clock, q := newFakes(0)
	var reports []Progress
	_, err := New(q.send, withClock(clock, 30), func(o *Options) { o.Progress = func(p Progress) { reports = append(reports, p) } }).
		Send(context.Background(), bodiesN(40))
	if err != nil {
		t.Fatal(err)
	}
	// Messages at 0, 2, ..., 78 s: reports after those sent at 30 and 60 s, then the end.
	want := []Progress{{Sent: 16, Total: 40, Batches: 16, Left: 48 * time.Second}, {Sent: 31, Total: 40, Batches: 31, Left: 18 * time.Second},
		{Sent: 40, Total: 40, Batches: 40}}
	if !slices.Equal(reports, want) {
		t.Errorf("progress %+v\nwant %+v", reports, want)
	}
}

// TestSendRateLeavesTheLeadToShrink: by default a run goes a tenth slower
// than the pacer calls (30 a minute over its 61 s: 29.5), so each message
// arrives later against its slot than the one before.
func TestSendRateLeavesTheLeadToShrink(t *testing.T) {
	if r := PacerRate(30); math.Abs(r-29.5082) > 0.001 {
		t.Errorf("PacerRate(30) = %v, want 29.51 (30 over 61 s)", r)
	}
	if r := SendRate(30); math.Abs(r-0.9*29.5082) > 0.001 {
		t.Errorf("SendRate(30) = %v, want 26.56 (0.9 of 30 over 61 s)", r)
	}
}

// TestBodies: one reprocess message per record, naming the run, the model,
// the price and the run whose result it replaces.
func TestBodies(t *testing.T) {
	todo := []ledger.Record{{Bucket: "b", Key: "k0.jpg", VersionID: "v1", Size: 10, Run: "older"}, {Bucket: "b", Key: "k1.jpg", Size: 3}}
	bodies, err := Bodies("r", "global_v0.2", 1, todo)
	if err != nil || len(bodies) != 2 {
		t.Fatalf("bodies %v, %v", bodies, err)
	}
	var m reprocessmsg.Message
	if err := json.Unmarshal([]byte(bodies[0]), &m); err != nil {
		t.Fatal(err)
	}
	if o := m.Reprocess; o == nil || *o != (reprocessmsg.Object{Run: "r", ModelID: "global_v0.2", CreditsPerCall: 1, Replaces: "older", Bucket: "b", Key: "k0.jpg", VersionID: "v1", Size: 10}) {
		t.Errorf("first message %+v", m.Reprocess)
	}
	if _, err := Bodies("r", "", 1, []ledger.Record{{Key: "no-bucket.jpg"}}); err == nil {
		t.Error("a record without a bucket made a message")
	}
}
