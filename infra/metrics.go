package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/geolocate-aws/geolocate/pkg/metricnames"
)

// pipelineMetrics builds references to the metrics the functions emit
// (Embedded Metric Format, namespace metricnames.DefaultNamespace) for one
// pipeline: every metric carries the Pipeline dimension set to the stack name.
type pipelineMetrics struct {
	pipeline string
}

func newPipelineMetrics(pipeline string) pipelineMetrics {
	return pipelineMetrics{pipeline: pipeline}
}

// metric returns name aggregated with statistic (e.g. "Sum", "Minimum",
// "p99") over period.
func (m pipelineMetrics) metric(name, statistic string, period awscdk.Duration) awscloudwatch.Metric {
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace:     jsii.String(metricnames.DefaultNamespace),
		MetricName:    jsii.String(name),
		DimensionsMap: &map[string]*string{metricnames.DimPipeline: jsii.String(m.pipeline)},
		Statistic:     jsii.String(statistic),
		Period:        period,
	})
}

// labelled returns name like metric, with a legend label.
func (m pipelineMetrics) labelled(name, statistic, label string, period awscdk.Duration) awscloudwatch.Metric {
	return m.metric(name, statistic, period).With(&awscloudwatch.MetricOptions{Label: jsii.String(label)})
}
