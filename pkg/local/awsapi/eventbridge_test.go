package awsapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
)

func TestEventBridgeRoutesMatchedEventsToTargetsThroughTheSDKClient(t *testing.T) {
	ctx := context.Background()
	queues := NewSQS()
	q := sqsqueue.New()
	queues.AddQueue("results", q, 0, "")
	functions := NewLambda()
	defer functions.Close()
	scheduled := make(chan string, 10)
	functions.Register(Function{Name: "feeder", Handler: func(_ context.Context, payload []byte) ([]byte, error) {
		scheduled <- string(payload)
		return nil, nil
	}})
	ticks := make(chan time.Time)
	bus := NewEventBridge(func(o *EventBridgeOptions) {
		o.SQS, o.Lambda = queues, functions
		o.Ticker = func(time.Duration) (<-chan time.Time, func()) { return ticks, func() {} }
	})
	defer bus.Close()
	cfg, _ := serve(t, bus)
	client := eventbridge.NewFromConfig(cfg)

	if _, err := client.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("failed"),
		EventPattern: aws.String(`{"source":["geolocate"],"detail-type":["Photo Failed"],"detail":{"reason":[{"prefix":"out_of"}]}}`)}); err != nil {
		t.Fatal(err)
	}
	queueARN := "arn:aws:sqs:us-east-1:000000000000:results"
	if _, err := client.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("failed"), Targets: []types.Target{{Id: aws.String("q"), Arn: aws.String(queueARN)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("bad"), EventPattern: aws.String(`{"source":"not a list"}`)}); err == nil {
		t.Error("an invalid pattern was accepted")
	}

	out, err := client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{
		{Source: aws.String("geolocate"), DetailType: aws.String("Photo Failed"), Detail: aws.String(`{"reason":"out_of_credits","key":"a.jpg"}`)},
		{Source: aws.String("geolocate"), DetailType: aws.String("Photo Failed"), Detail: aws.String(`{"reason":"timeout"}`)},
		{Source: aws.String("geolocate"), DetailType: aws.String("Photo Geolocated"), Detail: aws.String(`{"reason":"out_of_credits"}`)},
	}})
	if err != nil || out.FailedEntryCount != 0 || len(out.Entries) != 3 || aws.ToString(out.Entries[0].EventId) == "" {
		t.Fatalf("PutEvents = %+v, %v", out, err)
	}
	msgs := q.Receive(ctx, 10, 0)
	if len(msgs) != 1 {
		t.Fatalf("queue got %d message(s), want the one matching event", len(msgs))
	}
	var event struct {
		Source     string          `json:"source"`
		DetailType string          `json:"detail-type"`
		Detail     json.RawMessage `json:"detail"`
	}
	if err := json.Unmarshal([]byte(msgs[0].Body), &event); err != nil || event.DetailType != "Photo Failed" || !strings.Contains(string(event.Detail), "a.jpg") {
		t.Errorf("delivered body = %s (%v), want the whole event", msgs[0].Body, err)
	}

	names, err := client.ListRuleNamesByTarget(ctx, &eventbridge.ListRuleNamesByTargetInput{TargetArn: aws.String(queueARN)})
	if err != nil || len(names.RuleNames) != 1 || names.RuleNames[0] != "failed" {
		t.Errorf("ListRuleNamesByTarget = %+v, %v", names, err)
	}
	if _, err := client.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: aws.String("failed")}); err == nil {
		t.Error("a rule with targets was deleted")
	}
	if _, err := client.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String("failed"), Ids: []string{"q"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: aws.String("failed")}); err != nil {
		t.Fatal(err)
	}

	// A schedule invokes its Lambda target on every tick.
	if _, err := client.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("every-minute"), ScheduleExpression: aws.String("rate(1 minute)")}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("every-minute"), Targets: []types.Target{{Id: aws.String("f"), Arn: aws.String(functions.FunctionARN("feeder"))}}}); err != nil {
		t.Fatal(err)
	}
	ticks <- time.Now()
	select {
	case got := <-scheduled:
		if !strings.Contains(got, `"detail-type":"Scheduled Event"`) {
			t.Errorf("scheduled payload = %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the schedule never invoked its target")
	}
	if _, err := client.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("x"), ScheduleExpression: aws.String("rate(1 minutes)")}); err == nil {
		t.Error("rate(1 minutes) was accepted")
	}
}

func TestEventBridgeKeepsEachBusRules(t *testing.T) {
	ctx := context.Background()
	queues := NewSQS()
	q := sqsqueue.New()
	queues.AddQueue("smoke", q, 0, "")
	bus := NewEventBridge(func(o *EventBridgeOptions) { o.SQS = queues })
	defer bus.Close()
	bus.AddBus("results")
	cfg, _ := serve(t, bus)
	client := eventbridge.NewFromConfig(cfg)

	if _, err := client.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("r"), EventBusName: aws.String("nope"), EventPattern: aws.String(`{"source":["geolocate"]}`)}); err == nil {
		t.Error("a rule on a missing bus was accepted")
	}
	if _, err := client.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("r"), EventBusName: aws.String("results"), EventPattern: aws.String(`{"source":["geolocate"]}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("r"), EventBusName: aws.String("results"),
		Targets: []types.Target{{Id: aws.String("q"), Arn: aws.String("arn:aws:sqs:us-east-1:000000000000:smoke")}}}); err != nil {
		t.Fatal(err)
	}
	// On the default bus the same event reaches no rule of "results".
	if _, err := client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{
		{Source: aws.String("geolocate"), DetailType: aws.String("Photo Geolocated"), Detail: aws.String(`{}`)}}}); err != nil {
		t.Fatal(err)
	}
	if n := q.Len(); n != 0 {
		t.Fatalf("an event of the default bus reached a rule of another bus (%d message(s))", n)
	}
	if err := bus.PutEvent("results", "geolocate", "Photo Geolocated", json.RawMessage(`{"key":"a.jpg"}`), nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := bus.PutEvent("nope", "geolocate", "x", json.RawMessage(`{}`), nil, time.Now()); err == nil {
		t.Error("PutEvent on a missing bus succeeded")
	}
	if msgs := q.Receive(ctx, 10, 0); len(msgs) != 1 || !strings.Contains(msgs[0].Body, `"key":"a.jpg"`) {
		t.Errorf("the results bus's rule delivered %+v", msgs)
	}
	if names, err := client.ListRuleNamesByTarget(ctx, &eventbridge.ListRuleNamesByTargetInput{EventBusName: aws.String("results"), TargetArn: aws.String("arn:aws:sqs:us-east-1:000000000000:smoke")}); err != nil || len(names.RuleNames) != 1 {
		t.Errorf("ListRuleNamesByTarget on the bus = %+v, %v", names, err)
	}
}
