package scenario

import (
	"strings"
	"testing"
	"time"
)

// A pipeline template in miniature: the rig finds the predictor through the
// event source mapping and the monitor through the schedule's target.
const miniTemplate = `{"Resources":{
 "Q":{"Type":"AWS::SQS::Queue","Properties":{"VisibilityTimeout":720,"MessageRetentionPeriod":864000,"RedrivePolicy":{"deadLetterTargetArn":{"Fn::GetAtt":["DLQ","Arn"]},"maxReceiveCount":10}}},
 "DLQ":{"Type":"AWS::SQS::Queue","Properties":{}},
 "P":{"Type":"AWS::Lambda::Function","Properties":{"Timeout":120,"Environment":{"Variables":{"TABLE_NAME":{"Ref":"T"},"GEO_RATE_PER_MINUTE":"30","FLAG":true}}}},
 "M":{"Type":"AWS::Lambda::Function","Properties":{"Timeout":60}},
 "ESM":{"Type":"AWS::Lambda::EventSourceMapping","Properties":{"FunctionName":{"Ref":"P"},"EventSourceArn":{"Fn::GetAtt":["Q","Arn"]},"BatchSize":5,"ScalingConfig":{"MaximumConcurrency":2}}},
 "R":{"Type":"AWS::Events::Rule","Properties":{"ScheduleExpression":"SCHEDULE","Targets":[{"Arn":{"Fn::GetAtt":["M","Arn"]},"Id":"Target0"}]}}
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
	} {
		want := map[string]any{
			"predictor": "Ref:P", "monitor": "Ref:M", "queue": "GetAtt:Q.QueueName", "dlq": "GetAtt:DLQ.QueueName", "rule": "Ref:R",
			"visibility": 12 * time.Minute, "receives": 10, "batch": 5, "concurrency": 2,
			"schedule": 5 * time.Minute, "timeout": 2 * time.Minute, "monitor timeout": time.Minute,
			"table": "Ref:T", "flag": "true",
			"retention": 10 * 24 * time.Hour, "dlq retention": 4 * 24 * time.Hour, // as set; SQS's default
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
