package predictor

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"

	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
)

func TestVisibilityLeft(t *testing.T) {
	tests := []struct {
		elapsed, want time.Duration
	}{
		{0, 12*time.Hour - time.Minute},
		{-time.Second, 12*time.Hour - time.Minute}, // a clock step back gives nothing extra
		{10 * time.Minute, 12*time.Hour - 11*time.Minute},
		{12*time.Hour - time.Minute, 0},
		{13 * time.Hour, 0},
	}
	for _, tt := range tests {
		if got := visibilityLeft(tt.elapsed); got != tt.want {
			t.Errorf("visibilityLeft(%v) = %v, want %v", tt.elapsed, got, tt.want)
		}
	}
}

// recordingSQS records the ChangeMessageVisibility requests.
type recordingSQS struct{ timeouts []int32 }

func (r *recordingSQS) GetQueueUrl(context.Context, *sqs.GetQueueUrlInput, ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error) {
	url := "https://sqs.us-east-1.amazonaws.com/123456789012/q"
	return &sqs.GetQueueUrlOutput{QueueUrl: &url}, nil
}

func (r *recordingSQS) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	r.timeouts = append(r.timeouts, in.VisibilityTimeout)
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

func TestSQSVisibilityKeepsTimeoutInSQSRange(t *testing.T) {
	api := &recordingSQS{}
	v := NewSQSVisibility(api)
	msg := events.SQSMessage{MessageId: "m", ReceiptHandle: "h", EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:q"}
	for _, d := range []time.Duration{13 * time.Hour, -time.Second, 90 * time.Second} {
		if err := v.ChangeVisibility(t.Context(), msg, d); err != nil {
			t.Fatal(err)
		}
	}
	if want := []int32{43200, 0, 90}; len(api.timeouts) != 3 || api.timeouts[0] != want[0] || api.timeouts[1] != want[1] || api.timeouts[2] != want[2] {
		t.Errorf("VisibilityTimeout sent = %v, want %v", api.timeouts, want)
	}
}

// slowLedger makes the budget reservation take a while, as a batch that
// waited does: the deferral happens late in the invocation.
type slowLedger struct {
	Ledger
	clock *simclock.Clock
	delay time.Duration
}

func (l slowLedger) ReserveCredits(ctx context.Context, day string, credits, budget int) (bool, error) {
	l.clock.Advance(l.delay)
	return l.Ledger.ReserveCredits(ctx, day, credits, budget)
}

// delayRecorder passes delays to the local queue and records them with
// their outcome.
type delayRecorder struct {
	next  VisibilityChanger
	clock *simclock.Clock
	mu    sync.Mutex
	calls []delayCall
}

type delayCall struct {
	at    time.Time
	delay time.Duration
	err   error
}

func (r *delayRecorder) ChangeVisibility(ctx context.Context, msg events.SQSMessage, d time.Duration) error {
	err := r.next.ChangeVisibility(ctx, msg, d)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, delayCall{at: r.clock.Now(), delay: d, err: err})
	return err
}

// A budget deferral made late in an invocation, or by an invocation that
// started a while after the receive, must keep the message invisible for
// at most 12 hours from the receive: SQS (and the local queue) refuse more,
// and a refused delay sends the message back every visibility timeout until
// it is dead-lettered.
func TestBudgetDeferralStaysWithinTwelveHoursOfReceive(t *testing.T) {
	tests := []struct {
		name        string
		lateStart   time.Duration // between the receive and the handler's start
		slowReserve time.Duration // inside the invocation, before the deferral
	}{
		{name: "deferral late in the invocation", slowReserve: 10 * time.Minute},
		{name: "invocation started late", lateStart: 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newTestEnv(t, func(c *Config) { c.DailyBudget = 1 })
			// 00:30 UTC: the budget resets in 23.5 hours, so the wanted
			// delay is the 12-hour cap itself.
			clock := simclock.New(time.Date(2031, 3, 4, 0, 30, 0, 0, time.UTC))
			if ok, err := e.store.ReserveCredits(t.Context(), ledger.Day(clock.Now()), 1, 1); err != nil || !ok {
				t.Fatalf("fill the day's budget: %v %v", ok, err)
			}
			queue := sqsqueue.New(sqsqueue.WithClock(clock.Now),
				sqsqueue.WithVisibilityTimeout(30*time.Minute), sqsqueue.WithMaxReceiveCount(3))
			rec := &delayRecorder{next: sqsqueue.Visibility{Queue: queue}, clock: clock}
			h := e.handlerWith(rec, slowLedger{Ledger: ledger.New(e.ddb, e.cfg.TableName), clock: clock, delay: tt.slowReserve}, clock.Now)

			id := queue.Send(uploadMessage("unused", e.put("deferred.jpg", testJPEG(t, 77))).body)
			sent := clock.Now()
			receives := 0
			var received time.Time
			for clock.Now().Before(sent.Add(12*time.Hour + time.Hour)) {
				msgs := queue.Receive(t.Context(), 10, 0)
				if len(msgs) > 0 {
					receives++
					received = clock.Now()
					clock.Advance(tt.lateStart)
					n := len(rec.calls)
					failed := invokeBatch(t, h, msgs)
					if len(failed) != 1 {
						t.Fatalf("receive %d: failures %v, want the message returned", receives, failed)
					}
					if len(rec.calls) != n+1 {
						t.Fatalf("receive %d: %d delay calls, want one", receives, len(rec.calls)-n)
					}
					c := rec.calls[n]
					if c.err != nil {
						t.Errorf("receive %d: delay of %v refused: %v", receives, c.delay, c.err)
					}
					if total := c.at.Add(c.delay).Sub(received); total > 12*time.Hour {
						t.Errorf("receive %d: invisible for %v after the receive, more than 12 hours", receives, total)
					}
					if c.delay < 11*time.Hour {
						t.Errorf("receive %d: delayed only %v", receives, c.delay)
					}
				}
				clock.Advance(5 * time.Minute)
			}
			if dead := queue.DeadLetters(); len(dead) != 0 {
				t.Fatalf("the deferred message was dead-lettered after %d receives: %+v", receives, dead)
			}
			if !queue.Holds(id) || receives != 2 {
				t.Errorf("queue holds the message: %v, received %d times in 13 hours, want 2", queue.Holds(id), receives)
			}
		})
	}
}

// handlerWith builds the test environment's handler with its own
// visibility changer, ledger and clock.
func (e *testEnv) handlerWith(v VisibilityChanger, l Ledger, clock func() time.Time) *Handler {
	e.t.Helper()
	logger := newJSONLogger(e.logs, "debug")
	client, err := geoapi.New(e.cfg.APIURL, func(o *geoapi.Options) { o.Logger = logger })
	if err != nil {
		e.t.Fatal(err)
	}
	h, err := New(e.cfg, Deps{
		Objects: e.objects, Ledger: l, Service: client, Keys: e.keys,
		Logger: logger, Metrics: e.metrics, Visibility: v,
	}, func(o *Options) { o.Clock = clock; o.Parallelism = 1 })
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

// invokeBatch runs h on messages received from a local queue and returns
// the ids of the messages it returned for retry.
func invokeBatch(t *testing.T, h *Handler, msgs []events.SQSMessage) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: "req-" + t.Name()})
	resp, err := h.Handle(ctx, events.SQSEvent{Records: msgs})
	if err != nil {
		t.Fatalf("invocation failed: %v", err)
	}
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	return failed
}
