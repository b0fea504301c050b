package sqsqueue

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

// recordingHandler fails the messages whose body starts with "fail" and
// remembers every delivery.
type recordingHandler struct {
	mu         sync.Mutex
	deliveries map[string]int // body -> deliveries
	batches    []int
}

func (h *recordingHandler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	if _, ok := lambdacontext.FromContext(ctx); !ok {
		return resp, errors.New("no Lambda context")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.deliveries == nil {
		h.deliveries = map[string]int{}
	}
	h.batches = append(h.batches, len(ev.Records))
	for _, m := range ev.Records {
		h.deliveries[m.Body]++
		if strings.HasPrefix(m.Body, "fail") {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
	}
	return resp, nil
}

func drain(t *testing.T, p *Poller) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.RunUntilDrained(ctx); err != nil {
		t.Fatalf("RunUntilDrained: %v (queue still holds %d)", err, p.Queue.Len())
	}
}

func TestPollerAcksAllButBatchItemFailures(t *testing.T) {
	q := New(WithVisibilityTimeout(time.Minute), WithMaxReceiveCount(3))
	for _, body := range []string{"ok-1", "fail-1", "ok-2", "ok-3", "fail-2"} {
		q.Send(body)
	}
	h := &recordingHandler{}
	var results []BatchResult
	var mu sync.Mutex
	p := &Poller{Queue: q, Handler: h.Handle, Concurrency: 1, BatchSize: 10, RetryDelay: time.Millisecond,
		OnBatch: func(r BatchResult) { mu.Lock(); results = append(results, r); mu.Unlock() }}
	drain(t, p)

	for _, body := range []string{"ok-1", "ok-2", "ok-3"} {
		if n := h.deliveries[body]; n != 1 {
			t.Errorf("%s delivered %d times, want 1 (acked after its first batch)", body, n)
		}
	}
	for _, body := range []string{"fail-1", "fail-2"} {
		if n := h.deliveries[body]; n != 3 {
			t.Errorf("%s delivered %d times, want maxReceiveCount 3", body, n)
		}
	}
	dead := q.DeadLetters()
	if len(dead) != 2 {
		t.Fatalf("dead letters = %+v, want the two failing messages", dead)
	}
	for _, d := range dead {
		if !strings.HasPrefix(d.Body, "fail") || d.LastFailure != "reported in batchItemFailures" {
			t.Errorf("dead letter %+v", d)
		}
	}
	st := p.Stats()
	if st.Acked != 3 || st.Failed != 6 || st.InvokeErrors != 0 {
		t.Errorf("stats = %+v, want 3 acked, 6 failures", st)
	}
	if len(results) == 0 || len(results[0].Messages) != 5 || len(results[0].Failed) != 2 {
		t.Errorf("first batch result = %+v", results[0])
	}
}

func TestPollerAcksNothingWhenTheInvocationFails(t *testing.T) {
	q := New(WithVisibilityTimeout(time.Minute), WithMaxReceiveCount(2))
	q.Send("a")
	q.Send("b")
	var calls atomic.Int64
	handler := func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		calls.Add(1)
		return events.SQSEventResponse{}, errors.New("table unreachable")
	}
	p := &Poller{Queue: q, Handler: handler, Concurrency: 1, RetryDelay: time.Millisecond}
	drain(t, p)

	if st := p.Stats(); st.Acked != 0 || st.InvokeErrors != 2 {
		t.Errorf("stats = %+v, want nothing acked and 2 failed invocations", st)
	}
	dead := q.DeadLetters()
	if len(dead) != 2 {
		t.Fatalf("dead letters = %d, want 2", len(dead))
	}
	if !strings.Contains(dead[0].LastFailure, "table unreachable") {
		t.Errorf("last failure = %q, want the invocation error", dead[0].LastFailure)
	}
}

func TestPollerTreatsInvalidBatchResponsesAsCompleteFailure(t *testing.T) {
	tests := []struct {
		name    string
		handler any
		wantErr bool
	}{
		{"empty response", func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{}, nil
		}, false},
		{"null response", func(context.Context, events.SQSEvent) (*events.SQSEventResponse, error) {
			return nil, nil
		}, false},
		{"unknown message id", func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: "not-in-batch"}}}, nil
		}, true},
		{"empty item identifier", func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{}}}, nil
		}, true},
		{"not JSON object", func(context.Context, events.SQSEvent) (string, error) {
			return "done", nil
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := New()
			q.Send("a")
			msgs := q.Receive(context.Background(), 10, 0)
			p := &Poller{Queue: q, Handler: tt.handler}
			res := p.invoke(context.Background(), msgs)
			if (res.Err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", res.Err, tt.wantErr)
			}
			p.settle(res)
			wantLen := 0
			if tt.wantErr {
				wantLen = 1
			}
			if q.Len() != wantLen {
				t.Errorf("queue holds %d, want %d", q.Len(), wantLen)
			}
		})
	}
}

func TestPollerRunsInstancesConcurrently(t *testing.T) {
	q := New()
	for range 40 {
		q.Send("ok")
	}
	var running, peak atomic.Int64
	handler := func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		running.Add(-1)
		return events.SQSEventResponse{}, nil
	}
	p := &Poller{Queue: q, Handler: handler, Concurrency: 4, BatchSize: 2}
	drain(t, p)
	if peak.Load() < 2 || peak.Load() > 4 {
		t.Errorf("peak concurrent invocations = %d, want 2..4", peak.Load())
	}
	if st := p.Stats(); st.Acked != 40 || st.Invocations < 20 {
		t.Errorf("stats = %+v, want 40 acked in batches of at most 2", st)
	}
}

func TestPollerWithDuplicatesDeliversAtLeastOnce(t *testing.T) {
	q := New(Duplicate(0.5), func(o *Options) { o.Seed = 3 })
	for _, body := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		q.Send(body)
	}
	h := &recordingHandler{}
	p := &Poller{Queue: q, Handler: h.Handle, Concurrency: 2, BatchSize: 3}
	drain(t, p)
	total := 0
	for body, n := range h.deliveries {
		if n < 1 || n > 2 {
			t.Errorf("%s delivered %d times", body, n)
		}
		total += n
	}
	if len(h.deliveries) != 8 || total <= 8 {
		t.Errorf("%d bodies, %d deliveries: want all 8 and some duplicates", len(h.deliveries), total)
	}
}

func TestPollerRunStopsOnCancel(t *testing.T) {
	q := New()
	h := &recordingHandler{}
	p := &Poller{Queue: q, Handler: h.Handle}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	q.Send("ok")
	deadline := time.Now().Add(5 * time.Second)
	for q.Len() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop after cancel")
	}
	if h.deliveries["ok"] != 1 {
		t.Errorf("message delivered %d times while running", h.deliveries["ok"])
	}
}

func TestPollerRetryDelayKeepsTheHandlersOwnDelay(t *testing.T) {
	clock := newManualClock()
	q := New(WithClock(clock.Now), WithVisibilityTimeout(time.Hour))
	q.Send("deferred")
	q.Send("failed")
	handler := func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, m := range ev.Records {
			if m.Body == "deferred" {
				// What the predictor does for a budget-deferred message.
				if err := q.ChangeVisibility(m.ReceiptHandle, 10*time.Minute); err != nil {
					return resp, err
				}
			}
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
		return resp, nil
	}
	p := &Poller{Queue: q, Handler: handler, RetryDelay: time.Second}
	p.settle(p.invoke(context.Background(), q.Receive(context.Background(), 10, 0)))

	clock.Advance(time.Second)
	msgs := q.Receive(context.Background(), 10, 0)
	if len(msgs) != 1 || msgs[0].Body != "failed" {
		t.Fatalf("after the retry delay got %+v, want only the plain failure", msgs)
	}
	clock.Advance(10 * time.Minute)
	msgs = q.Receive(context.Background(), 10, 0)
	if len(msgs) != 1 || msgs[0].Body != "deferred" {
		t.Fatalf("after the handler's delay got %+v, want the deferred message", msgs)
	}
}

func TestPollerInvocationDeadlineIsItsOwnTimeout(t *testing.T) {
	q := New()
	q.Send("late in the run")
	var deadline time.Time
	handler := func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		deadline, _ = ctx.Deadline()
		return events.SQSEventResponse{}, nil
	}
	p := &Poller{Queue: q, Handler: handler, Timeout: time.Minute}
	// The run ends in a second; the invocation still gets its minute.
	run, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	p.settle(p.invoke(run, q.Receive(run, 10, 0)))
	if left := deadline.Sub(start); left < 50*time.Second {
		t.Errorf("the invocation's deadline was %s after its start, want the poller's timeout (1m), not the run's end", left)
	}
	if got := p.Stats().Acked; got != 1 {
		t.Errorf("acked %d messages, want 1", got)
	}
}

func TestPollerRunCancelReachesTheInvocation(t *testing.T) {
	q := New()
	q.Send("cut short")
	run, cancel := context.WithCancel(context.Background())
	handler := func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		cancel()
		select {
		case <-ctx.Done():
			return events.SQSEventResponse{}, ctx.Err()
		case <-time.After(5 * time.Second):
			return events.SQSEventResponse{}, errors.New("the run was cancelled but the invocation was not")
		}
	}
	p := &Poller{Queue: q, Handler: handler, Timeout: time.Minute}
	res := p.invoke(run, q.Receive(run, 10, 0))
	if !errors.Is(res.Err, context.Canceled) {
		t.Errorf("invocation error = %v, want context.Canceled", res.Err)
	}
}

// The event source's delivery as AWS documents it (see Poller): a long poll
// that returns as soon as a message is available, and no batching window, so
// one message sent to an idle queue is invoked at once, alone, even with
// SQS's longest wait and a batch size of 10.
func TestPollerInvokesAsSoonAsAMessageArrives(t *testing.T) {
	q := New()
	invoked := make(chan int, 1)
	p := &Poller{Queue: q, Concurrency: 1, BatchSize: MaxBatchSize, WaitTime: 20 * time.Second,
		Handler: func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			invoked <- len(ev.Records)
			return events.SQSEventResponse{}, nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = p.Run(ctx) }()
	time.Sleep(50 * time.Millisecond) // the instance is waiting in its long poll
	sent := time.Now()
	q.Send("only")
	select {
	case n := <-invoked:
		if d := time.Since(sent); n != 1 || d > time.Second {
			t.Errorf("invoked with %d messages %v after the send", n, d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no invocation 5 s after the send: the poller waited out its long poll")
	}
}
