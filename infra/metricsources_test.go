package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// metricSource is a metric AWS documents, with the dimension sets it is
// published with, and the page (and table) that says so.
type metricSource struct {
	dimensions [][]string // each sorted; a metric read with another set has no data
	source     string
}

// documentedMetrics is every AWS metric the template may graph or alarm on.
// A metric read with a dimension set AWS does not publish is an empty graph
// or an alarm that never fires (AWS/Events MatchedEvents by RuleName was one).
var documentedMetrics = map[string]metricSource{
	"AWS/Lambda Errors":      {[][]string{{"FunctionName"}}, lambdaMetricsPage},
	"AWS/Lambda Throttles":   {[][]string{{"FunctionName"}}, lambdaMetricsPage},
	"AWS/Lambda Invocations": {[][]string{{"FunctionName"}}, lambdaMetricsPage},
	"AWS/Lambda Duration":    {[][]string{{"FunctionName"}}, lambdaMetricsPage},

	"AWS/SQS ApproximateNumberOfMessagesVisible":    {[][]string{{"QueueName"}}, sqsMetricsPage},
	"AWS/SQS ApproximateNumberOfMessagesNotVisible": {[][]string{{"QueueName"}}, sqsMetricsPage},
	"AWS/SQS ApproximateAgeOfOldestMessage":         {[][]string{{"QueueName"}}, sqsMetricsPage},
	"AWS/SQS NumberOfMessagesDeleted":               {[][]string{{"QueueName"}}, sqsMetricsPage},
	"AWS/SQS NumberOfMessagesSent":                  {[][]string{{"QueueName"}}, sqsMetricsPage},
	"AWS/SQS NumberOfMessagesReceived":              {[][]string{{"QueueName"}}, sqsMetricsPage},

	// "Metrics that specify only the RuleName dimension refer to the
	// default event bus. Metrics that specify both the EventBusName and
	// RuleName dimensions refer to a custom event bus." MatchedEvents:
	// "Valid Dimensions: None".
	"AWS/Events TriggeredRules":    {[][]string{{"RuleName"}, {"EventBusName", "RuleName"}}, eventsMetricsPage},
	"AWS/Events Invocations":       {[][]string{{}, {"RuleName"}, {"EventBusName", "RuleName"}}, eventsMetricsPage},
	"AWS/Events FailedInvocations": {[][]string{{"RuleName"}, {"EventBusName", "RuleName"}}, eventsMetricsPage},
	"AWS/Events MatchedEvents":     {[][]string{{}}, eventsMetricsPage},

	"AWS/EventBridge/Pipes EventCount":            {[][]string{{"PipeName"}}, pipesMetricsPage},
	"AWS/EventBridge/Pipes ExecutionFailed":       {[][]string{{"PipeName"}}, pipesMetricsPage},
	"AWS/EventBridge/Pipes EnrichmentStageFailed": {[][]string{{"PipeName"}}, pipesMetricsPage},
	"AWS/EventBridge/Pipes TargetStageFailed":     {[][]string{{"PipeName"}}, pipesMetricsPage},
}

const (
	lambdaMetricsPage = "docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html (per-function: FunctionName)"
	sqsMetricsPage    = "docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html (QueueName)"
	eventsMetricsPage = "docs.aws.amazon.com/eventbridge/latest/userguide/eb-monitoring.html (EventBridge metrics)"
	pipesMetricsPage  = "docs.aws.amazon.com/eventbridge/latest/userguide/eb-pipes-monitoring.html (CloudWatch metrics)"
)

// templateMetric is one metric a dashboard widget or an alarm reads.
type templateMetric struct {
	where, namespace, name string
	dimensions             []string
}

// TestMetricsExistWithTheirDimensions walks every alarm and every dashboard
// widget of the template: each AWS metric is one AWS documents with exactly
// those dimensions (documentedMetrics), and each of this project's is one
// the functions emit, with the Pipeline dimension.
func TestMetricsExistWithTheirDimensions(t *testing.T) {
	for name, s := range synthApp(t).scenarios() {
		t.Run(name, func(t *testing.T) {
			var metrics []templateMetric
			for id, alarm := range s.resources("AWS::CloudWatch::Alarm") {
				metrics = append(metrics, alarmMetrics(id, alarm["Properties"].(map[string]any))...)
			}
			for id, dash := range s.resources("AWS::CloudWatch::Dashboard") {
				metrics = append(metrics, dashboardMetrics(t, id, dash["Properties"].(map[string]any)["DashboardBody"])...)
			}
			if len(metrics) < 20 {
				t.Fatalf("found %d metrics in the template's alarms and dashboard", len(metrics))
			}
			for _, m := range metrics {
				sort.Strings(m.dimensions)
				if m.namespace == metricnames.DefaultNamespace {
					if !slices.Contains(m.dimensions, metricnames.DimPipeline) {
						t.Errorf("%s: %s without the %s dimension the functions always emit", m.where, m.name, metricnames.DimPipeline)
					}
					continue
				}
				doc, ok := documentedMetrics[m.namespace+" "+m.name]
				if !ok {
					t.Errorf("%s: %s %s is not in the table of documented metrics", m.where, m.namespace, m.name)
					continue
				}
				if !slices.ContainsFunc(doc.dimensions, func(d []string) bool { return slices.Equal(d, m.dimensions) }) {
					t.Errorf("%s: %s %s by %v; AWS publishes it by %v only (%s)", m.where, m.namespace, m.name, m.dimensions, doc.dimensions, doc.source)
				}
			}
		})
	}
}

// alarmMetrics reads an alarm's metric, or the metrics of its math.
func alarmMetrics(id string, props map[string]any) []templateMetric {
	read := func(m map[string]any) templateMetric {
		tm := templateMetric{where: "alarm " + id}
		tm.namespace, _ = m["Namespace"].(string)
		tm.name, _ = m["MetricName"].(string)
		dims, _ := m["Dimensions"].([]any)
		tm.dimensions = []string{}
		for _, d := range dims {
			name, _ := d.(map[string]any)["Name"].(string)
			tm.dimensions = append(tm.dimensions, name)
		}
		return tm
	}
	if _, ok := props["MetricName"]; ok {
		return []templateMetric{read(props)}
	}
	var out []templateMetric
	queries, _ := props["Metrics"].([]any)
	for _, q := range queries {
		stat, _ := q.(map[string]any)["MetricStat"].(map[string]any)
		if m, ok := stat["Metric"].(map[string]any); ok {
			out = append(out, read(m))
		}
	}
	return out
}

// dashboardMetrics reads the metric lines of a dashboard body, an
// Fn::Join whose references stand as REF: [namespace, name, dim, value,
// ..., {options}]. Math and SEARCH lines are expressions, not metrics.
func dashboardMetrics(t *testing.T, id string, body any) []templateMetric {
	t.Helper()
	text, ok := body.(string)
	if !ok {
		join, _ := body.(map[string]any)["Fn::Join"].([]any)
		if len(join) != 2 {
			t.Fatalf("dashboard %s: body %s", id, asJSON(body))
		}
		var b strings.Builder
		for _, part := range join[1].([]any) {
			if s, ok := part.(string); ok {
				b.WriteString(s)
			} else {
				b.WriteString("REF")
			}
		}
		text = b.String()
	}
	var doc struct {
		Widgets []struct {
			Properties struct {
				Title   string  `json:"title"`
				Metrics [][]any `json:"metrics"`
			} `json:"properties"`
		} `json:"widgets"`
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("dashboard %s: %v", id, err)
	}
	var out []templateMetric
	for _, w := range doc.Widgets {
		for _, line := range w.Properties.Metrics {
			var parts []string
			for _, v := range line {
				if s, ok := v.(string); ok {
					parts = append(parts, s)
				}
			}
			if len(parts) < 2 {
				continue // an expression: {"expression": ...}
			}
			m := templateMetric{where: fmt.Sprintf("dashboard widget %q", w.Properties.Title), namespace: parts[0], name: parts[1], dimensions: []string{}}
			for i := 2; i+1 < len(parts); i += 2 {
				m.dimensions = append(m.dimensions, parts[i])
			}
			out = append(out, m)
		}
	}
	return out
}
