package main

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/awsmetrics"
	"github.com/geolocate-aws/geolocate/pkg/local/scenario"
	"github.com/geolocate-aws/geolocate/pkg/local/simclock"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
)

// TestDeadLetterAgeAlarm plays the worst case of the queues' retentions on
// the template's own queues and alarms: an upload that fails every attempt
// and is dead-lettered only just before the upload queue would drop it. SQS
// keeps its upload time in the dead-letter queue, so it expires there
// 14 - 10 = 4 days later; DeadLetters pages when it arrives, DeadLetterAge
// again two days on, while it can still be redriven. (The alarm scenarios'
// rig plays the monitor and DynamoDB Local every simulated minute, which for
// twelve days would take minutes of test time; this needs only the queue,
// the metrics SQS publishes and the alarm evaluator.)
// maxVisibility is SQS's longest visibility timeout.
const maxVisibility = 12 * time.Hour

func TestDeadLetterAgeAlarm(t *testing.T) {
	s := synthApp(t).disposable
	template, err := json.Marshal(s.doc)
	if err != nil {
		t.Fatal(err)
	}
	stack, err := scenario.ReadStack(template)
	if err != nil {
		t.Fatal(err)
	}
	all, err := alarmeval.ParseTemplate(template, func(o *alarmeval.ParseOptions) {
		o.Refs = map[string]string{"AWS::StackName": s.cfg.StackName}
	})
	if err != nil {
		t.Fatal(err)
	}
	deadLetters, deadLetterAge := alarmName(s.cfg.StackName, "DeadLetters"), alarmName(s.cfg.StackName, "DeadLetterAge")
	alarms := slices.DeleteFunc(all, func(a *alarmeval.Alarm) bool { return a.Name != deadLetters && a.Name != deadLetterAge })
	if len(alarms) != 2 {
		t.Fatalf("want the template's %s and %s alarms, found %d", deadLetters, deadLetterAge, len(alarms))
	}
	store := alarmeval.NewStore()
	eval, err := alarmeval.NewEvaluator(store, alarms)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	clock := simclock.New(start)
	// SQS holds a received message back at most 12 hours, so reaching the
	// upload queue's retention takes more receives than the default
	// dlqMaxReceiveCount: the most an operator may set for a long outage.
	receives := int(stack.QueueRetention/maxVisibility) + 2
	queue, err := sqsqueue.Create(
		sqsqueue.WithClock(clock.Now),
		sqsqueue.WithVisibilityTimeout(stack.VisibilityTimeout),
		sqsqueue.WithMaxReceiveCount(receives),
		sqsqueue.WithMessageRetentionPeriod(stack.QueueRetention),
		sqsqueue.WithDeadLetterRetentionPeriod(stack.DeadLetterRetention),
	)
	if err != nil {
		t.Fatal(err)
	}
	publisher := &awsmetrics.Publisher{Store: store, Names: stack.Names}
	queue.Send(`{"Records":[]}`)

	// Each receive fails and holds the message back, spread so the last
	// attempt, the one that moves it, comes just before the upload queue's
	// retention.
	moveAttempt := stack.QueueRetention - time.Hour
	holdBack := moveAttempt / time.Duration(receives)
	fired := map[string]time.Time{}
	var movedAt time.Time
	began := time.Now()
	for clock.Now().Before(start.Add(stack.DeadLetterRetention + time.Hour)) {
		now := clock.Now()
		for _, m := range queue.Receive(t.Context(), 10, 0) {
			if err := queue.ChangeVisibility(m.ReceiptHandle, holdBack); err != nil {
				t.Fatal(err)
			}
		}
		metrics := queue.Metrics()
		if metrics.DeadLetterVisible == 1 && movedAt.IsZero() {
			movedAt = now
		}
		if err := publisher.Queue(now, metrics); err != nil {
			t.Fatal(err)
		}
		notes, err := eval.Evaluate(now)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range notes {
			if n.To == alarmeval.StateAlarm {
				if _, ok := fired[n.Alarm]; !ok {
					fired[n.Alarm] = now
				}
			}
		}
		clock.Advance(time.Minute)
	}
	if movedAt.IsZero() {
		t.Fatal("the message never reached the dead-letter queue")
	}
	if lived := movedAt.Sub(start); lived < stack.QueueRetention-2*time.Hour || lived >= stack.QueueRetention {
		t.Fatalf("dead-lettered %v after the upload: the case wants just under the upload queue's %v", lived, stack.QueueRetention)
	}
	if at, ok := fired[deadLetters]; !ok || at.Sub(movedAt) > 5*time.Minute {
		t.Errorf("%s fired at %v, want within minutes of the move at %v", deadLetters, at, movedAt)
	}
	expires := start.Add(stack.DeadLetterRetention)
	at, ok := fired[deadLetterAge]
	switch {
	case !ok:
		t.Errorf("%s never fired; the dead letter expired at %v", deadLetterAge, expires)
	case at.Sub(movedAt) < deadLetterAgeAlarm:
		t.Errorf("%s fired %v after the move, before its %v", deadLetterAge, at.Sub(movedAt), deadLetterAgeAlarm)
	case expires.Sub(at) < 24*time.Hour:
		t.Errorf("%s fired at %v, less than a day before the dead letter expires at %v", deadLetterAge, at, expires)
	}
	if n := queue.Metrics().DeadLetterVisible; n != 0 {
		t.Errorf("%d dead letters left after the dead-letter queue's retention since the upload", n)
	}
	t.Logf("simulated in %v", time.Since(began))
	t.Logf("uploaded %v, dead-lettered %v later; %s after %v more, %s at +%v; expired %v after the move",
		start.Format(time.DateTime), movedAt.Sub(start), deadLetters, fired[deadLetters].Sub(movedAt),
		deadLetterAge, at.Sub(movedAt), expires.Sub(movedAt))
}
