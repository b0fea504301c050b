package sqsqueue

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

func TestChangeVisibilityRefusesMoreThanTwelveHoursFromReceive(t *testing.T) {
	clock := newManualClock()
	q := New(WithClock(clock.Now), WithVisibilityTimeout(30*time.Minute))
	q.Send("a")
	m := q.Receive(context.Background(), 1, 0)[0]

	// Out of range whatever the message's age.
	for _, d := range []time.Duration{-time.Second, 12*time.Hour + time.Second} {
		if err := q.ChangeVisibility(m.ReceiptHandle, d); !errors.Is(err, ErrInvalidParameterValue) {
			t.Errorf("ChangeVisibility(%v) = %v, want InvalidParameterValue", d, err)
		}
	}

	// Ten minutes after the receive, 12 hours from now ends past 12 hours
	// from the receive.
	clock.Advance(10 * time.Minute)
	err := q.ChangeVisibility(m.ReceiptHandle, 12*time.Hour)
	var qerr *Error
	if !errors.As(err, &qerr) || qerr.Code != CodeInvalidParameterValue || !strings.Contains(qerr.Message, "[43200 seconds]") {
		t.Fatalf("ChangeVisibility(12h) 10 minutes after the receive = %v, want InvalidParameterValue naming the 43200-second limit", err)
	}
	// The refused change left the visibility as it was.
	clock.Advance(20 * time.Minute)
	if got := receiveNow(t, q, 1); len(got) != 1 {
		t.Fatalf("after the refused change and the visibility timeout got %v, want the message again", got)
	}
}

func TestChangeVisibilityUpToTwelveHoursFromReceive(t *testing.T) {
	clock := newManualClock()
	q := New(WithClock(clock.Now), WithVisibilityTimeout(30*time.Minute))
	q.Send("a")
	m := q.Receive(context.Background(), 1, 0)[0]

	clock.Advance(10 * time.Minute)
	if err := q.ChangeVisibility(m.ReceiptHandle, 12*time.Hour-10*time.Minute); err != nil {
		t.Fatalf("exactly 12 hours from the receive: %v", err)
	}
	// Extending again does not reset the 12 hours.
	clock.Advance(time.Hour)
	if err := q.ChangeVisibility(m.ReceiptHandle, 11*time.Hour); !errors.Is(err, ErrInvalidParameterValue) {
		t.Errorf("extension past 12 hours from the receive = %v, want InvalidParameterValue", err)
	}
	if err := q.ChangeVisibility(m.ReceiptHandle, 10*time.Hour+50*time.Minute); err != nil {
		t.Errorf("extension to 12 hours from the receive: %v", err)
	}
	clock.Advance(10*time.Hour + 50*time.Minute - time.Second)
	if got := receiveNow(t, q, 1); len(got) != 0 {
		t.Fatalf("visible before the change expired: %v", got)
	}
	clock.Advance(time.Second)
	again := q.Receive(context.Background(), 1, 0)
	if len(again) != 1 {
		t.Fatal("not visible after the change expired")
	}
	// A new receive starts a new 12 hours; the old handle changes nothing.
	if err := q.ChangeVisibility(again[0].ReceiptHandle, 12*time.Hour); err != nil {
		t.Errorf("12 hours right after the new receive: %v", err)
	}
	if err := q.ChangeVisibility(m.ReceiptHandle, time.Minute); !errors.Is(err, ErrStaleReceipt) {
		t.Errorf("change with the old receipt = %v, want ErrStaleReceipt", err)
	}
}

func TestVisibilityAdapterGoesThroughTheLimits(t *testing.T) {
	clock := newManualClock()
	q := New(WithClock(clock.Now))
	q.Send("a")
	m := q.Receive(context.Background(), 1, 0)[0]
	v := Visibility{Queue: q}
	clock.Advance(time.Minute)
	if err := v.ChangeVisibility(context.Background(), m, 12*time.Hour); !errors.Is(err, ErrInvalidParameterValue) {
		t.Errorf("adapter: 12h a minute after the receive = %v, want InvalidParameterValue", err)
	}
	if err := v.ChangeVisibility(context.Background(), m, 12*time.Hour-time.Minute); err != nil {
		t.Errorf("adapter: %v", err)
	}
	other := m
	other.EventSourceARN = "arn:aws:sqs:us-east-1:000000000000:other"
	if err := v.ChangeVisibility(context.Background(), other, time.Minute); err == nil {
		t.Error("adapter changed a message of another queue")
	}
}

func TestSendRefusesBodyOverMaximumMessageSize(t *testing.T) {
	q := New()
	if _, err := q.SendMessage(strings.Repeat("x", 262144)); err != nil {
		t.Fatalf("256 KiB body: %v", err)
	}
	_, err := q.SendMessage(strings.Repeat("x", 262145))
	if !errors.Is(err, ErrInvalidParameterValue) || !strings.Contains(err.Error(), "262144 bytes") {
		t.Fatalf("256 KiB + 1 body: %v, want InvalidParameterValue naming 262144 bytes", err)
	}
	if q.Len() != 1 {
		t.Errorf("Len = %d, want only the body that fits", q.Len())
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Send of an oversized body did not panic")
			}
		}()
		q.Send(strings.Repeat("x", 262145))
	}()

	big := New(WithMaximumMessageSize(MaxMaximumMessageSize))
	if _, err := big.SendMessage(strings.Repeat("x", 1<<20)); err != nil {
		t.Errorf("1 MiB body on a queue configured for it: %v", err)
	}
}

func TestCreateRefusesOutOfRangeSettings(t *testing.T) {
	bad := map[string]func(*Options){
		"negative visibility timeout":    WithVisibilityTimeout(-time.Second),
		"visibility timeout over 12h":    WithVisibilityTimeout(12*time.Hour + time.Second),
		"retention under a minute":       WithMessageRetentionPeriod(59 * time.Second),
		"retention over 14 days":         WithMessageRetentionPeriod(14*24*time.Hour + time.Second),
		"dead-letter retention":          func(o *Options) { o.DeadLetterRetentionPeriod = 15 * 24 * time.Hour },
		"negative maxReceiveCount":       WithMaxReceiveCount(-1),
		"maxReceiveCount over 1000":      WithMaxReceiveCount(1001),
		"message size under 1 KiB":       WithMaximumMessageSize(1023),
		"message size over 1 MiB":        WithMaximumMessageSize(1<<20 + 1),
		"negative message size":          WithMaximumMessageSize(-1),
		"negative retention":             WithMessageRetentionPeriod(-time.Hour),
		"negative dead-letter retention": func(o *Options) { o.DeadLetterRetentionPeriod = -time.Hour },
	}
	for name, opt := range bad {
		if _, err := Create(opt); !errors.Is(err, ErrInvalidAttributeValue) {
			t.Errorf("%s: Create = %v, want InvalidAttributeValue", name, err)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: New did not panic", name)
				}
			}()
			New(opt)
		}()
	}
	good := []func(*Options){
		WithVisibilityTimeout(12 * time.Hour), WithMaxReceiveCount(1), WithMaxReceiveCount(1000),
		WithMessageRetentionPeriod(time.Minute), WithMessageRetentionPeriod(14 * 24 * time.Hour),
		WithMaximumMessageSize(1024), WithMaximumMessageSize(1 << 20),
	}
	for i, opt := range good {
		if _, err := Create(opt); err != nil {
			t.Errorf("edge value %d refused: %v", i, err)
		}
	}
}

func TestMessagesExpireAfterRetention(t *testing.T) {
	clock := newManualClock()
	q := New(WithClock(clock.Now), WithMessageRetentionPeriod(time.Hour), WithVisibilityTimeout(12*time.Hour))
	old := q.Send("old")
	clock.Advance(30 * time.Minute)
	young := q.Send("young")
	inFlight := q.Receive(context.Background(), 1, 0)
	if len(inFlight) != 1 || inFlight[0].MessageId != old {
		t.Fatalf("received %+v, want the old message", inFlight)
	}

	clock.Advance(30 * time.Minute) // the old message is an hour old, in flight or not
	if q.Holds(old) || !q.Holds(young) || q.Len() != 1 || q.Expired() != 1 {
		t.Errorf("holds old %v young %v, len %d, expired %d; want only the young one, one expired",
			q.Holds(old), q.Holds(young), q.Len(), q.Expired())
	}
	if err := q.Ack(inFlight[0].ReceiptHandle); !errors.Is(err, ErrStaleReceipt) {
		t.Errorf("ack of an expired message = %v, want ErrStaleReceipt", err)
	}
	if got := receiveNow(t, q, 10); len(got) != 1 || got[0] != young {
		t.Errorf("received %v, want only the young message", got)
	}
	clock.Advance(30 * time.Minute)
	if q.Len() != 0 || q.Depth() != 0 || q.InFlight() != 0 {
		t.Errorf("len %d depth %d in flight %d after both expired", q.Len(), q.Depth(), q.InFlight())
	}
}

func TestDefaultRetentionIsFourDays(t *testing.T) {
	clock := newManualClock()
	q := New(WithClock(clock.Now))
	q.Send("a")
	clock.Advance(4*24*time.Hour - time.Second)
	if q.Len() != 1 {
		t.Fatal("message gone before 4 days")
	}
	clock.Advance(time.Second)
	if q.Len() != 0 || len(receiveNow(t, q, 1)) != 0 {
		t.Error("message still there after 4 days")
	}
}

func TestDeadLetterRetentionCountsFromTheOriginalSend(t *testing.T) {
	clock := newManualClock()
	q := New(WithClock(clock.Now), WithMaxReceiveCount(1), WithVisibilityTimeout(time.Hour),
		func(o *Options) { o.DeadLetterRetentionPeriod = 2 * 24 * time.Hour })
	id := q.Send("poison")
	sent := clock.Now()
	q.Receive(context.Background(), 1, 0)
	clock.Advance(24 * time.Hour)
	if got := receiveNow(t, q, 1); len(got) != 0 {
		t.Fatalf("delivered again: %v", got)
	}
	dead := q.DeadLetters()
	if len(dead) != 1 || dead[0].ID != id || !dead[0].SentAt.Equal(sent) {
		t.Fatalf("dead letters = %+v, want the message with its original send time", dead)
	}
	// A day in the dead-letter queue, two days after the send: gone.
	clock.Advance(24 * time.Hour)
	if dead := q.DeadLetters(); len(dead) != 0 {
		t.Errorf("dead letter kept past the retention counted from its send: %+v", dead)
	}
}

func TestPollerRefusesOutOfRangeBatchSize(t *testing.T) {
	q := New()
	handler := func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
		return events.SQSEventResponse{}, nil
	}
	for _, n := range []int{-1, 11} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		p := &Poller{Queue: q, Handler: handler, BatchSize: n}
		if err := p.Run(ctx); !errors.Is(err, ErrInvalidParameterValue) {
			t.Errorf("BatchSize %d: Run = %v, want InvalidParameterValue", n, err)
		}
		cancel()
	}
}
