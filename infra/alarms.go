package main

import (
	"fmt"
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

	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
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
	// The key encrypts only notifications in transit through the topic,
	// which goes with the stack: nothing retained is encrypted with it, so
	// it is always scheduled for deletion with the stack, after KMS's
	// shortest waiting period (a key pending deletion is not billed), instead
	// of costing a month's key fee forever.
	key := awskms.NewKey(stack, jsii.String("AlarmTopicKey"), &awskms.KeyProps{
		Description:       jsii.String("Encrypts the alarm topic of " + *stack.StackName()),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     awscdk.RemovalPolicy_DESTROY,
		PendingWindow:     awscdk.Duration_Days(jsii.Number(minKeyPendingWindowDays)),
	})
	// CloudWatch publishes an alarm's notification itself, as the service
	// principal: it needs the key (SNS encrypts the message with a data key)
	// and sns:Publish in the topic policy, which replaces SNS's default
	// policy. Both are limited to alarms of this stack, by account and by
	// alarm ARN. The ARN is a pattern on the alarm names (<stack>-<id>), not
	// the list of the stack's alarm ARNs: the key policy cannot name the
	// alarms (alarm -> topic -> key -> alarm would be a dependency cycle),
	// and a pattern keeps covering alarms added or renamed later. The
	// separator after the stack name cannot occur in a stack name, so the
	// pattern of stack Geolocation does not also match the alarms of a
	// stack named Geolocation-dev.
	alarmArns := stack.FormatArn(&awscdk.ArnComponents{
		Service:      jsii.String("cloudwatch"),
		Resource:     jsii.String("alarm"),
		ResourceName: jsii.String(alarmName(*stack.StackName(), "*")),
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

// minKeyPendingWindowDays is the shortest wait KMS allows before it deletes
// a key scheduled for deletion.
const minKeyPendingWindowDays = 7

// alarmNameSeparator joins the stack name and an alarm's id. Stack names
// hold only letters, digits and hyphens, so no other stack's alarms share
// the prefix <stack>/.
const alarmNameSeparator = "/"

// alarmName is the name of the alarm id of stack stackName.
func alarmName(stackName, id string) string { return stackName + alarmNameSeparator + id }

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

	specs := []alarmSpec{
		{
			id: "CreditsLow",
			description: "Remaining credits are below creditsLowThreshold; top up before predictions stop. " +
				"Rests on the service's credit summary (CreditsRemaining) when it takes the API key; when the service " +
				"refuses keys there, on CreditsEstimated: the last balance read, or one declared with geolocate credits --declare, " +
				"minus the credits the pipeline's records show consumed since. The monitor's log and report say which.",
			metric:     creditsKnown(m, monitorPeriod),
			comparison: awscloudwatch.ComparisonOperator_LESS_THAN_THRESHOLD,
			threshold:  cfg.CreditsLowThreshold,
			// No reading says nothing about credits; keep the last state and
			// let MonitorHeartbeat report the silence.
			missingData: awscloudwatch.TreatMissingData_IGNORE,
		},
		{
			id: "CreditsRunningOut",
			description: "At the current burn rate credits run out within creditsForecastDays. " +
				"Rests on the monitor's readings of the balance: the credit summary, or the estimate while the service refuses keys there (see CreditsLow).",
			metric:     m.metric(metricnames.CreditDaysRemaining, "Minimum", monitorPeriod),
			comparison: awscloudwatch.ComparisonOperator_LESS_THAN_THRESHOLD,
			threshold:  cfg.CreditsForecastDays,
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
			id: "MonitorHeartbeat",
			description: "The schedule invoked the monitor but it reported no healthy run, for two schedule periods in a row: credit and model alarms are blind. " +
				"A credit summary that refuses API keys is a known state, not a failure: it does not make a run unhealthy.",
			metric:     monitorHeartbeat(p, monitorPeriod),
			comparison: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			threshold:  1,
			// Two periods: a run reported just after a period boundary
			// leaves one period with a trigger and no report.
			evaluationPeriods: 2,
			datapointsToAlarm: 2,
			// The expression FILLs its inputs, so it always has data.
			missingData: awscloudwatch.TreatMissingData_NOT_BREACHING,
		},
		{
			id:          "PredictorErrors",
			description: "Predictor invocations failed as a whole (crash or timeout); their messages will be retried.",
			metric:      p.predictor.MetricErrors(&awscloudwatch.MetricOptions{Period: flow, Statistic: jsii.String("Sum")}),
			comparison:  awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			threshold:   1,
			// A failed invocation's messages come back only after the
			// visibility timeout, so a predictor that fails every time fails
			// once per visibility timeout when uploads are few: one
			// breaching period in a window spanning that gap keeps the alarm
			// in ALARM instead of flapping at every redelivery.
			evaluationPeriods: redeliveryPeriods(cfg),
			datapointsToAlarm: 1,
			// No invocations, no errors.
			missingData: awscloudwatch.TreatMissingData_NOT_BREACHING,
		},
		{
			id:          "PredictorThrottles",
			description: "Lambda throttled the predictor (account concurrency exhausted).",
			metric:      p.predictor.MetricThrottles(&awscloudwatch.MetricOptions{Period: flow, Statistic: jsii.String("Sum")}),
			comparison:  awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			threshold:   1,
			// Throttled messages come back after the visibility timeout
			// too: the same window as PredictorErrors.
			evaluationPeriods: redeliveryPeriods(cfg),
			datapointsToAlarm: 1,
			missingData:       awscloudwatch.TreatMissingData_NOT_BREACHING,
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
			id: "DeadLetterAge",
			description: fmt.Sprintf("An upload has waited %s in the dead-letter queue: redrive it (or delete it) before it expires. "+
				"SQS counts a dead letter's expiry from its upload, so the oldest can expire %d days after it arrived.",
				shortDays(deadLetterAgeAlarm), deadLetterGraceDays),
			metric:      p.deadLetters.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Period: flow, Statistic: jsii.String("Maximum")}),
			comparison:  awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			threshold:   deadLetterAgeAlarm.Seconds(),
			missingData: awscloudwatch.TreatMissingData_NOT_BREACHING,
		},
		{
			id: "QueueBacklogAge",
			// SQS leaves messages received three or more times out of this
			// metric, so it cannot see retry loops: QueueStalled does.
			// A job keeps at most its window in the queue, so its planned
			// backlog stays under the threshold (config.go's jobBacklogAge).
			description: "The oldest waiting upload (received fewer than three times) is older than queueAgeAlarmSeconds: the backlog drains too slowly (rate limit, budget or concurrency). " +
				"A job's own backlog does not page here: it keeps at most jobWindowMinutes of calls queued, which synthesis holds under this threshold; a job that stops moving is JobStalled's.",
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
			id: "OutOfCredits",
			description: "The account has no credits left and predictions are not being made: the service answered 402, or the monitor reads a balance below one credit. " +
				"Rests on the service's own answers to the predictor, whether or not the credit summary can be read, and, between two 402s " +
				"(the outage backoff returns a message 15 minutes to 12 hours later), on the monitor's reading of the balance each run.",
			metric:     outOfCredits(m, flow),
			comparison: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			threshold:  1,
			// One breaching period in a window that spans a visibility
			// timeout (a refused message's first return) and a monitor run
			// (the balance read between returns hours apart) keeps it in
			// ALARM while credits are out; empty periods count as OK, so it
			// turns OK a window after the credits are back.
			evaluationPeriods: outOfCreditsPeriods(cfg),
			datapointsToAlarm: 1,
			missingData:       awscloudwatch.TreatMissingData_NOT_BREACHING,
		},
	}

	specs = append(specs, alarmSpec{
		id: "JobStalled",
		description: fmt.Sprintf("A running backfill or reprocess job (not paused, not held by the daily budget) has had no object end for %d minutes: "+
			"the feeder is failing or the predictor is not consuming its messages. geolocate jobs shows which job and its last error; "+
			"see docs/operations.md.", int(jobStalledAfter.Minutes())),
		metric:     m.metric(metricnames.JobMinutesSinceProgress, "Maximum", monitorPeriod),
		comparison: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
		threshold:  jobStalledAfter.Minutes(),
		// The monitor publishes the figure on every run, 0 without a
		// running job, so the alarm clears when the job moves, ends or is
		// paused; a silent monitor is MonitorHeartbeat's to report.
		missingData: awscloudwatch.TreatMissingData_IGNORE,
	})

	if p.events != nil {
		specs = append(specs, alarmSpec{
			id: "ResultEventsUndelivered",
			description: "The results pipe gave up on a batch of result events (EventBridge refused them through every retry): their stream positions wait in the result events dead-letter queue. " +
				"The records themselves are in the table; see docs/events.md for finding and republishing them.",
			metric:     p.events.deadLetters.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: flow, Statistic: jsii.String("Maximum")}),
			comparison: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			threshold:  1,
			// SQS stops publishing for an idle, empty queue.
			missingData: awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
	}

	action := awscloudwatchactions.NewSnsAction(p.topic)
	alarms := make(map[string]awscloudwatch.Alarm, len(specs))
	for _, s := range specs {
		alarm := awscloudwatch.NewAlarm(stack, jsii.String(s.id+"Alarm"), &awscloudwatch.AlarmProps{
			AlarmName:          jsii.String(alarmName(*stack.StackName(), s.id)),
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

// jobStalledAfter is how long a running job may go without an object
// ending before JobStalled pages: two feeder windows' worth of the default
// jobWindowMinutes, so a job whose first window is still being called (its
// messages wait behind up to jobWindowMinutes of calls) or whose feeder
// missed a run or two does not page, and one that has truly stopped pages
// within the half hour.
const jobStalledAfter = 30 * time.Minute

// creditsKnown is the balance the credit alarms rest on: the credit
// summary's figure (CreditsRemaining) in a period that has one, else the
// estimate the monitor makes while the service refuses API keys on the
// summary (CreditsEstimated). A period with neither has no datapoint
// (CreditsLow keeps its state; MonitorHeartbeat reports a silent monitor).
func creditsKnown(m pipelineMetrics, period awscdk.Duration) awscloudwatch.IMetric {
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String("IF(FILL(read, -1) >= 0, read, estimated)"),
		UsingMetrics: &map[string]awscloudwatch.IMetric{
			"read":      m.metric(metricnames.CreditsRemaining, "Minimum", period),
			"estimated": m.metric(metricnames.CreditsEstimated, "Minimum", period),
		},
		Label:  jsii.String("Credits remaining (read from the service, else estimated)"),
		Period: period,
	})
}

// shortDays is a whole number of days ("2 days").
func shortDays(d time.Duration) string {
	n := int(d / (24 * time.Hour))
	if n == 1 {
		return "1 day"
	}
	return fmt.Sprintf("%d days", n)
}

// failedPredictionRate is ImagesFailed as a percentage of all images
// handled, in periods that handled at least minImagesForRate; other
// periods have no datapoint. CloudWatch evaluates the current, unfinished
// period too: without the minimum, the first failure of a fresh period is
// 100% and the alarm flaps at every period boundary. A period without a
// rate leaves the evaluation to the most recent period that has one, within
// the evaluation range. FILL makes a missing count zero.
func failedPredictionRate(m pipelineMetrics) awscloudwatch.IMetric {
	period := minutes(failureRatePeriodMinutes)
	sum := func(name string) awscloudwatch.IMetric { return m.metric(name, "Sum", period) }
	total := "(FILL(ok,0) + FILL(rejected,0) + FILL(failed,0))"
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String(fmt.Sprintf("IF(%s >= %d, 100 * FILL(failed,0) / %s)", total, minImagesForRate, total)),
		UsingMetrics: &map[string]awscloudwatch.IMetric{
			"ok":       sum(metricnames.ImagesSucceeded),
			"rejected": sum(metricnames.ImagesRejected),
			"failed":   sum(metricnames.ImagesFailed),
		},
		Label:  jsii.String("Failed images (%)"),
		Period: period,
	})
}

// minImagesForRate is the fewest images in a failure-rate period for its
// rate to count: below it one image moves the rate by more than the
// default threshold. A pipeline handling fewer images is watched by
// QueueStalled, PredictorErrors and DeadLetters instead.
const minImagesForRate = 10

// periodsCovering is the number of flow periods that spans d and one more
// period, so a window always holds a whole d however it is aligned.
func periodsCovering(d time.Duration) int {
	period := flowPeriodMinutes * time.Minute
	return int((d+period-1)/period) + 1
}

// outOfCredits is 1 for a period with a 402 or a balance the monitor read
// below one credit, else 0. A 402 alone is not enough: with no new uploads
// the only 402s are a waiting message's returns, whose backoff reaches 12
// hours, so the alarm would turn OK while credits are still out. A missing
// balance (a key the monitor cannot use) is not a breach: the 402s still are.
func outOfCredits(m pipelineMetrics, period awscdk.Duration) awscloudwatch.IMetric {
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String("IF(FILL(nocredits,0) >= 1 OR FILL(balance,1) < 1, 1, 0)"),
		UsingMetrics: &map[string]awscloudwatch.IMetric{
			"nocredits": m.metric(metricnames.OutOfCredits, "Sum", period),
			"balance":   m.metric(metricnames.CreditsRemaining, "Minimum", period),
		},
		Label:  jsii.String("Out of credits (1 = a 402, or a balance below one credit)"),
		Period: period,
	})
}

// outOfCreditsPeriods spans a visibility timeout and a monitor run, within
// CloudWatch's one-day evaluation range.
func outOfCreditsPeriods(cfg Config) int {
	return min(max(redeliveryPeriods(cfg), periodsCovering(cfg.MonitorSchedule)), int(24*time.Hour/(flowPeriodMinutes*time.Minute)))
}

// redeliveryPeriods spans the queue's visibility timeout, the gap between
// two deliveries of a message that was refused, failed or throttled. At most
// 6 x 900 s, so at most 19 five-minute periods, well within CloudWatch's
// one-day evaluation range.
func redeliveryPeriods(cfg Config) int {
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
// waiting or in flight, none was deleted (a deletion is a finished upload),
// and no other alarm's cause explains it, else 0. In flight counts because a
// message in a retry loop is invisible most of the time. A period with
// predictor errors or throttles, a 402 or a balance the monitor read below
// one credit (the 402s of waiting messages come hours apart) or a message
// held back by the daily budget is not counted: PredictorErrors,
// PredictorThrottles, OutOfCredits
// and QueueBacklogAge report those, and a second page for the same cause
// tells the operator nothing. What is left is the silent stall: every
// attempt ends in a retry without an error (a key that cannot be read, a
// dependency refusing), which only this alarm sees. Missing counts are
// zero (FILL).
func queueStalled(p *pipeline, period awscdk.Duration) awscloudwatch.IMetric {
	max := &awscloudwatch.MetricOptions{Statistic: jsii.String("Maximum"), Period: period}
	sum := &awscloudwatch.MetricOptions{Statistic: jsii.String("Sum"), Period: period}
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String("IF(FILL(waiting,0) + FILL(inflight,0) > 0 AND FILL(deleted,0) == 0 AND " +
			"FILL(errors,0) + FILL(throttles,0) + FILL(nocredits,0) + FILL(deferred,0) == 0 AND FILL(balance,1) >= 1, 1, 0)"),
		UsingMetrics: &map[string]awscloudwatch.IMetric{
			"waiting":   p.queue.MetricApproximateNumberOfMessagesVisible(max),
			"inflight":  p.queue.MetricApproximateNumberOfMessagesNotVisible(max),
			"deleted":   p.queue.MetricNumberOfMessagesDeleted(sum),
			"errors":    p.predictor.MetricErrors(sum),
			"throttles": p.predictor.MetricThrottles(sum),
			"nocredits": p.metrics.metric(metricnames.OutOfCredits, "Sum", period),
			"balance":   p.metrics.metric(metricnames.CreditsRemaining, "Minimum", period),
			"deferred":  p.metrics.metric(metricnames.BudgetDeferred, "Sum", period),
		},
		Label:  jsii.String("Queue stalled (1 = messages, no deletions, no known cause)"),
		Period: period,
	})
}

// monitorHeartbeat is 1 for a period in which the schedule invoked the
// monitor (EventBridge's Invocations of the rule, failed deliveries
// included) and no healthy run was reported (MonitorHealthy's minimum is
// below 1, or nothing was reported), else 0. Keyed to the schedule rather
// than to silence alone, it stays quiet after a deployment until the first
// scheduled run (an alarm on missing data, "breaching", pages at every new
// stack), and it sees a silent monitor after exactly two periods, where a
// plain missing-data alarm waits until its older datapoints leave the
// evaluation range. It cannot see a schedule that never fires (the rule
// disabled by hand): nothing is due, so nothing is missing.
func monitorHeartbeat(p *pipeline, period awscdk.Duration) awscloudwatch.IMetric {
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String("IF(FILL(due,0) > 0 AND FILL(healthy,0) < 1, 1, 0)"),
		UsingMetrics: &map[string]awscloudwatch.IMetric{
			"due": awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
				Namespace:     jsii.String("AWS/Events"),
				MetricName:    jsii.String("Invocations"),
				DimensionsMap: &map[string]*string{"RuleName": p.monitorSchedule.RuleName()},
				Statistic:     jsii.String("Sum"),
				Period:        period,
			}),
			"healthy": p.metrics.metric(metricnames.MonitorHealthy, "Minimum", period),
		},
		Label:  jsii.String("Monitor due without a healthy run (1)"),
		Period: period,
	})
}
