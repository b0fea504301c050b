package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/jsii-runtime-go"

	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

func TestAlarms(t *testing.T) {
	for name, s := range synthApp(t).scenarios() {
		t.Run(name, func(t *testing.T) {
			cfg := s.cfg
			topicID, _ := s.onlyResource(t, "AWS::SNS::Topic", nil)
			predictorID, _ := s.onlyResource(t, "AWS::Lambda::Function", isPredictor)
			queueID, dlqID := s.uploadQueueIDs(t)
			ruleID, _ := s.onlyResource(t, "AWS::Events::Rule", isMonitorSchedule)
			monitorPeriod := cfg.MonitorSchedule.Seconds()
			pipeline := []any{obj{"Name": metricnames.DimPipeline, "Value": cfg.StackName}}

			tests := []struct {
				id        string
				metric    obj // MetricName, Namespace, Dimensions, Statistic, Period
				operator  string
				threshold float64
				periods   int
				missing   string
				// datapoints defaults to periods.
				datapoints int
			}{
				// The credit summary's figure, else the monitor's estimate
				// (the summary refusing API keys).
				{"CreditsLow", obj{"Metrics": arrayWith(
					like(obj{"Expression": "IF(FILL(read, -1) >= 0, read, estimated)", "ReturnData": true}),
					like(obj{"Id": "estimated", "MetricStat": like(obj{"Metric": obj{"MetricName": metricnames.CreditsEstimated, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline}, "Stat": "Minimum", "Period": monitorPeriod})}),
					like(obj{"Id": "read", "MetricStat": like(obj{"Metric": obj{"MetricName": metricnames.CreditsRemaining, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline}, "Stat": "Minimum", "Period": monitorPeriod})}),
				)}, "LessThanThreshold", cfg.CreditsLowThreshold, 1, "ignore", 0},
				{"CreditsRunningOut", obj{"MetricName": metricnames.CreditDaysRemaining, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline, "Statistic": "Minimum", "Period": monitorPeriod},
					"LessThanThreshold", cfg.CreditsForecastDays, 1, "ignore", 0},
				{"ConfiguredModelUnavailable", obj{"MetricName": metricnames.ConfiguredModelAvailable, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline, "Statistic": "Maximum", "Period": monitorPeriod},
					"LessThanThreshold", 1, 2, "ignore", 0},
				// Due (the schedule invoked the monitor) without a healthy run.
				{"MonitorHeartbeat", obj{"Metrics": arrayWith(
					like(obj{"Expression": "IF(FILL(due,0) > 0 AND FILL(healthy,0) < 1, 1, 0)", "ReturnData": true}),
					like(obj{"Id": "due", "MetricStat": like(obj{"Metric": obj{"MetricName": "Invocations", "Namespace": "AWS/Events", "Dimensions": []any{obj{"Name": "RuleName", "Value": obj{"Ref": ruleID}}}}, "Stat": "Sum", "Period": monitorPeriod})}),
					like(obj{"Id": "healthy", "MetricStat": like(obj{"Metric": obj{"MetricName": metricnames.MonitorHealthy, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline}, "Stat": "Minimum", "Period": monitorPeriod})}),
				)}, "GreaterThanOrEqualToThreshold", 1, 2, "notBreaching", 0},
				{"PredictorErrors", obj{"MetricName": "Errors", "Namespace": "AWS/Lambda", "Dimensions": []any{obj{"Name": "FunctionName", "Value": obj{"Ref": predictorID}}}, "Statistic": "Sum"},
					"GreaterThanOrEqualToThreshold", 1, redeliveryPeriods(cfg), "notBreaching", 1},
				{"PredictorThrottles", obj{"MetricName": "Throttles", "Namespace": "AWS/Lambda", "Dimensions": []any{obj{"Name": "FunctionName", "Value": obj{"Ref": predictorID}}}, "Statistic": "Sum"},
					"GreaterThanOrEqualToThreshold", 1, redeliveryPeriods(cfg), "notBreaching", 1},
				{"DeadLetters", obj{"MetricName": "ApproximateNumberOfMessagesVisible", "Namespace": "AWS/SQS", "Dimensions": []any{obj{"Name": "QueueName", "Value": obj{"Fn::GetAtt": []any{dlqID, "QueueName"}}}}},
					"GreaterThanOrEqualToThreshold", 1, 1, "notBreaching", 0},
				// A second page before the oldest dead letter can expire:
				// half the grace the retentions leave it.
				{"DeadLetterAge", obj{"MetricName": "ApproximateAgeOfOldestMessage", "Namespace": "AWS/SQS", "Dimensions": []any{obj{"Name": "QueueName", "Value": obj{"Fn::GetAtt": []any{dlqID, "QueueName"}}}}, "Statistic": "Maximum"},
					"GreaterThanOrEqualToThreshold", 2 * 24 * 3600, 1, "notBreaching", 0},
				{"QueueBacklogAge", obj{"MetricName": "ApproximateAgeOfOldestMessage", "Namespace": "AWS/SQS", "Dimensions": []any{obj{"Name": "QueueName", "Value": obj{"Fn::GetAtt": []any{queueID, "QueueName"}}}}},
					"GreaterThanOrEqualToThreshold", cfg.QueueAgeAlarm.Seconds(), 1, "notBreaching", 0},
				// One 402 per visibility timeout, or the monitor's balance
				// between returns hours apart, must keep it in ALARM.
				{"OutOfCredits", obj{"Metrics": arrayWith(
					like(obj{"Expression": "IF(FILL(nocredits,0) >= 1 OR FILL(balance,1) < 1, 1, 0)", "ReturnData": true}),
					like(obj{"Id": "balance", "MetricStat": like(obj{"Metric": obj{"MetricName": metricnames.CreditsRemaining, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline}, "Stat": "Minimum"})}),
					like(obj{"Id": "nocredits", "MetricStat": like(obj{"Metric": obj{"MetricName": metricnames.OutOfCredits, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline}, "Stat": "Sum"})}),
				)}, "GreaterThanOrEqualToThreshold", 1, outOfCreditsPeriods(cfg), "notBreaching", 1},
				{"QueueStalled", obj{"Metrics": arrayWith(
					like(obj{"Expression": "IF(FILL(waiting,0) + FILL(inflight,0) > 0 AND FILL(deleted,0) == 0 AND " +
						"FILL(errors,0) + FILL(throttles,0) + FILL(nocredits,0) + FILL(deferred,0) == 0 AND FILL(balance,1) >= 1, 1, 0)", "ReturnData": true}),
					like(obj{"Id": "balance", "MetricStat": like(obj{"Metric": obj{"MetricName": metricnames.CreditsRemaining, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline}, "Stat": "Minimum"})}),
					like(obj{"Id": "deferred", "MetricStat": like(obj{"Metric": obj{"MetricName": metricnames.BudgetDeferred, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline}, "Stat": "Sum"})}),
					like(obj{"Id": "deleted", "MetricStat": like(obj{"Metric": obj{"MetricName": "NumberOfMessagesDeleted", "Namespace": "AWS/SQS", "Dimensions": []any{obj{"Name": "QueueName", "Value": obj{"Fn::GetAtt": []any{queueID, "QueueName"}}}}}, "Stat": "Sum"})}),
					like(obj{"Id": "errors", "MetricStat": like(obj{"Metric": obj{"MetricName": "Errors", "Namespace": "AWS/Lambda", "Dimensions": []any{obj{"Name": "FunctionName", "Value": obj{"Ref": predictorID}}}}, "Stat": "Sum"})}),
					like(obj{"Id": "inflight", "MetricStat": like(obj{"Metric": obj{"MetricName": "ApproximateNumberOfMessagesNotVisible", "Namespace": "AWS/SQS", "Dimensions": []any{obj{"Name": "QueueName", "Value": obj{"Fn::GetAtt": []any{queueID, "QueueName"}}}}}, "Stat": "Maximum"})}),
					like(obj{"Id": "nocredits", "MetricStat": like(obj{"Metric": obj{"MetricName": metricnames.OutOfCredits, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline}, "Stat": "Sum"})}),
					like(obj{"Id": "throttles", "MetricStat": like(obj{"Metric": obj{"MetricName": "Throttles", "Namespace": "AWS/Lambda", "Dimensions": []any{obj{"Name": "FunctionName", "Value": obj{"Ref": predictorID}}}}, "Stat": "Sum"})}),
					like(obj{"Id": "waiting", "MetricStat": like(obj{"Metric": obj{"MetricName": "ApproximateNumberOfMessagesVisible", "Namespace": "AWS/SQS", "Dimensions": []any{obj{"Name": "QueueName", "Value": obj{"Fn::GetAtt": []any{queueID, "QueueName"}}}}}, "Stat": "Maximum"})}),
				)}, "GreaterThanOrEqualToThreshold", 1, stalledPeriods(cfg), "notBreaching", 0},
				// arrayWith keeps order: the expression comes first, then its inputs by id.
				{"FailedPredictionRate", obj{"Metrics": arrayWith(
					// A rate only for periods with at least minImagesForRate images.
					like(obj{"Expression": fmt.Sprintf("IF((FILL(ok,0) + FILL(rejected,0) + FILL(failed,0)) >= %d, 100 * FILL(failed,0) / (FILL(ok,0) + FILL(rejected,0) + FILL(failed,0)))", minImagesForRate), "ReturnData": true}),
					like(obj{"Id": "failed", "MetricStat": like(obj{"Metric": obj{"MetricName": metricnames.ImagesFailed, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline}, "Stat": "Sum"})}),
					like(obj{"Id": "ok", "MetricStat": like(obj{"Metric": obj{"MetricName": metricnames.ImagesSucceeded, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline}, "Stat": "Sum"})}),
					like(obj{"Id": "rejected", "MetricStat": like(obj{"Metric": obj{"MetricName": metricnames.ImagesRejected, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline}, "Stat": "Sum"})}),
				)}, "GreaterThanThreshold", cfg.FailedPredictionRateThreshold, 1, "notBreaching", 0},
				// A running job without an object ending for half an hour;
				// the monitor publishes 0 without one, so silence is the
				// heartbeat's.
				{"JobStalled", obj{"MetricName": metricnames.JobMinutesSinceProgress, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline, "Statistic": "Maximum", "Period": monitorPeriod},
					"GreaterThanOrEqualToThreshold", 30, 1, "ignore", 0},
			}
			if eventsDLQ := s.resultEventsDeadLetterQueueID(t); eventsDLQ != "" {
				tests = append(tests, struct {
					id         string
					metric     obj
					operator   string
					threshold  float64
					periods    int
					missing    string
					datapoints int
				}{"ResultEventsUndelivered", obj{"MetricName": "ApproximateNumberOfMessagesVisible", "Namespace": "AWS/SQS", "Dimensions": []any{obj{"Name": "QueueName", "Value": obj{"Fn::GetAtt": []any{eventsDLQ, "QueueName"}}}}, "Statistic": "Maximum"},
					"GreaterThanOrEqualToThreshold", 1, 1, "notBreaching", 0})
			}
			if got := len(s.resources("AWS::CloudWatch::Alarm")); got != len(tests) {
				t.Errorf("%d alarms, want %d", got, len(tests))
			}
			for _, tt := range tests {
				if tt.datapoints == 0 {
					tt.datapoints = tt.periods
				}
				props := obj{
					"AlarmName":          cfg.StackName + "/" + tt.id,
					"ComparisonOperator": tt.operator,
					"Threshold":          tt.threshold,
					"EvaluationPeriods":  tt.periods,
					"DatapointsToAlarm":  tt.datapoints,
					"TreatMissingData":   tt.missing,
					// Both firing and recovery reach the topic.
					"AlarmActions": []any{obj{"Ref": topicID}},
					"OKActions":    []any{obj{"Ref": topicID}},
				}
				for k, v := range tt.metric {
					props[k] = v
				}
				check(t, tt.id, func() { s.template.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), props) })
			}
		})
	}
}

func TestAlarmTopicIsEncryptedTLSOnlyAndSubscribed(t *testing.T) {
	a := synthApp(t)
	for name, s := range a.scenarios() {
		t.Run(name, func(t *testing.T) {
			keyID, key := s.onlyResource(t, "AWS::KMS::Key", nil)
			topicID, topic := s.onlyResource(t, "AWS::SNS::Topic", nil)
			if asJSON(topic["KmsMasterKeyId"]) != getAtt(keyID, "Arn") {
				t.Errorf("topic key = %v, want %s", topic["KmsMasterKeyId"], keyID)
			}
			if key["EnableKeyRotation"] != true {
				t.Error("key rotation disabled")
			}
			// CloudWatch must be able to use the key and publish to the
			// topic (whose policy replaces SNS's default one), or alarms
			// never arrive; only for this stack's alarms.
			alarmArns := obj{"Fn::Join": []any{"", []any{
				"arn:", obj{"Ref": "AWS::Partition"}, ":cloudwatch:", obj{"Ref": "AWS::Region"}, ":", obj{"Ref": "AWS::AccountId"}, ":alarm:" + s.cfg.StackName + "/*",
			}}}
			fromOurAlarms := obj{
				"StringEquals": obj{"aws:SourceAccount": obj{"Ref": "AWS::AccountId"}},
				"ArnLike":      obj{"aws:SourceArn": alarmArns},
			}
			check(t, "key policy lets CloudWatch alarms use the key", func() {
				s.template.HasResourceProperties(jsii.String("AWS::KMS::Key"), obj{
					"KeyPolicy": like(obj{"Statement": arrayWith(obj{
						"Sid":       "AllowCloudWatchAlarmsToPublish",
						"Effect":    "Allow",
						"Principal": obj{"Service": "cloudwatch.amazonaws.com"},
						"Action":    []any{"kms:Decrypt", "kms:GenerateDataKey*"},
						"Resource":  "*",
						"Condition": fromOurAlarms,
					})}),
				})
			})
			check(t, "topic policy lets CloudWatch alarms publish", func() {
				s.template.HasResourceProperties(jsii.String("AWS::SNS::TopicPolicy"), obj{
					"Topics": []any{obj{"Ref": topicID}},
					"PolicyDocument": like(obj{"Statement": arrayWith(obj{
						"Sid":       "AllowCloudWatchAlarmsToPublish",
						"Effect":    "Allow",
						"Principal": obj{"Service": "cloudwatch.amazonaws.com"},
						"Action":    "sns:Publish",
						"Resource":  obj{"Ref": topicID},
						"Condition": fromOurAlarms,
					})}),
				})
			})
			// Every alarm's name matches the pattern, or its notifications
			// are refused.
			for id, alarm := range s.resources("AWS::CloudWatch::Alarm") {
				if name, _ := alarm["Properties"].(obj)["AlarmName"].(string); !strings.HasPrefix(name, s.cfg.StackName+"/") {
					t.Errorf("alarm %s is named %q, outside the policies' %s/* pattern", id, name, s.cfg.StackName)
				}
			}
			check(t, "TLS only", func() {
				s.template.HasResourceProperties(jsii.String("AWS::SNS::TopicPolicy"), obj{
					"Topics":         []any{obj{"Ref": topicID}},
					"PolicyDocument": like(obj{"Statement": arrayWith(like(denyInsecureTransport))}),
				})
			})
		})
	}
	check(t, "e-mail subscription, undeliverable notifications kept", func() {
		a.created.template.HasResourceProperties(jsii.String("AWS::SNS::Subscription"), obj{
			"Protocol": "email", "Endpoint": a.created.cfg.AlarmEmail,
			"RedrivePolicy": obj{"deadLetterTargetArn": obj{"Fn::GetAtt": []any{monitoringFailuresID(t, a.created), "Arn"}}},
		})
	})
	if n := len(a.imported.resources("AWS::SNS::Subscription")); n != 0 {
		t.Errorf("no alarmEmail, yet %d subscriptions", n)
	}
}

// monitoringFailuresID is the queue that is neither the upload queue nor
// its dead-letter queue nor the results pipe's dead-letter queue.
func monitoringFailuresID(t *testing.T, s *synthesized) string {
	t.Helper()
	queueID, dlqID := s.uploadQueueIDs(t)
	eventsDLQ := s.resultEventsDeadLetterQueueID(t)
	var others []string
	for id := range s.resources("AWS::SQS::Queue") {
		if id != queueID && id != dlqID && id != eventsDLQ {
			others = append(others, id)
		}
	}
	if len(others) != 1 {
		t.Fatalf("want one monitoring failures queue, found %v", others)
	}
	return others[0]
}
func TestAlarmWindowsCoverTheRetryCadence(t *testing.T) {
	for _, timeout := range []time.Duration{30 * time.Second, 120 * time.Second, 900 * time.Second} {
		cfg := Config{PredictorTimeout: timeout}
		period := flowPeriodMinutes * time.Minute
		// However the periods align, the window holds a whole visibility
		// timeout, so one 402 per visibility timeout is always inside it.
		if w := time.Duration(redeliveryPeriods(cfg)) * period; w < cfg.QueueVisibilityTimeout()+period || w > 24*time.Hour {
			t.Errorf("timeout %v: redelivery window %v, want at least %v and at most a day", timeout, w, cfg.QueueVisibilityTimeout()+period)
		}
		for _, schedule := range []time.Duration{5 * time.Minute, time.Hour, 24 * time.Hour} {
			cfg.MonitorSchedule = schedule
			w := time.Duration(outOfCreditsPeriods(cfg)) * period
			if w > 24*time.Hour || (w < cfg.QueueVisibilityTimeout()+period || w < schedule+period) && w != 24*time.Hour {
				t.Errorf("timeout %v, monitor every %v: OutOfCredits window %v, want a visibility timeout and a monitor run, at most a day", timeout, schedule, w)
			}
		}
		if w := time.Duration(stalledPeriods(cfg)) * period; w < cfg.QueueVisibilityTimeout()+cfg.PredictorTimeout+period || w > 24*time.Hour {
			t.Errorf("timeout %v: QueueStalled window %v is shorter than a retry", timeout, w)
		}
	}
}
