package predictor

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
)

// queueRun is what runQueue saw.
type queueRun struct {
	invocations int
	// longest is the longest invocation, on the handlers' clock: what
	// Lambda would bill it.
	longest time.Duration
	// receives is, by message id, how many times it was delivered.
	receives map[string]int
}

// useQueue makes the handler's message delays go to a local queue on clk,
// with the stack's redrive policy (maxReceiveCount 10) and a visibility
// timeout of 12 minutes.
func (e *testEnv) useQueue(clk *simclock.Clock) {
	e.useQueueOf(clk, 10)
}

// useQueueOf is useQueue with the queue's maxReceiveCount.
func (e *testEnv) useQueueOf(clk *simclock.Clock, maxReceiveCount int) {
	e.queue = sqsqueue.New(sqsqueue.WithClock(clk.Now),
		sqsqueue.WithVisibilityTimeout(12*time.Minute), sqsqueue.WithMaxReceiveCount(maxReceiveCount))
	e.useFakeClock(clk)
	e.h.opts.Parallelism = 1 // the fake clock's sleeps are one worker's
}

// runQueue plays the event source mapping on the fake clock until the queue
// is empty or until passes: it delivers what is visible, up to batchSize
// messages, as soon as it is, acknowledges what the handler did not
// return, and moves the clock to the next message. every, when set, runs
// before each step.
func (e *testEnv) runQueue(until time.Time, batchSize int, every func(now time.Time)) queueRun {
	e.t.Helper()
	clk := e.clock
	run := queueRun{receives: map[string]int{}}
	for e.queue.Len() > 0 && clk.Now().Before(until) {
		if every != nil {
			every(clk.Now())
		}
		msgs := e.queue.Receive(e.t.Context(), batchSize, 0)
		if len(msgs) == 0 {
			// A long poll sees a message as soon as it is visible: step
			// to it, a minute at most so that every runs on time.
			next, _ := e.queue.NextVisible()
			clk.Advance(min(max(next.Sub(clk.Now()), time.Millisecond), time.Minute))
			continue
		}
		run.invocations++
		for _, m := range msgs {
			run.receives[m.MessageId]++
		}
		start := clk.Now()
		payload, err := json.Marshal(events.SQSEvent{Records: msgs})
		if err != nil {
			e.t.Fatal(err)
		}
		failed := e.invokeSQS(payload)
		run.longest = max(run.longest, clk.Now().Sub(start))
		for _, m := range msgs {
			if !slices.Contains(failed, m.MessageId) {
				if err := e.queue.Ack(m.ReceiptHandle); err != nil {
					e.t.Fatal(err)
				}
			}
		}
	}
	return run
}

// enqueue uploads n distinct photos named prefix-NN.jpg and sends the
// queue their notifications.
func (e *testEnv) enqueue(prefix string, n, seed int) []upload {
	e.t.Helper()
	var ups []upload
	for i := range n {
		u := e.put(fmt.Sprintf("%s-%02d.jpg", prefix, i), testJPEG(e.t, seed+i))
		ups = append(ups, u)
		e.queue.Send(uploadMessage("", u).body)
	}
	return ups
}

// assertSucceeded checks that every upload is recorded succeeded.
func (e *testEnv) assertSucceeded(ups []upload) {
	e.t.Helper()
	for _, u := range ups {
		if rec := e.record(u); rec == nil || rec.Status != ledger.StatusSucceeded {
			e.t.Errorf("%s: record %+v, want succeeded", u.Key, rec)
		}
	}
}

// TestA429AskingForAYearResumesWithinTheCap: the service answers one call
// with a 429 whose Retry-After is a date a year ahead. The pipeline resumes
// within GEO_MAX_SERVER_DELAY_SECONDS and loses nothing: the refused object
// and the others are geolocated, none dead-lettered, no message received
// more than three times.
func TestA429AskingForAYearResumesWithinTheCap(t *testing.T) {
	clk := simclock.New(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
	const cap = 2 * time.Minute
	e := newTestEnv(t, func(c *Config) { c.RatePerMinute = 30; c.MaxServerDelay = cap }, geosim.WithClock(clk.Now))
	var refused atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == geosim.PathPredict && refused.CompareAndSwap(false, true) {
			yearAhead := time.Now().Add(365 * 24 * time.Hour)
			w.Header().Set("Retry-After", yearAhead.UTC().Format(http.TimeFormat))
			w.Header().Set("X-RateLimit-Retry-After", strconv.FormatInt(yearAhead.Unix(), 10))
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		e.sim.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	e.cfg.APIURL = front.URL
	e.useQueue(clk)
	start := clk.Now()
	ups := e.enqueue("year", 4, 420)
	run := e.runQueue(start.Add(time.Hour), 5, nil)

	if !refused.Load() {
		t.Fatal("no call was refused")
	}
	e.assertSucceeded(ups)
	calls := e.predictCalls()
	if last := calls[len(calls)-1].Time; last.Sub(start) > cap+30*time.Second {
		t.Errorf("the last call came %v after the 429, want within the %v cap (and a few slots)", last.Sub(start), cap)
	}
	if n := len(e.queue.DeadLetters()); n != 0 {
		t.Errorf("%d dead letters", n)
	}
	for id, n := range run.receives {
		if n > 3 {
			t.Errorf("message %s received %d times, want at most 3", id, n)
		}
	}
	if run.longest > DefaultMaxSlotWait+time.Second {
		t.Errorf("an invocation lasted %v on the handler's clock: it waited for the 429", run.longest)
	}
}

// TestADayWithoutCreditsDeadLettersNothing: the account has no credits for
// a day. Each message returned for it waits a backoff that doubles with
// each receive, up to 12 hours, so no message reaches the tenth receive in
// a day, and after the top-up every upload is geolocated.
func TestADayWithoutCreditsDeadLettersNothing(t *testing.T) {
	clk := simclock.New(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
	e := newTestEnv(t, func(c *Config) { c.RatePerMinute = 30; c.MaxReceiveCount = 10 },
		geosim.WithClock(clk.Now), func(c *geosim.Config) { c.NoCredits = true })
	e.useQueue(clk)
	start := clk.Now()
	ups := e.enqueue("broke", 3, 440)
	toppedUp := false
	run := e.runQueue(start.Add(48*time.Hour), 5, func(now time.Time) {
		if !toppedUp && now.Sub(start) >= 24*time.Hour {
			e.sim.AddAccount(geosim.DefaultOrg, 100, 0)
			toppedUp = true
		}
	})
	e.assertSucceeded(ups)
	if n := len(e.queue.DeadLetters()); n != 0 {
		t.Errorf("%d dead letters after a day without credits", n)
	}
	// Eight receives for the outage, and one more for a held slot once the
	// credits are back: none needed its last allowed receive.
	for id, n := range run.receives {
		if n >= 10 {
			t.Errorf("message %s received %d times for a day's outage, want fewer than the 10 allowed", id, n)
		}
	}
	if done := clk.Now().Sub(start); done > 36*time.Hour {
		t.Errorf("drained %v after the outage began, want within 12 hours of the top-up", done)
	}
	t.Logf("%d invocations; receives %v; drained after %v", run.invocations, run.receives, clk.Now().Sub(start))
}

// TestOutageBackoffDoublesUpToTwelveHours: the backoff of a message held
// back by an outage, by receive, and when its 18th receive comes: with the
// stack's default maxReceiveCount of 20, the end of the longest outage a
// backlog survives (two receives left to drain it), docs/waiting.md's
// figure.
func TestOutageBackoffDoublesUpToTwelveHours(t *testing.T) {
	var got []time.Duration
	var total time.Duration
	for n := 1; n <= 17; n++ {
		d := outageBackoff(n)
		got = append(got, d)
		total += d
	}
	want := []time.Duration{15, 30, 60, 120, 240, 480, 720, 720, 720, 720, 720, 720}
	for i := range want {
		if got[i] != want[i]*time.Minute {
			t.Errorf("backoff after receive %d = %v, want %v", i+1, got[i], want[i]*time.Minute)
		}
	}
	if total != 8865*time.Minute {
		t.Errorf("the 17 returns before the 18th receive span %v, want 147h45m (docs/waiting.md's figure)", total)
	}
	if outageBackoff(0) != OutageBackoffBase || outageBackoff(1_000_000) != maxVisibility {
		t.Error("out-of-range receive counts are not clamped")
	}
}

// TestAThreeDayOutageWithABacklogDeadLettersNothing is the outage promise,
// measured: a backlog of 1,000 photos waits through 72 hours without
// credits on the local queue, whose accounting is SQS's (every receive
// counts towards maxReceiveCount, a held slot costs one), with the stack's
// default dlqMaxReceiveCount (cdk.json); once credits are back every photo
// is predicted and none is dead-lettered. The receives it took are the
// figure docs/waiting.md gives.
func TestAThreeDayOutageWithABacklogDeadLettersNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 photos through a 72-hour outage")
	}
	const backlog, outage = 1000, 72 * time.Hour
	maxReceives := stackDefaultMaxReceiveCount(t)
	clk := simclock.New(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
	e := newTestEnv(t, func(c *Config) { c.RatePerMinute = 30; c.MaxReceiveCount = maxReceives },
		geosim.WithClock(clk.Now), geosim.WithRateLimit(30, 1), func(c *geosim.Config) { c.NoCredits = true })
	e.useQueueOf(clk, maxReceives)
	start := clk.Now()
	ups := e.enqueue("outage", backlog, 1000)
	toppedUp := false
	run := e.runQueue(start.Add(outage+48*time.Hour), 10, func(now time.Time) {
		if !toppedUp && now.Sub(start) >= outage {
			e.sim.AddAccount(geosim.DefaultOrg, 2*backlog, 0)
			toppedUp = true
		}
	})
	if n := len(e.queue.DeadLetters()); n != 0 {
		t.Errorf("%d of %d photos dead-lettered after a %v outage (maxReceiveCount %d)", n, backlog, outage, maxReceives)
	}
	e.assertSucceeded(ups)
	most := 0
	for _, n := range run.receives {
		most = max(most, n)
	}
	t.Logf("%d photos, %v outage: %d invocations, at most %d receives of the %d allowed; drained %v after the outage began",
		backlog, outage, run.invocations, most, maxReceives, clk.Now().Sub(start))
}

// stackDefaultMaxReceiveCount is cdk.json's dlqMaxReceiveCount, the
// queue's default redrive limit.
func stackDefaultMaxReceiveCount(t *testing.T) int {
	t.Helper()
	raw, err := os.ReadFile("../../cdk.json")
	if err != nil {
		t.Fatal(err)
	}
	var cdk struct {
		Context struct {
			DLQMaxReceiveCount int `json:"dlqMaxReceiveCount"`
		} `json:"context"`
	}
	if err := json.Unmarshal(raw, &cdk); err != nil || cdk.Context.DLQMaxReceiveCount < 1 {
		t.Fatalf("cdk.json's dlqMaxReceiveCount: %v", err)
	}
	return cdk.Context.DLQMaxReceiveCount
}
