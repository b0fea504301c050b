package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/jsii-runtime-go"

	"github.com/geolocate-aws/geolocate/pkg/metricnames"
)

// Periods in minutes. The per-image flow is alarmed on over 5 minutes: short
// enough to page quickly, long enough to hold a few batches. The failure rate
// uses 15 so one failure among few images is a rate, not a coin toss.
const (
	flowPeriodMinutes        = 5
	failureRatePeriodMinutes = 15
)

func minutes(n float64) awscdk.Duration { return awscdk.Duration_Minutes(jsii.Number(n)) }

// newAlarmTopic creates the topic every alarm notifies, encrypted with a
// customer managed key: CloudWatch cannot publish to a topic encrypted with
// the AWS managed SNS key, so the key policy must name CloudWatch.
func newAlarmTopic(stack awscdk.Stack, cfg Config) awssns.Topic {
	key := awskms.NewKey(stack, jsii.String("AlarmTopicKey"), &awskms.KeyProps{
		Description:       jsii.String("Encrypts the alarm topic of " + *stack.StackName()),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     cfg.removalPolicy(),
	})
	key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("AllowCloudWatchAlarmsToPublish"),
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("cloudwatch.amazonaws.com"), nil)},
		Actions:    jsii.Strings("kms:Decrypt", "kms:GenerateDataKey"),
		Resources:  jsii.Strings("*"), // in a key policy "*" means this key
		Conditions: &map[string]any{
			"StringEquals": map[string]any{"aws:SourceAccount": stack.Account()},
		},
	}), jsii.Bool(false))

	topic := awssns.NewTopic(stack, jsii.String("AlarmTopic"), &awssns.TopicProps{
		DisplayName: jsii.String("Geolocation pipeline alarms (" + *stack.StackName() + ")"),
		MasterKey:   key,
		EnforceSSL:  jsii.Bool(true),
	})
	if cfg.AlarmEmail != "" {
		topic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(cfg.AlarmEmail), nil))
	}
	return topic
}

// alarmSpec describes one alarm; every field is chosen per alarm, including
// what missing data means.
type alarmSpec struct {
	id          string
	description string
	metric      awscloudwatch.IMetric
	comparison  awscloudwatch.ComparisonOperator
	threshold   float64
	// evaluationPeriods and datapointsToAlarm default to 1.
	evaluationPeriods int
	datapointsToAlarm int
	missingData       awscloudwatch.TreatMissingData
}

// newAlarms creates every alarm, each notifying the topic when it fires and
// when it recovers. The map is keyed by alarm id.
func newAlarms(stack awscdk.Stack, p *pipeline) map[string]awscloudwatch.Alarm {
	cfg := p.cfg
	m := p.metrics
	// Monitor metrics arrive once per run, so their period is the schedule.
	// Two such periods stay within CloudWatch's evaluation range for every
	// allowed schedule (1 day below an hour's period, 7 days from one hour).
	monitorPeriod := minutes(cfg.MonitorSchedule.Minutes())
	flow := minutes(flowPeriodMinutes)
	sum := func(name string) awscloudwatch.Metric { return m.metric(name, "Sum", flow) }

	specs := []alarmSpec{
		{
			id:          "CreditsLow",
			description: "Remaining credits are below creditsLowThreshold; top up before predictions stop.",
			metric:      m.metric(metricnames.CreditsRemaining, "Minimum", monitorPeriod),
			comparison:  awscloudwatch.ComparisonOperator_LESS_THAN_THRESHOLD,
			threshold:   cfg.CreditsLowThreshold,
			// No reading says nothing about credits; keep the last state and
			// let MonitorHeartbeat report the silence.
			missingData: awscloudwatch.TreatMissingData_IGNORE,
		},
		{
			id:          "CreditsRunningOut",
			description: "At the current burn rate credits run out within creditsForecastDays.",
			metric:      m.metric(metricnames.CreditDaysRemaining, "Minimum", monitorPeriod),
			comparison:  awscloudwatch.ComparisonOperator_LESS_THAN_THRESHOLD,
			threshold:   cfg.CreditsForecastDays,
			// The monitor has no forecast while nothing is being spent.
			missingData: awscloudwatch.TreatMissingData_NOT_BREACHING,
		},
		{
			id:                "ConfiguredModelUnavailable",
			description:       "The model predictions use is not listed as ready by the service.",
			metric:            m.metric(metricnames.ConfiguredModelAvailable, "Maximum", monitorPeriod),
			comparison:        awscloudwatch.ComparisonOperator_LESS_THAN_THRESHOLD,
			threshold:         1,
			evaluationPeriods: 2,
			datapointsToAlarm: 2,
			// As for credits: silence is MonitorHeartbeat's to report.
			missingData: awscloudwatch.TreatMissingData_IGNORE,
		},
		{
			id:                "MonitorHeartbeat",
			description:       "The monitor has not completed a healthy run for two schedule periods: credit and model alarms are blind.",
			metric:            m.metric(metricnames.MonitorHealthy, "Minimum", monitorPeriod),
			comparison:        awscloudwatch.ComparisonOperator_LESS_THAN_THRESHOLD,
			threshold:         1,
			evaluationPeriods: 2,
			datapointsToAlarm: 2,
			// A monitor that does not run emits nothing: silence is the failure.
			missingData: awscloudwatch.TreatMissingData_BREACHING,
		},
		{
			id:          "PredictorErrors",
			description: "Predictor invocations failed as a whole (crash or timeout); their messages will be retried.",
			metric:      p.predictor.MetricErrors(&awscloudwatch.MetricOptions{Period: flow, Statistic: jsii.String("Sum")}),
			comparison:  awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			threshold:   1,
			// No invocations, no errors.
			missingData: awscloudwatch.TreatMissingData_NOT_BREACHING,
		},
		{
			id:          "PredictorThrottles",
			description: "Lambda throttled the predictor (account concurrency exhausted).",
			metric:      p.predictor.MetricThrottles(&awscloudwatch.MetricOptions{Period: flow, Statistic: jsii.String("Sum")}),
			comparison:  awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			threshold:   1,
			missingData: awscloudwatch.TreatMissingData_NOT_BREACHING,
		},
		{
			id:          "DeadLetters",
			description: "Uploads gave up after dlqMaxReceiveCount attempts and wait in the dead-letter queue; inspect and redrive.",
			metric:      p.deadLetters.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: flow, Statistic: jsii.String("Maximum")}),
			comparison:  awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			threshold:   1,
			// SQS stops publishing for an idle, empty queue.
			missingData: awscloudwatch.TreatMissingData_NOT_BREACHING,
		},
		{
			id:          "QueueBacklogAge",
			description: "The oldest waiting upload is older than queueAgeAlarmSeconds (stalled predictor, rate limit or budget).",
			metric:      p.queue.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Period: flow, Statistic: jsii.String("Maximum")}),
			comparison:  awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			threshold:   cfg.QueueAgeAlarm.Seconds(),
			missingData: awscloudwatch.TreatMissingData_NOT_BREACHING,
		},
		{
			id:          "FailedPredictionRate",
			description: "The share of images that failed (percent of succeeded + rejected + failed) is above failedPredictionRateThreshold.",
			metric:      failedPredictionRate(m),
			comparison:  awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			threshold:   cfg.FailedPredictionRateThreshold,
			// No images handled, no failure rate.
			missingData: awscloudwatch.TreatMissingData_NOT_BREACHING,
		},
		{
			id:          "OutOfCredits",
			description: "The service answered 402: the account has no credits left and predictions are not being made.",
			metric:      sum(metricnames.OutOfCredits),
			comparison:  awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			threshold:   1,
			missingData: awscloudwatch.TreatMissingData_NOT_BREACHING,
		},
	}

	action := awscloudwatchactions.NewSnsAction(p.topic)
	alarms := make(map[string]awscloudwatch.Alarm, len(specs))
	for _, s := range specs {
		alarm := awscloudwatch.NewAlarm(stack, jsii.String(s.id+"Alarm"), &awscloudwatch.AlarmProps{
			AlarmName:          jsii.String(*stack.StackName() + "-" + s.id),
			AlarmDescription:   jsii.String(s.description),
			Metric:             s.metric,
			ComparisonOperator: s.comparison,
			Threshold:          jsii.Number(s.threshold),
			EvaluationPeriods:  jsii.Number(max(s.evaluationPeriods, 1)),
			DatapointsToAlarm:  jsii.Number(max(s.datapointsToAlarm, 1)),
			TreatMissingData:   s.missingData,
		})
		alarm.AddAlarmAction(action)
		alarm.AddOkAction(action)
		alarms[s.id] = alarm
	}
	return alarms
}

// failedPredictionRate is ImagesFailed as a percentage of all images handled.
// FILL makes a missing count zero, and IF avoids dividing by zero.
func failedPredictionRate(m pipelineMetrics) awscloudwatch.IMetric {
	period := minutes(failureRatePeriodMinutes)
	sum := func(name string) awscloudwatch.IMetric { return m.metric(name, "Sum", period) }
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String("IF(FILL(ok,0) + FILL(rejected,0) + FILL(failed,0) > 0, " +
			"100 * FILL(failed,0) / (FILL(ok,0) + FILL(rejected,0) + FILL(failed,0)), 0)"),
		UsingMetrics: &map[string]awscloudwatch.IMetric{
			"ok":       sum(metricnames.ImagesSucceeded),
			"rejected": sum(metricnames.ImagesRejected),
			"failed":   sum(metricnames.ImagesFailed),
		},
		Label:  jsii.String("Failed images (%)"),
		Period: period,
	})
}
