package main

import (
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
	"github.com/geolocate-aws/geolocate/pkg/shared/resultevents"
)

// latestPredictionsQuery lists the records the predictor logs, one per
// image, newest first. The fields are those of its "prediction recorded" line.
var latestPredictionsQuery = strings.Join([]string{
	"fields @timestamp, bucket, key, status, place, admin1, country, latitude, longitude, credits, model_id, source, error_km, downscaled",
	`filter msg = "prediction recorded"`,
	"sort @timestamp desc",
	"limit 100",
}, "\n| ")

// dashboardRef is the dashboard and its console address.
type dashboardRef struct {
	dashboard awscloudwatch.Dashboard
	url       *string
}

// newDashboard lays out the pipeline from money to images to plumbing.
func newDashboard(stack awscdk.Stack, p *pipeline, alarms map[string]awscloudwatch.Alarm) dashboardRef {
	m := p.metrics
	monitorPeriod := minutes(p.cfg.MonitorSchedule.Minutes())
	flow := minutes(flowPeriodMinutes)
	graph := func(title string, left []awscloudwatch.IMetric, right []awscloudwatch.IMetric) awscloudwatch.IWidget {
		return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
			Title: jsii.String(title), Width: jsii.Number(8), Height: jsii.Number(6),
			Left: &left, Right: &right,
		})
	}
	none := []awscloudwatch.IMetric{}

	// Dashboard names are unique per account, not per region: the region
	// keeps one stack name deployed in two regions from colliding.
	dashboard := awscloudwatch.NewDashboard(stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DashboardName: jsii.String(*stack.StackName() + "-" + *stack.Region()),
	})
	dashboard.AddWidgets(
		awscloudwatch.NewSingleValueWidget(&awscloudwatch.SingleValueWidgetProps{
			Title: jsii.String("Credits"), Width: jsii.Number(8), Height: jsii.Number(6),
			Metrics: &[]awscloudwatch.IMetric{
				m.labelled(metricnames.CreditsRemaining, "Minimum", "Remaining", monitorPeriod),
				// When the service takes no API keys on its credit summary.
				m.labelled(metricnames.CreditsEstimated, "Minimum", "Estimated (summary takes no keys)", monitorPeriod),
				m.labelled(metricnames.CreditSummaryReadable, "Minimum", "Summary read with the key (1) or estimated (0)", monitorPeriod),
				m.labelled(metricnames.CreditDaysRemaining, "Minimum", "Days left at current burn", monitorPeriod),
				m.labelled(metricnames.CreditBurnPerDay, "Average", "Burn per day", monitorPeriod),
			},
		}),
		graph("Credits remaining", []awscloudwatch.IMetric{
			m.labelled(metricnames.CreditsRemaining, "Minimum", "Remaining", monitorPeriod),
			m.labelled(metricnames.CreditsEstimated, "Minimum", "Estimated", monitorPeriod),
			m.labelled(metricnames.SubscriptionCredits, "Minimum", "Subscription", monitorPeriod),
			m.labelled(metricnames.TopUpCredits, "Minimum", "Top-up", monitorPeriod),
		}, none),
		graph("Credit forecast", []awscloudwatch.IMetric{
			m.labelled(metricnames.CreditDaysRemaining, "Minimum", "Days remaining", monitorPeriod),
		}, []awscloudwatch.IMetric{
			m.labelled(metricnames.CreditBurnPerDay, "Average", "Burn per day", monitorPeriod),
		}),
	)
	dashboard.AddWidgets(
		graph("Images", []awscloudwatch.IMetric{
			m.labelled(metricnames.ImagesSucceeded, "Sum", "Succeeded", flow),
			m.labelled(metricnames.ImagesRejected, "Sum", "Rejected", flow),
			m.labelled(metricnames.ImagesFailed, "Sum", "Failed", flow),
			m.labelled(metricnames.ImagesRetried, "Sum", "Retried", flow),
			m.labelled(metricnames.DuplicatesSkipped, "Sum", "Duplicates skipped", flow),
			m.labelled(metricnames.ImagesFromEXIF, "Sum", "From EXIF, no call", flow),
			m.labelled(metricnames.ImagesDownscaled, "Sum", "Downscaled", flow),
			m.labelled(metricnames.ImagesReused, "Sum", "Reused from a copy, no call", flow),
		}, none),
		graph("Credits consumed", []awscloudwatch.IMetric{
			m.labelled(metricnames.CreditsConsumed, "Sum", "Consumed", flow),
			m.labelled(metricnames.CreditsSaved, "Sum", "Saved by reusing a copy's answer", flow),
		}, []awscloudwatch.IMetric{
			m.labelled(metricnames.BudgetDeferred, "Sum", "Deferred by daily budget", flow),
		}),
		graph("Service latency (ms)", []awscloudwatch.IMetric{
			m.labelled(metricnames.ServiceLatency, "p50", "p50", flow),
			m.labelled(metricnames.ServiceLatency, "p90", "p90", flow),
			m.labelled(metricnames.ServiceLatency, "p99", "p99", flow),
		}, none),
	)
	dashboard.AddWidgets(
		graph("Service refusals", []awscloudwatch.IMetric{
			m.labelled(metricnames.RateLimited, "Sum", "Rate limited (429)", flow),
			m.labelled(metricnames.OutOfCredits, "Sum", "Out of credits (402)", flow),
			m.labelled(metricnames.ModelFallbacks, "Sum", "Retired-model fallbacks", flow),
		}, none),
		graph("Models", []awscloudwatch.IMetric{
			m.labelled(metricnames.ModelsReady, "Minimum", "Ready", monitorPeriod),
			m.labelled(metricnames.ModelsDown, "Maximum", "Down", monitorPeriod),
			m.labelled(metricnames.ModelsUnknown, "Maximum", "Unknown", monitorPeriod),
		}, []awscloudwatch.IMetric{
			m.labelled(metricnames.ConfiguredModelAvailable, "Minimum", "Configured model available", monitorPeriod),
			m.labelled(metricnames.MonitorHealthy, "Minimum", "Monitor healthy", monitorPeriod),
		}),
		// The monitoring failures queue holds what monitoring itself could
		// not do (undelivered schedules, failed monitor runs, undeliverable
		// alarm e-mails): shown beside the dead letters so it is seen.
		graph("Queue", []awscloudwatch.IMetric{
			p.queue.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Label: jsii.String("Waiting"), Statistic: jsii.String("Maximum"), Period: flow}),
			p.queue.MetricApproximateNumberOfMessagesNotVisible(&awscloudwatch.MetricOptions{Label: jsii.String("In flight"), Statistic: jsii.String("Maximum"), Period: flow}),
			p.deadLetters.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Label: jsii.String("Dead letters"), Statistic: jsii.String("Maximum"), Period: flow}),
			p.monitoringFailures.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Label: jsii.String("Monitoring failures"), Statistic: jsii.String("Maximum"), Period: flow}),
		}, []awscloudwatch.IMetric{
			p.queue.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Label: jsii.String("Oldest message age (s)"), Statistic: jsii.String("Maximum"), Period: flow}),
			p.deadLetters.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Label: jsii.String("Oldest dead letter age (s)"), Statistic: jsii.String("Maximum"), Period: flow}),
		}),
	)
	// The predictor also counts failures, rejections and dead letters by
	// Reason, and the monitor reports each model's readiness by ModelId. The
	// values are open-ended, so SEARCH finds whichever exist.
	search := func(metric, dimension, statistic string, period awscdk.Duration) awscloudwatch.IMetric {
		return m.search(metric, dimension, statistic, period)
	}
	dashboard.AddWidgets(
		graph6("Failed images by reason", search(metricnames.ImagesFailed, metricnames.DimReason, "Sum", flow)),
		graph6("Rejected images by reason", search(metricnames.ImagesRejected, metricnames.DimReason, "Sum", flow)),
		graph6("Dead-lettered images by reason", search(metricnames.ImagesDeadLettered, metricnames.DimReason, "Sum", flow)),
		graph6("Model ready (1) by model", search(metricnames.ModelReady, metricnames.DimModelID, "Minimum", monitorPeriod)),
	)
	// Accuracy against the photos' own EXIF positions, over an hour: a
	// handful of photos per five minutes would make the percentiles jump.
	// Only uploads that did not carry the position count (the predictor
	// publishes none for the others), and the title says so.
	accuracy := minutes(accuracyPeriodMinutes)
	dashboard.AddWidgets(
		graph("Prediction error vs EXIF position, photos sent without it (km)", []awscloudwatch.IMetric{
			m.labelled(metricnames.PredictionErrorKm, "p50", "p50", accuracy),
			m.labelled(metricnames.PredictionErrorKm, "p90", "p90", accuracy),
		}, []awscloudwatch.IMetric{
			m.labelled(metricnames.PredictionErrorKm, "SampleCount", "Photos sent without their position", accuracy),
		}),
		graph("Share of predictions within (%)", m.withinShares(accuracy), none),
		graph("Prediction error p50 by model (km)", []awscloudwatch.IMetric{
			search(metricnames.PredictionErrorKm, metricnames.DimModelID, "p50", accuracy),
		}, none),
	)
	dashboard.AddWidgets(
		lambdaGraph("Predictor", p.predictor, flow),
		lambdaGraph("Monitor", p.monitor, flow),
		awscloudwatch.NewAlarmStatusWidget(&awscloudwatch.AlarmStatusWidgetProps{
			Title: jsii.String("Alarms"), Width: jsii.Number(8), Height: jsii.Number(6),
			Alarms: sortedAlarms(alarms),
		}),
	)
	// The jobs and their feeder (jobsdashboard.go).
	dashboard.AddWidgets(jobsRow(p, alarms["JobStalled"], monitorPeriod, flow)...)
	if p.events != nil {
		dashboard.AddWidgets(resultEventsGraph(p, flow))
	}
	// The models in use (below the alarms, which stay in the first screen): results recorded by the model that ran (the
	// predictor's ImagesSucceeded by ModelId), an hour a point, so a new
	// default model or a reprocess shows as one line giving way to another.
	dashboard.AddWidgets(
		graph("Results recorded by model (per hour)", []awscloudwatch.IMetric{
			search(metricnames.ImagesSucceeded, metricnames.DimModelID, "Sum", minutes(60)),
		}, []awscloudwatch.IMetric{
			m.labelled(metricnames.NewModelsAvailable, "Sum", "New models available", minutes(60)),
		}),
	)
	dashboard.AddWidgets(mapWidgetOnDashboard(p.mapWidget)...)
	dashboard.AddWidgets(awscloudwatch.NewLogQueryWidget(&awscloudwatch.LogQueryWidgetProps{
		Title:         jsii.String("Latest predictions"),
		Width:         jsii.Number(24),
		Height:        jsii.Number(8),
		LogGroupNames: jsii.Strings(*p.predictorLogs.LogGroupName()),
		QueryString:   jsii.String(latestPredictionsQuery),
		View:          awscloudwatch.LogQueryVisualizationType_TABLE,
	}))

	url := awscdk.Fn_Sub(jsii.String("https://${AWS::Region}.console.aws.amazon.com/cloudwatch/home?region=${AWS::Region}#dashboards:name=${Name}"),
		&map[string]*string{"Name": dashboard.DashboardName()})
	return dashboardRef{dashboard: dashboard, url: url}
}

// resultEventsGraph shows the events published, by detail type, beside
// the pipe's failures and the batches it gave up on. Each counting rule's
// TriggeredRules is its count of matched events: AWS/Events MatchedEvents
// has no dimension at all ("Valid Dimensions: None", the account's total),
// so it cannot split by rule (docs/events.md lists the sources).
func resultEventsGraph(p *pipeline, period awscdk.Duration) awscloudwatch.IWidget {
	e := p.events
	var left []awscloudwatch.IMetric
	for _, status := range resultevents.FinalStatuses {
		detailType := resultevents.DetailType(status)
		dims := map[string]*string{"RuleName": e.counters[detailType].RuleName()}
		// "Metrics that specify both the EventBusName and RuleName
		// dimensions refer to a custom event bus" (EventBridge, monitoring).
		if p.cfg.EventBusName != "" && p.cfg.EventBusName != defaultEventBusName {
			dims["EventBusName"] = jsii.String(p.cfg.EventBusName)
		}
		left = append(left, awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String("AWS/Events"), MetricName: jsii.String("TriggeredRules"),
			DimensionsMap: &dims, Statistic: jsii.String("Sum"), Period: period, Label: jsii.String(detailType),
		}))
	}
	pipeMetric := func(name, label string) awscloudwatch.IMetric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String("AWS/EventBridge/Pipes"), MetricName: jsii.String(name),
			DimensionsMap: &map[string]*string{"PipeName": e.pipe.Ref()},
			Statistic:     jsii.String("Sum"), Period: period, Label: jsii.String(label),
		})
	}
	left = append(left, pipeMetric("EventCount", "Records through the pipe"))
	right := []awscloudwatch.IMetric{
		pipeMetric("ExecutionFailed", "Pipe executions failed"),
		pipeMetric("EnrichmentStageFailed", "Detail builds failed"),
		pipeMetric("TargetStageFailed", "Puts to the bus failed"),
		e.deadLetters.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Label: jsii.String("Undelivered batches"), Statistic: jsii.String("Maximum"), Period: period}),
	}
	return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
		Title: jsii.String("Result events published, by type"), Width: jsii.Number(24), Height: jsii.Number(6),
		Left: &left, Right: &right,
	})
}

// graph6 is a quarter-width graph of one metric or search expression.
func graph6(title string, metric awscloudwatch.IMetric) awscloudwatch.IWidget {
	return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
		Title: jsii.String(title), Width: jsii.Number(6), Height: jsii.Number(6),
		Left: &[]awscloudwatch.IMetric{metric},
	})
}

// lambdaGraph shows a function's errors and throttles (left) and duration (right).
func lambdaGraph(name string, fn awslambda.Function, period awscdk.Duration) awscloudwatch.IWidget {
	sum := &awscloudwatch.MetricOptions{Statistic: jsii.String("Sum"), Period: period}
	left := []awscloudwatch.IMetric{
		fn.MetricErrors(sum).With(&awscloudwatch.MetricOptions{Label: jsii.String("Errors")}),
		fn.MetricThrottles(sum).With(&awscloudwatch.MetricOptions{Label: jsii.String("Throttles")}),
		fn.MetricInvocations(sum).With(&awscloudwatch.MetricOptions{Label: jsii.String("Invocations")}),
	}
	right := []awscloudwatch.IMetric{
		fn.MetricDuration(&awscloudwatch.MetricOptions{Statistic: jsii.String("p99"), Period: period, Label: jsii.String("Duration p99 (ms)")}),
		fn.MetricDuration(&awscloudwatch.MetricOptions{Statistic: jsii.String("Maximum"), Period: period, Label: jsii.String("Duration max (ms)")}),
	}
	return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
		Title: jsii.String(name + " Lambda"), Width: jsii.Number(8), Height: jsii.Number(6),
		Left: &left, Right: &right,
	})
}

// sortedAlarms orders alarms by id so the widget, and the template, are stable.
func sortedAlarms(alarms map[string]awscloudwatch.Alarm) *[]interfacesawscloudwatch.IAlarmRef {
	out := make([]interfacesawscloudwatch.IAlarmRef, 0, len(alarms))
	for _, id := range slices.Sorted(maps.Keys(alarms)) {
		out = append(out, alarms[id])
	}
	return &out
}
