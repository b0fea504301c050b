package main

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
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
//
// failures receives notifications SNS could not deliver to a subscriber
// after its retries (e.g. a rejecting mail server), so an alarm is not lost
// without a trace.
func newAlarmTopic(stack awscdk.Stack, cfg Config, failures awssqs.IQueue) awssns.Topic {
	key := awskms.NewKey(stack, jsii.String("AlarmTopicKey"), &awskms.KeyProps{
		Description:       jsii.String("Encrypts the alarm topic of " + *stack.StackName()),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     cfg.removalPolicy(),
	})
	// CloudWatch publishes an alarm's notification itself, as the service
	// principal: it needs the key (SNS encrypts the message with a data key)
	// and sns:Publish in the topic policy, which replaces SNS's default
	// policy. Both are limited to alarms of this stack, by account and by
	// alarm ARN. The ARN is a pattern on the alarm names (<stack>-<id>), not
	// the list of the stack's alarm ARNs: the key policy cannot name the
	// alarms (alarm -> topic -> key -> alarm would be a dependency cycle),
	// and a pattern keeps covering alarms added or renamed later.
	alarmArns := stack.FormatArn(&awscdk.ArnComponents{
		Service:      jsii.String("cloudwatch"),
		Resource:     jsii.String("alarm"),
		ResourceName: jsii.String(*stack.StackName() + "-*"),
		ArnFormat:    awscdk.ArnFormat_COLON_RESOURCE_NAME,
	})
	fromOurAlarms := &map[string]any{
		"StringEquals": map[string]any{"aws:SourceAccount": stack.Account()},
		"ArnLike":      map[string]any{"aws:SourceArn": alarmArns},
	}
	cloudWatch := &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("cloudwatch.amazonaws.com"), nil)}
	key.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("AllowCloudWatchAlarmsToPublish"),
		Principals: cloudWatch,
		Actions:    jsii.Strings("kms:Decrypt", "kms:GenerateDataKey*"),
		Resources:  jsii.Strings("*"), // in a key policy "*" means this key
		Conditions: fromOurAlarms,
	}), jsii.Bool(false))

	topic := awssns.NewTopic(stack, jsii.String("AlarmTopic"), &awssns.TopicProps{
		DisplayName: jsii.String("Geolocation pipeline alarms (" + *stack.StackName() + ")"),
		MasterKey:   key,
		EnforceSSL:  jsii.Bool(true),
	})
	topic.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("AllowCloudWatchAlarmsToPublish"),
		Principals: cloudWatch,
		Actions:    jsii.Strings("sns:Publish"),
		Resources:  jsii.Strings(*topic.TopicArn()),
		Conditions: fromOurAlarms,
	}))
	if cfg.AlarmEmail != "" {
		topic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(cfg.AlarmEmail), &awssnssubscriptions.EmailSubscriptionProps{
			DeadLetterQueue: failures,
		}))
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
			// The monitor has no forecast while nothing is being spent, and
			// none while it is down: keep the last state either way and let
			// MonitorHeartbeat report a silent monitor, rather than turn OK.
			missingData: awscloudwatch.TreatMissingData_IGNORE,
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
			id: "QueueBacklogAge",
			// SQS leaves messages received three or more times out of this
			// metric, so it cannot see retry loops: QueueStalled does.
			description: "The oldest waiting upload (received fewer than three times) is older than queueAgeAlarmSeconds: the backlog drains too slowly (rate limit, budget or concurrency).",
			metric:      p.queue.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Period: flow, Statistic: jsii.String("Maximum")}),
			comparison:  awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			threshold:   cfg.QueueAgeAlarm.Seconds(),
			missingData: awscloudwatch.TreatMissingData_NOT_BREACHING,
		},
		{
			id:                "QueueStalled",
			description:       "Uploads wait or are in flight, yet none has been completed (deleted from the queue) for longer than a visibility timeout plus a predictor run: every attempt fails and is retried (or is held back by the budget or by missing credits).",
			metric:            queueStalled(p, flow),
			comparison:        awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			threshold:         1,
			evaluationPeriods: stalledPeriods(cfg),
			datapointsToAlarm: stalledPeriods(cfg),
			// SQS stops publishing only for an idle, empty queue.
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
			// A message refused with 402 comes back only after the queue's
			// visibility timeout, so while credits are out a 402 is seen
			// once per visibility timeout and the 5-minute periods between
			// are empty. One breaching period among enough periods to span a
			// visibility timeout plus one keeps the alarm in ALARM across
			// that gap; empty periods count as OK (notBreaching), so it turns
			// OK only after a whole window without a 402, once a retry went
			// through. A single SUM over one long period would still flap
			// when two 402s fall into non-adjacent periods.
			evaluationPeriods: outOfCreditsPeriods(cfg),
			datapointsToAlarm: 1,
			missingData:       awscloudwatch.TreatMissingData_NOT_BREACHING,
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

// periodsCovering is the number of flow periods that spans d and one more
// period, so a window always holds a whole d however it is aligned.
func periodsCovering(d time.Duration) int {
	period := flowPeriodMinutes * time.Minute
	return int((d+period-1)/period) + 1
}

// outOfCreditsPeriods spans the queue's visibility timeout, the gap between
// two deliveries of a refused message. At most 6 x 900 s, so at most 19
// five-minute periods, well within CloudWatch's one-day evaluation range.
func outOfCreditsPeriods(cfg Config) int {
	return periodsCovering(cfg.QueueVisibilityTimeout())
}

// stalledPeriods spans a visibility timeout plus a predictor run: a message
// that fails once is redelivered after the visibility timeout and may take a
// whole run to succeed, so a shorter window would flag one ordinary retry.
// At most 22 five-minute periods.
func stalledPeriods(cfg Config) int {
	return periodsCovering(cfg.QueueVisibilityTimeout() + cfg.PredictorTimeout)
}

// queueStalled is 1 for a period in which the upload queue holds messages,
// waiting or in flight, and none was deleted (a deletion is a finished
// upload), else 0. In flight counts because a message in a retry loop is
// invisible most of the time. Missing counts are zero (FILL).
func queueStalled(p *pipeline, period awscdk.Duration) awscloudwatch.IMetric {
	max := &awscloudwatch.MetricOptions{Statistic: jsii.String("Maximum"), Period: period}
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String("IF(FILL(waiting,0) + FILL(inflight,0) > 0 AND FILL(deleted,0) == 0, 1, 0)"),
		UsingMetrics: &map[string]awscloudwatch.IMetric{
			"waiting":  p.queue.MetricApproximateNumberOfMessagesVisible(max),
			"inflight": p.queue.MetricApproximateNumberOfMessagesNotVisible(max),
			"deleted":  p.queue.MetricNumberOfMessagesDeleted(&awscloudwatch.MetricOptions{Statistic: jsii.String("Sum"), Period: period}),
		},
		Label:  jsii.String("Queue stalled (1 = messages but no deletions)"),
		Period: period,
	})
}
