package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/awsmetrics"
	"github.com/geolocate-aws/geolocate/pkg/local/cfntemplate"
	"github.com/geolocate-aws/geolocate/pkg/local/pipes"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/resultevents"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

// resultEventsDeadLetterQueueID is the queue the results pipe sends what it
// cannot deliver to; "" when the stack has no pipe.
func (s *synthesized) resultEventsDeadLetterQueueID(t *testing.T) string {
	t.Helper()
	pipes := s.resources("AWS::Pipes::Pipe")
	if len(pipes) == 0 {
		return ""
	}
	for _, r := range pipes {
		props, _ := r["Properties"].(map[string]any)
		arn := dig(props, "SourceParameters", "DynamoDBStreamParameters", "DeadLetterConfig", "Arn")
		att, _ := arn.(map[string]any)["Fn::GetAtt"].([]any)
		if len(att) == 2 {
			return att[0].(string)
		}
	}
	t.Fatalf("the results pipe has no dead-letter queue of this stack")
	return ""
}

// dig walks nested maps.
func dig(v any, path ...string) any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

// TestResultEvents checks the events part of each configuration: the
// table's stream as tableschema defines it (the local table's), and with
// events on the pipe from that stream to the right bus with its filters,
// template, role, dead-letter queue, counting rules, alarm and dashboard.
func TestResultEvents(t *testing.T) {
	a := synthApp(t)
	for name, s := range a.scenarios() {
		t.Run(name, func(t *testing.T) {
			tableID, table := s.onlyResource(t, "AWS::DynamoDB::Table", nil)
			if got := asJSON(table["StreamSpecification"]); got != `{"StreamViewType":"`+string(tableschema.StreamViewType)+`"}` {
				t.Errorf("table stream %s, want %s as the local table has it (tableschema), events or not", got, tableschema.StreamViewType)
			}
			pipes := s.resources("AWS::Pipes::Pipe")
			rules := 0
			for _, r := range s.resources("AWS::Events::Rule") {
				if strings.Contains(asJSON(r), resultevents.Source) {
					rules++
				}
			}
			alarm := alarmName(s.cfg.StackName, "ResultEventsUndelivered")
			hasAlarm := strings.Contains(asJSON(s.resources("AWS::CloudWatch::Alarm")), alarm)
			// The monitor's Model Available events go to the same bus, and
			// only with events on.
			var monitorBus any
			for _, fn := range s.resources("AWS::Lambda::Function") {
				if p, _ := fn["Properties"].(map[string]any); isMonitor(p) {
					monitorBus = environment(p)[envvars.EventBusName]
				}
			}
			wantBus := any(nil)
			if s.cfg.Events {
				wantBus = cmp.Or(s.cfg.EventBusName, defaultEventBusName)
			}
			if monitorBus != wantBus {
				t.Errorf("monitor %s = %v, want %v", envvars.EventBusName, monitorBus, wantBus)
			}
			if !s.cfg.Events {
				if len(pipes) != 0 || rules != 0 || hasAlarm || len(s.resources("AWS::SQS::Queue")) != 3 {
					t.Fatalf("events=false, yet %d pipes, %d counting rules, alarm %t, %d queues", len(pipes), rules, hasAlarm, len(s.resources("AWS::SQS::Queue")))
				}
				return
			}
			pipeID, pipe := s.onlyResource(t, "AWS::Pipes::Pipe", nil)
			if got := asJSON(pipe["Source"]); got != getAtt(tableID, "StreamArn") {
				t.Errorf("pipe source %s, want the results table's stream", got)
			}
			bus := s.cfg.EventBusName
			if bus == "" {
				bus = defaultEventBusName
			}
			if got := asJSON(pipe["Target"]); !strings.Contains(got, ":event-bus/"+bus+`"`) {
				t.Errorf("pipe target %s, want the bus %s", got, bus)
			}
			src, _ := dig(pipe, "SourceParameters", "DynamoDBStreamParameters").(map[string]any)
			if src["StartingPosition"] != "LATEST" || src["MaximumRetryAttempts"] != float64(eventsMaxRetries) || src["OnPartialBatchItemFailure"] != "AUTOMATIC_BISECT" {
				t.Errorf("stream parameters %s", asJSON(src))
			}
			target, _ := dig(pipe, "TargetParameters", "EventBridgeEventBusParameters").(map[string]any)
			if target["DetailType"] != "$.dynamodb.NewImage."+resultevents.EventTypeAttribute+".S" || target["Source"] != resultevents.Source ||
				asJSON(target["Resources"]) != "["+getAtt(tableID, "Arn")+"]" {
				t.Errorf("event bus parameters %s", asJSON(target))
			}
			// The detail is the enrichment's JSON object, never record
			// text substituted into a template (docs/events.md).
			if tmpl, _ := dig(pipe, "TargetParameters", "InputTemplate").(string); tmpl != resultEventsTemplate {
				t.Errorf("input template %q, want %q", tmpl, resultEventsTemplate)
			}
			enrichID := refID(t, pipe["Enrichment"])
			fn, ok := s.resources("AWS::Lambda::Function")[enrichID]
			if !ok || !strings.HasPrefix(enrichID, "ResultEventsEnrichment") {
				t.Fatalf("pipe enrichment %s is not the stack's enrichment function", asJSON(pipe["Enrichment"]))
			}
			if env := asJSON(fn["Properties"].(map[string]any)["Environment"]); strings.Contains(env, "TABLE") || strings.Contains(env, "SECRET") {
				t.Errorf("the enrichment function reads nothing, yet is given %s", env)
			}
			filters, _ := dig(pipe, "SourceParameters", "FilterCriteria", "Filters").([]any)
			if len(filters) != len(resultevents.FinalStatuses)+1 || len(filters) > 5 {
				t.Errorf("%d filters, want one per final status and one for a final insert (Pipes allows 5)", len(filters))
			}

			// The role: assumed by this account's pipes, reading that stream
			// and putting on that bus only.
			roleID := refID(t, pipe["RoleArn"])
			role := s.resources("AWS::IAM::Role")[roleID]
			rp, _ := role["Properties"].(map[string]any)
			trust := asJSON(rp["AssumeRolePolicyDocument"])
			if !strings.Contains(trust, "pipes.amazonaws.com") || !strings.Contains(trust, "aws:SourceAccount") {
				t.Errorf("pipe role trust %s", trust)
			}
			policies := asJSON(rp["Policies"])
			for _, want := range []string{getAtt(tableID, "StreamArn"), `"events:PutEvents"`, `"sqs:SendMessage"`, `"lambda:InvokeFunction"`, getAtt(enrichID, "Arn"), getAtt(s.resultEventsDeadLetterQueueID(t), "Arn")} {
				if !strings.Contains(policies, want) {
					t.Errorf("pipe role policy lacks %s: %s", want, policies)
				}
			}
			for _, never := range []string{"dynamodb:GetItem", "dynamodb:Query", "dynamodb:Scan", "secretsmanager", "s3:"} {
				if strings.Contains(policies, never) {
					t.Errorf("pipe role may %s: %s", never, policies)
				}
			}
			for id, p := range s.resources("AWS::IAM::Policy") {
				if strings.Contains(asJSON(p), `"Ref":"`+roleID+`"`) {
					t.Errorf("policy %s attaches to the pipe role: grants must be inline, in place before the pipe is created", id)
				}
			}

			if rules != len(resultevents.FinalStatuses) {
				t.Errorf("%d counting rules, want one per detail type", rules)
			}
			if !hasAlarm {
				t.Errorf("no %s alarm", alarm)
			}
			dash := asJSON(s.resources("AWS::CloudWatch::Dashboard"))
			for _, want := range []string{"TriggeredRules", "AWS/EventBridge/Pipes", resultevents.DetailTypeGeolocated, resultevents.DetailTypeRejected, resultevents.DetailTypeFailed, pipeID} {
				if !strings.Contains(dash, want) {
					t.Errorf("the dashboard lacks %s", want)
				}
			}
		})
	}
}

// refID is the logical id a Ref or Fn::GetAtt points at.
func refID(t *testing.T, v any) string {
	t.Helper()
	m, _ := v.(map[string]any)
	if r, ok := m["Ref"].(string); ok {
		return r
	}
	if att, ok := m["Fn::GetAtt"].([]any); ok && len(att) > 0 {
		return att[0].(string)
	}
	t.Fatalf("%s is not a reference", asJSON(v))
	return ""
}

func TestEventBusNameNeedsEvents(t *testing.T) {
	ctx := defaultContext(t)
	ctx[settings.Events.Key] = "false"
	ctx[settings.EventBusName.Key] = "geo-results"
	if _, err := LoadConfig(lookupIn(ctx)); err == nil || !strings.Contains(err.Error(), `"eventBusName"`) {
		t.Errorf("eventBusName without events: %v", err)
	}
}

// updateLocalPipe rewrites the local rig's copy of the results pipe:
// go test ./infra -run TestResultsPipeLocalCopy -update-local-pipe
var updateLocalPipe = flag.Bool("update-local-pipe", false, "rewrite "+localPipeCopy+" from the synthesized stack")

// localPipeCopy is the results pipe as `make run` applies it (embedded in
// pkg/local/pipes): the default configuration's pipe and the stream of its
// table, exactly as synthesized.
const localPipeCopy = "../pkg/local/pipes/resultspipe.template.json"

// TestResultsPipeLocalCopy keeps the local rig's copy of the pipe equal to
// the synthesized one, so what `make run` prints is what the deployed pipe
// publishes; and the rig must understand it (filters, template, target).
func TestResultsPipeLocalCopy(t *testing.T) {
	s := synthApp(t).disposable
	tableID, table := s.onlyResource(t, "AWS::DynamoDB::Table", nil)
	pipeID, _ := s.onlyResource(t, "AWS::Pipes::Pipe", nil)
	fragment := map[string]any{"Resources": map[string]any{
		pipeID: s.resources("AWS::Pipes::Pipe")[pipeID],
		tableID: map[string]any{"Type": "AWS::DynamoDB::Table", "Properties": map[string]any{
			"StreamSpecification": table["StreamSpecification"],
		}},
	}}
	want, err := json.MarshalIndent(fragment, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *updateLocalPipe {
		if err := os.WriteFile(localPipeCopy, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(localPipeCopy)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("%s differs from the synthesized pipe; rewrite it: go test ./infra -run TestResultsPipeLocalCopy -update-local-pipe", localPipeCopy)
	}
	full, err := json.Marshal(s.doc)
	if err != nil {
		t.Fatal(err)
	}
	found, err := pipes.Read(full)
	if err != nil || len(found) != 1 || found[0].LogicalID != pipeID || found[0].StreamViewType != string(tableschema.StreamViewType) {
		t.Fatalf("the local rig reads the synthesized template's pipes as %v, %v", found, err)
	}
}

// TestResultEventsUndeliveredAlarm plays the template's own alarm over the
// metrics SQS publishes for the results pipe's dead-letter queue: quiet
// while it is empty, in ALARM within a period of the pipe giving up on a
// batch, OK again once an operator has dealt with it. (The alarm scenarios'
// rig does not run the pipe, whose failure is EventBridge refusing it.)
func TestResultEventsUndeliveredAlarm(t *testing.T) {
	s := synthApp(t).disposable
	template, err := json.Marshal(s.doc)
	if err != nil {
		t.Fatal(err)
	}
	all, err := alarmeval.ParseTemplate(template, func(o *alarmeval.ParseOptions) {
		o.Refs = map[string]string{"AWS::StackName": s.cfg.StackName}
	})
	if err != nil {
		t.Fatal(err)
	}
	name := alarmName(s.cfg.StackName, "ResultEventsUndelivered")
	alarms := slices.DeleteFunc(all, func(a *alarmeval.Alarm) bool { return a.Name != name })
	if len(alarms) != 1 {
		t.Fatalf("want the template's %s alarm, found %d", name, len(alarms))
	}
	store := alarmeval.NewStore()
	eval, err := alarmeval.NewEvaluator(store, alarms)
	if err != nil {
		t.Fatal(err)
	}
	queue := cfntemplate.GetAtt(s.resultEventsDeadLetterQueueID(t), "QueueName").String()
	publisher := &awsmetrics.Publisher{Store: store, Names: awsmetrics.Names{DeadLetterQueue: queue}}
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	const gaveUpAt, handledAt = 30, 90 // minutes
	var fired, cleared int
	for m := 0; m < 150; m++ {
		now := start.Add(time.Duration(m) * time.Minute)
		visible := 0
		if m >= gaveUpAt && m < handledAt {
			visible = 1
		}
		if err := publisher.Queue(now, sqsqueue.Metrics{DeadLetterActive: true, DeadLetterVisible: visible}); err != nil {
			t.Fatal(err)
		}
		notes, err := eval.Evaluate(now)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range notes {
			switch {
			case n.To == alarmeval.StateAlarm:
				fired = m
			case n.To == alarmeval.StateOK && fired > 0:
				cleared = m
			}
		}
	}
	if fired < gaveUpAt || fired > gaveUpAt+flowPeriodMinutes {
		t.Errorf("%s fired at minute %d, want within a period of %d", name, fired, gaveUpAt)
	}
	if cleared < handledAt || cleared > handledAt+2*flowPeriodMinutes {
		t.Errorf("%s cleared at minute %d, want soon after %d", name, cleared, handledAt)
	}
}
