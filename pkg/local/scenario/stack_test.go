package scenario

import (
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/awsmetrics"
)

// A pipeline template in miniature: the rig finds the predictor through the
// event source mapping and the monitor through the schedule's target.
const miniTemplate = `{"Resources":{
 "Q":{"Type":"AWS::SQS::Queue","Properties":{"VisibilityTimeout":720,"MessageRetentionPeriod":864000,"RedrivePolicy":{"deadLetterTargetArn":{"Fn::GetAtt":["DLQ","Arn"]},"maxReceiveCount":10}}},
 "DLQ":{"Type":"AWS::SQS::Queue","Properties":{}},
 "P":{"Type":"AWS::Lambda::Function","Properties":{"Timeout":120,"Environment":{"Variables":{"TABLE_NAME":{"Ref":"T"},"GEO_RATE_PER_MINUTE":"30","FLAG":true}}}},
 "M":{"Type":"AWS::Lambda::Function","Properties":{"Timeout":60}},
 "ESM":{"Type":"AWS::Lambda::EventSourceMapping","Properties":{"FunctionName":{"Ref":"P"},"EventSourceArn":{"Fn::GetAtt":["Q","Arn"]},"BatchSize":5,"ScalingConfig":{"MaximumConcurrency":2}}},
 "R":{"Type":"AWS::Events::Rule","Properties":{"ScheduleExpression":"SCHEDULE","Targets":[{"Arn":{"Fn::GetAtt":["M","Arn"]},"Id":"Target0"}]}},
 "Pipe":{"Type":"AWS::Pipes::Pipe","Properties":{}},
 "CountOK":{"Type":"AWS::Events::Rule","Properties":{"EventPattern":{"source":["geolocate"],"detail-type":["Photo Geolocated"]}}},
 "CountNo":{"Type":"AWS::Events::Rule","Properties":{"EventPattern":{"source":["geolocate"],"detail-type":["Photo Rejected"]}}}
}}`

func TestReadStack(t *testing.T) {
	s, err := ReadStack([]byte(strings.Replace(miniTemplate, "SCHEDULE", "rate(5 minutes)", 1)))
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]any{
		"predictor": s.Predictor, "monitor": s.Monitor, "queue": s.Queue, "dlq": s.DeadLetterQueue, "rule": s.MonitorRule,
		"visibility": s.VisibilityTimeout, "receives": s.MaxReceiveCount, "batch": s.BatchSize, "concurrency": s.MaxConcurrency,
		"schedule": s.MonitorSchedule, "timeout": s.PredictorTimeout, "monitor timeout": s.MonitorTimeout,
		"table": s.PredictorEnv["TABLE_NAME"], "flag": s.PredictorEnv["FLAG"],
		"retention": s.QueueRetention, "dlq retention": s.DeadLetterRetention,
		"pipe": s.ResultsPipe, "counting rule": s.ResultEventRules["Photo Geolocated"], "counting rules": len(s.ResultEventRules),
	} {
		want := map[string]any{
			"predictor": "Ref:P", "monitor": "Ref:M", "queue": "GetAtt:Q.QueueName", "dlq": "GetAtt:DLQ.QueueName", "rule": "Ref:R",
			"visibility": 12 * time.Minute, "receives": 10, "batch": 5, "concurrency": 2,
			"schedule": 5 * time.Minute, "timeout": 2 * time.Minute, "monitor timeout": time.Minute,
			"table": "Ref:T", "flag": "true",
			"retention": 10 * 24 * time.Hour, "dlq retention": 4 * 24 * time.Hour, // as set; SQS's default
			"pipe": "Ref:Pipe", "counting rule": "Ref:CountOK", "counting rules": 2,
		}[name]
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}

	// A schedule the rig cannot play is refused, naming the rule.
	_, err = ReadStack([]byte(strings.Replace(miniTemplate, "SCHEDULE", "cron(0 8 * * ? *)", 1)))
	if err == nil || !strings.Contains(err.Error(), "rule R") || !strings.Contains(err.Error(), "only rate") {
		t.Errorf("cron schedule: %v", err)
	}
	if _, err := ReadStack([]byte(`{"Resources":{}}`)); err == nil || !strings.Contains(err.Error(), "event source mapping") {
		t.Errorf("no mapping: %v", err)
	}
}

// TestResultEventsFillTheDashboardsEventsGraph: the demo dashboard's
// "Result events published, by type" graph reads TriggeredRules by the
// counting rules' RuleName and the pipe's EventCount, which the rig never
// published: the chart was empty. Each record that became final is now
// one event through the pipe, counted by the rule of its type.
func TestResultEventsFillTheDashboardsEventsGraph(t *testing.T) {
	s, err := ReadStack([]byte(strings.Replace(miniTemplate, "SCHEDULE", "rate(5 minutes)", 1)))
	if err != nil {
		t.Fatal(err)
	}
	store := alarmeval.NewStore()
	p := &awsmetrics.Publisher{Store: store, Names: s.Names}
	noon := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	publishResultEvents(p, []ledger.Record{
		{Status: ledger.StatusSucceeded, UpdatedAt: noon.Add(time.Minute)},
		{Status: ledger.StatusSucceeded, UpdatedAt: noon.Add(2 * time.Minute)},
		{Status: ledger.StatusRejected, UpdatedAt: noon.Add(3 * time.Minute)},
		{Status: ledger.StatusInProgress, UpdatedAt: noon.Add(4 * time.Minute)}, // not final: no event
	})
	sum := func(ns, name, dim, value string) float64 {
		points, err := store.StatSeries(alarmeval.MetricStat{
			Metric: alarmeval.Metric{Namespace: ns, MetricName: name, Dimensions: []alarmeval.Dimension{{Name: dim, Value: value}}},
			Stat:   alarmeval.Sum, Period: time.Hour,
		}, noon, noon.Add(time.Hour), alarmeval.Options{})
		if err != nil {
			t.Fatal(err)
		}
		total := 0.0
		for _, pt := range points {
			total += pt.Value
		}
		return total
	}
	for _, tt := range []struct {
		what             string
		ns, name, dim, v string
		want             float64
	}{
		{"Photo Geolocated events", awsmetrics.NamespaceEvents, "TriggeredRules", "RuleName", "Ref:CountOK", 2},
		{"Photo Rejected events", awsmetrics.NamespaceEvents, "TriggeredRules", "RuleName", "Ref:CountNo", 1},
		{"records through the pipe", awsmetrics.NamespacePipes, "EventCount", "PipeName", "Ref:Pipe", 3},
	} {
		if got := sum(tt.ns, tt.name, tt.dim, tt.v); got != tt.want {
			t.Errorf("%s: %s %s{%s=%s} sums to %v, want %v", tt.what, tt.ns, tt.name, tt.dim, tt.v, got, tt.want)
		}
	}
}
