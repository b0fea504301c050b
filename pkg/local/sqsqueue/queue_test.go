package sqsqueue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
)

// newManualClock is a clock tests move by hand.
func newManualClock() *simclock.Clock {
	return simclock.New(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))
}

func receiveNow(t *testing.T, q *Queue, max int) []string {
	t.Helper()
	var ids []string
	for _, m := range q.Receive(context.Background(), max, 0) {
		ids = append(ids, m.MessageId)
	}
	return ids
}

func TestReceiveShapesMessagesLikeLambda(t *testing.T) {
	clock := newManualClock()
	q := New(WithClock(clock.Now), func(o *Options) { o.Name = "uploads" })
	id := q.Send(`{"hello":"world"}`)

	msgs := q.Receive(context.Background(), 10, 0)
	if len(msgs) != 1 {
		t.Fatalf("got %d messages, want 1", len(msgs))
	}
	m := msgs[0]
	if m.MessageId != id || m.Body != `{"hello":"world"}` {
		t.Errorf("message = %q %q, want %q and the body sent", m.MessageId, m.Body, id)
	}
	if m.EventSource != "aws:sqs" || m.EventSourceARN != "arn:aws:sqs:us-east-1:000000000000:uploads" || m.AWSRegion != "us-east-1" {
		t.Errorf("source = %q %q %q", m.EventSource, m.EventSourceARN, m.AWSRegion)
	}
	if m.ReceiptHandle == "" {
		t.Error("no receipt handle")
	}
	if got := m.Attributes["ApproximateReceiveCount"]; got != "1" {
		t.Errorf("ApproximateReceiveCount = %q, want 1", got)
	}
	if got := m.Attributes["SentTimestamp"]; got != strconv.FormatInt(clock.Now().UnixMilli(), 10) {
		t.Errorf("SentTimestamp = %q", got)
	}
	// md5 of the body, as computed by `md5sum`.
	if m.Md5OfBody != "fbc24bcc7a1794758fc1327fcfebdaf6" {
		t.Errorf("Md5OfBody = %q", m.Md5OfBody)
	}
}

func TestVisibilityTimeoutHidesThenRedelivers(t *testing.T) {
	clock := newManualClock()
	q := New(WithClock(clock.Now), WithVisibilityTimeout(30*time.Second), WithMaxReceiveCount(0))
	q.Send("a")

	first := q.Receive(context.Background(), 1, 0)
	if len(first) != 1 {
		t.Fatal("first receive got nothing")
	}
	if got := receiveNow(t, q, 10); len(got) != 0 {
		t.Fatalf("received %v while the message is invisible", got)
	}
	if q.Depth() != 0 || q.InFlight() != 1 {
		t.Errorf("depth %d in flight %d, want 0 1", q.Depth(), q.InFlight())
	}

	clock.Advance(29 * time.Second)
	if got := receiveNow(t, q, 10); len(got) != 0 {
		t.Fatalf("received %v before the timeout expired", got)
	}
	clock.Advance(time.Second)
	if q.Depth() != 1 {
		t.Errorf("depth after expiry = %d, want 1", q.Depth())
	}
	second := q.Receive(context.Background(), 1, 0)
	if len(second) != 1 || second[0].Attributes["ApproximateReceiveCount"] != "2" {
		t.Fatalf("redelivery = %+v, want receive count 2", second)
	}
	if second[0].ReceiptHandle == first[0].ReceiptHandle {
		t.Error("redelivery reused the receipt handle")
	}

	// Only the latest receipt deletes the message.
	if err := q.Ack(first[0].ReceiptHandle); !errors.Is(err, ErrStaleReceipt) {
		t.Errorf("ack with the old receipt = %v, want ErrStaleReceipt", err)
	}
	if err := q.Ack(second[0].ReceiptHandle); err != nil {
		t.Fatalf("ack: %v", err)
	}
	if q.Len() != 0 {
		t.Errorf("Len after ack = %d", q.Len())
	}
	clock.Advance(time.Hour)
	if got := receiveNow(t, q, 10); len(got) != 0 {
		t.Errorf("acked message delivered again: %v", got)
	}
}

func TestChangeVisibility(t *testing.T) {
	clock := newManualClock()
	q := New(WithClock(clock.Now), WithVisibilityTimeout(time.Minute))
	q.Send("a")
	m := q.Receive(context.Background(), 1, 0)[0]

	if err := q.ChangeVisibility(m.ReceiptHandle, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	clock.Advance(4 * time.Second)
	if got := receiveNow(t, q, 1); len(got) != 0 {
		t.Fatal("visible before the changed timeout")
	}
	clock.Advance(time.Second)
	if got := receiveNow(t, q, 1); len(got) != 1 {
		t.Fatal("not visible after the changed timeout")
	}
	if err := q.ChangeVisibility(m.ReceiptHandle, 0); !errors.Is(err, ErrStaleReceipt) {
		t.Errorf("change with a stale receipt = %v", err)
	}
}

func TestDeadLetterAfterMaxReceives(t *testing.T) {
	clock := newManualClock()
	q := New(WithClock(clock.Now), WithVisibilityTimeout(time.Second), WithMaxReceiveCount(3))
	id := q.Send("poison")

	for attempt := 1; attempt <= 3; attempt++ {
		msgs := q.Receive(context.Background(), 1, 0)
		if len(msgs) != 1 {
			t.Fatalf("attempt %d: got %d messages", attempt, len(msgs))
		}
		q.NoteFailure(msgs[0].ReceiptHandle, "failure "+strconv.Itoa(attempt))
		clock.Advance(time.Second)
	}
	if got := receiveNow(t, q, 1); len(got) != 0 {
		t.Fatalf("delivered a 4th time: %v", got)
	}
	dead := q.DeadLetters()
	if len(dead) != 1 || dead[0].ID != id || dead[0].ReceiveCount != 3 || dead[0].LastFailure != "failure 3" || dead[0].Body != "poison" {
		t.Fatalf("dead letters = %+v", dead)
	}
	if q.Len() != 0 || q.Depth() != 0 || q.InFlight() != 0 {
		t.Errorf("len %d depth %d in flight %d after dead-lettering", q.Len(), q.Depth(), q.InFlight())
	}
}

func TestReceiveRespectsMaxAndOrder(t *testing.T) {
	q := New()
	var sent []string
	for i := range 25 {
		sent = append(sent, q.Send(strconv.Itoa(i)))
	}
	var got []string
	for {
		ids := receiveNow(t, q, 100) // capped at 10
		if len(ids) == 0 {
			break
		}
		if len(ids) > 10 {
			t.Fatalf("batch of %d, SQS caps at 10", len(ids))
		}
		got = append(got, ids...)
	}
	if len(got) != len(sent) {
		t.Fatalf("received %d, sent %d", len(got), len(sent))
	}
	for i := range sent {
		if got[i] != sent[i] {
			t.Fatalf("order differs at %d", i)
		}
	}
}

func TestLongPollWakesOnSend(t *testing.T) {
	q := New()
	go func() {
		time.Sleep(20 * time.Millisecond)
		q.Send("late")
	}()
	start := time.Now()
	msgs := q.Receive(context.Background(), 1, 5*time.Second)
	if len(msgs) != 1 {
		t.Fatal("long poll returned nothing")
	}
	if time.Since(start) > 2*time.Second {
		t.Error("long poll did not wake up on send")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if msgs := q.Receive(ctx, 1, 5*time.Second); len(msgs) != 0 {
		t.Error("cancelled receive returned messages")
	}
}

func TestDuplicateDelivery(t *testing.T) {
	tests := []struct {
		rate       float64
		wantCopies int
	}{
		{rate: 0, wantCopies: 0},
		{rate: 1, wantCopies: 20},
	}
	for _, tt := range tests {
		q := New(Duplicate(tt.rate))
		for i := range 20 {
			q.Send(strconv.Itoa(i))
		}
		seen := map[string]int{}
		for {
			msgs := q.Receive(context.Background(), 10, 0)
			if len(msgs) == 0 {
				break
			}
			for _, m := range msgs {
				seen[m.MessageId]++
				if err := q.Ack(m.ReceiptHandle); err != nil {
					t.Fatalf("ack: %v", err)
				}
			}
		}
		copies := 0
		for id, n := range seen {
			if n > 2 {
				t.Errorf("rate %v: message %s delivered %d times, copies must not be copied again", tt.rate, id, n)
			}
			copies += n - 1
		}
		if len(seen) != 20 || copies != tt.wantCopies {
			t.Errorf("rate %v: %d distinct messages, %d copies; want 20 and %d", tt.rate, len(seen), copies, tt.wantCopies)
		}
		if q.Len() != 0 {
			t.Errorf("rate %v: Len = %d after acking every delivery", tt.rate, q.Len())
		}
	}
}

func TestDuplicateRateIsRoughlyHonoured(t *testing.T) {
	q := New(Duplicate(0.3), func(o *Options) { o.Seed = 7 })
	for i := range 1000 {
		q.Send(strconv.Itoa(i))
	}
	deliveries := 0
	for {
		msgs := q.Receive(context.Background(), 10, 0)
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			deliveries++
			_ = q.Ack(m.ReceiptHandle)
		}
	}
	if copies := deliveries - 1000; copies < 200 || copies > 400 {
		t.Errorf("%d copies of 1000 at rate 0.3", copies)
	}
}

func TestConcurrentReceiversNeverShareAMessage(t *testing.T) {
	q := New(WithVisibilityTimeout(time.Hour))
	for i := range 500 {
		q.Send(strconv.Itoa(i))
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				msgs := q.Receive(context.Background(), 10, 0)
				if len(msgs) == 0 {
					return
				}
				mu.Lock()
				for _, m := range msgs {
					seen[m.MessageId]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != 500 {
		t.Fatalf("received %d distinct messages, want 500", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("message %s received %d times within its visibility timeout", id, n)
		}
	}
	if q.InFlight() != 500 {
		t.Errorf("in flight = %d", q.InFlight())
	}
}

func TestNextVisibleIsWhenTheNextMessageCanBeReceived(t *testing.T) {
	clk := simclock.New(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
	q := New(WithClock(clk.Now), WithVisibilityTimeout(time.Minute))
	if _, ok := q.NextVisible(); ok {
		t.Fatal("an empty queue has a next visible message")
	}
	q.Send("a")
	q.Send("b")
	if at, ok := q.NextVisible(); !ok || !at.Equal(clk.Now()) {
		t.Fatalf("NextVisible = %v %t, want now", at, ok)
	}
	msgs := q.Receive(t.Context(), 2, 0)
	if err := q.ChangeVisibility(msgs[0].ReceiptHandle, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if at, ok := q.NextVisible(); !ok || !at.Equal(clk.Now().Add(10*time.Second)) {
		t.Errorf("NextVisible = %v %t, want in 10 s (the other in a minute)", at, ok)
	}
}

func TestSendMessageDelayedStaysHiddenForItsDelay(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := New(WithClock(func() time.Time { return now }))
	if _, err := q.SendMessageDelayed("later", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	m := q.Metrics()
	if m.Delayed != 1 || m.Visible != 0 || m.NotVisible != 0 || q.InFlight() != 0 || q.Depth() != 0 || q.Len() != 1 {
		t.Fatalf("within the delay: %+v, in flight %d, depth %d, len %d; want one delayed message only", m, q.InFlight(), q.Depth(), q.Len())
	}
	if got := q.Receive(context.Background(), 10, 0); len(got) != 0 {
		t.Fatalf("received %d message(s) within the delay", len(got))
	}
	if next, ok := q.NextVisible(); !ok || !next.Equal(now.Add(30*time.Second)) {
		t.Errorf("NextVisible = %v, %v; want the end of the delay", next, ok)
	}
	now = now.Add(30 * time.Second)
	got := q.Receive(context.Background(), 10, 0)
	if len(got) != 1 || got[0].Body != "later" {
		t.Fatalf("after the delay: received %v", got)
	}
	if m := q.Metrics(); m.Delayed != 0 || m.NotVisible != 1 {
		t.Errorf("once received: %+v; want it in flight, not delayed", m)
	}
	for _, bad := range []time.Duration{-time.Second, MaxDelay + time.Second, 1500 * time.Millisecond} {
		if _, err := q.SendMessageDelayed("x", bad); !errors.Is(err, ErrInvalidParameterValue) {
			t.Errorf("delay %v: err %v, want InvalidParameterValue", bad, err)
		}
	}
}

func TestSenderAnswersAsSQS(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := New(WithClock(func() time.Time { return now }), WithMaximumMessageSize(MinMaximumMessageSize))
	s := &Sender{Queue: q, URL: "https://sqs.example/q"}
	ctx := context.Background()
	entry := func(id, body string, delay int32) sqstypes.SendMessageBatchRequestEntry {
		return sqstypes.SendMessageBatchRequestEntry{Id: aws.String(id), MessageBody: aws.String(body), DelaySeconds: delay}
	}
	out, err := s.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(s.URL), Entries: []sqstypes.SendMessageBatchRequestEntry{
		entry("now", "a", 0), entry("later", "b", 60), entry("big", strings.Repeat("x", MinMaximumMessageSize+1), 0),
	}})
	if err != nil || len(out.Successful) != 2 || len(out.Failed) != 1 || aws.ToString(out.Failed[0].Id) != "big" ||
		aws.ToString(out.Failed[0].Code) != CodeInvalidParameterValue {
		t.Fatalf("batch: %+v, %v; want two sent and the oversized one failed", out, err)
	}
	if m := q.Metrics(); m.Visible != 1 || m.Delayed != 1 {
		t.Errorf("queue %+v: want one visible, one delayed", m)
	}
	var tooMany []sqstypes.SendMessageBatchRequestEntry
	for i := range MaxBatchSize + 1 {
		tooMany = append(tooMany, entry(fmt.Sprint(i), "x", 0))
	}
	var empty *sqstypes.EmptyBatchRequest
	var over *sqstypes.TooManyEntriesInBatchRequest
	var missing *sqstypes.QueueDoesNotExist
	if _, err := s.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(s.URL)}); !errors.As(err, &empty) {
		t.Errorf("empty batch: %v", err)
	}
	if _, err := s.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(s.URL), Entries: tooMany}); !errors.As(err, &over) {
		t.Errorf("11 entries: %v", err)
	}
	if _, err := s.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String("https://sqs.example/other"), Entries: tooMany[:1]}); !errors.As(err, &missing) {
		t.Errorf("another queue: %v", err)
	}
	if s.Batches() != 1 || q.Len() != 2 {
		t.Errorf("%d batches answered, %d messages; want 1 and 2", s.Batches(), q.Len())
	}
}
