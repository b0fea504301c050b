package main

import (
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/geolocate-aws/geolocate/pkg/metricnames"
)

func TestAlarms(t *testing.T) {
	for name, s := range synthApp(t).scenarios() {
		t.Run(name, func(t *testing.T) {
			cfg := s.cfg
			topicID, _ := s.onlyResource(t, "AWS::SNS::Topic", nil)
			predictorID, _ := s.onlyResource(t, "AWS::Lambda::Function", isPredictor)
			queueID, _ := s.onlyResource(t, "AWS::SQS::Queue", func(p obj) bool { return p["RedrivePolicy"] != nil })
			dlqID, _ := s.onlyResource(t, "AWS::SQS::Queue", func(p obj) bool { return p["RedrivePolicy"] == nil })
			monitorPeriod := cfg.MonitorSchedule.Seconds()
			pipeline := []any{obj{"Name": metricnames.DimPipeline, "Value": cfg.StackName}}

			tests := []struct {
				id        string
				metric    obj // MetricName, Namespace, Dimensions, Statistic, Period
				operator  string
				threshold float64
				periods   int
				missing   string
			}{
				{"CreditsLow", obj{"MetricName": metricnames.CreditsRemaining, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline, "Statistic": "Minimum", "Period": monitorPeriod},
					"LessThanThreshold", cfg.CreditsLowThreshold, 1, "ignore"},
				{"CreditsRunningOut", obj{"MetricName": metricnames.CreditDaysRemaining, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline, "Statistic": "Minimum", "Period": monitorPeriod},
					"LessThanThreshold", cfg.CreditsForecastDays, 1, "notBreaching"},
				{"ConfiguredModelUnavailable", obj{"MetricName": metricnames.ConfiguredModelAvailable, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline, "Statistic": "Maximum", "Period": monitorPeriod},
					"LessThanThreshold", 1, 2, "ignore"},
				{"MonitorHeartbeat", obj{"MetricName": metricnames.MonitorHealthy, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline, "Statistic": "Minimum", "Period": monitorPeriod},
					"LessThanThreshold", 1, 2, "breaching"},
				{"PredictorErrors", obj{"MetricName": "Errors", "Namespace": "AWS/Lambda", "Dimensions": []any{obj{"Name": "FunctionName", "Value": obj{"Ref": predictorID}}}, "Statistic": "Sum"},
					"GreaterThanOrEqualToThreshold", 1, 1, "notBreaching"},
				{"PredictorThrottles", obj{"MetricName": "Throttles", "Namespace": "AWS/Lambda", "Dimensions": []any{obj{"Name": "FunctionName", "Value": obj{"Ref": predictorID}}}, "Statistic": "Sum"},
					"GreaterThanOrEqualToThreshold", 1, 1, "notBreaching"},
				{"DeadLetters", obj{"MetricName": "ApproximateNumberOfMessagesVisible", "Namespace": "AWS/SQS", "Dimensions": []any{obj{"Name": "QueueName", "Value": obj{"Fn::GetAtt": []any{dlqID, "QueueName"}}}}},
					"GreaterThanOrEqualToThreshold", 1, 1, "notBreaching"},
				{"QueueBacklogAge", obj{"MetricName": "ApproximateAgeOfOldestMessage", "Namespace": "AWS/SQS", "Dimensions": []any{obj{"Name": "QueueName", "Value": obj{"Fn::GetAtt": []any{queueID, "QueueName"}}}}},
					"GreaterThanOrEqualToThreshold", cfg.QueueAgeAlarm.Seconds(), 1, "notBreaching"},
				{"OutOfCredits", obj{"MetricName": metricnames.OutOfCredits, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline, "Statistic": "Sum"},
					"GreaterThanOrEqualToThreshold", 1, 1, "notBreaching"},
				// arrayWith keeps order: the expression comes first, then its inputs by id.
				{"FailedPredictionRate", obj{"Metrics": arrayWith(
					like(obj{"Expression": assertions.Match_StringLikeRegexp(jsii.String(`100 \* FILL\(failed,0\) /`)), "ReturnData": true}),
					like(obj{"Id": "failed", "MetricStat": like(obj{"Metric": obj{"MetricName": metricnames.ImagesFailed, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline}, "Stat": "Sum"})}),
					like(obj{"Id": "ok", "MetricStat": like(obj{"Metric": obj{"MetricName": metricnames.ImagesSucceeded, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline}, "Stat": "Sum"})}),
					like(obj{"Id": "rejected", "MetricStat": like(obj{"Metric": obj{"MetricName": metricnames.ImagesRejected, "Namespace": metricnames.DefaultNamespace, "Dimensions": pipeline}, "Stat": "Sum"})}),
				)}, "GreaterThanThreshold", cfg.FailedPredictionRateThreshold, 1, "notBreaching"},
			}
			if got := len(s.resources("AWS::CloudWatch::Alarm")); got != len(tests) {
				t.Errorf("%d alarms, want %d", got, len(tests))
			}
			for _, tt := range tests {
				props := obj{
					"AlarmName":          cfg.StackName + "-" + tt.id,
					"ComparisonOperator": tt.operator,
					"Threshold":          tt.threshold,
					"EvaluationPeriods":  tt.periods,
					"DatapointsToAlarm":  tt.periods,
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
			// CloudWatch must be able to use the key, or alarms never arrive.
			if policy := asJSON(key["KeyPolicy"]); !strings.Contains(policy, `"cloudwatch.amazonaws.com"`) || !strings.Contains(policy, `"kms:GenerateDataKey"`) {
				t.Errorf("key policy does not let CloudWatch publish: %s", policy)
			}
			check(t, "TLS only", func() {
				s.template.HasResourceProperties(jsii.String("AWS::SNS::TopicPolicy"), obj{
					"Topics":         []any{obj{"Ref": topicID}},
					"PolicyDocument": like(obj{"Statement": arrayWith(like(denyInsecureTransport))}),
				})
			})
		})
	}
	check(t, "e-mail subscription", func() {
		a.created.template.HasResourceProperties(jsii.String("AWS::SNS::Subscription"), obj{
			"Protocol": "email", "Endpoint": a.created.cfg.AlarmEmail,
		})
	})
	if n := len(a.imported.resources("AWS::SNS::Subscription")); n != 0 {
		t.Errorf("no alarmEmail, yet %d subscriptions", n)
	}
}
