package main

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/geolocate-aws/geolocate/pkg/geodist"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// accuracyPeriodMinutes is the period of the accuracy graphs.
const accuracyPeriodMinutes = 60

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

// search returns a SEARCH expression for metric name of this pipeline split
// by one more dimension (e.g. Reason), one line per value, each labelled
// with that value.
func (m pipelineMetrics) search(name, dimension, statistic string, period awscdk.Duration) awscloudwatch.IMetric {
	expr := fmt.Sprintf(`SEARCH('{%s,%s,%s} MetricName="%s" %s="%s"', '%s', %d)`,
		metricnames.DefaultNamespace, metricnames.DimPipeline, dimension,
		name, metricnames.DimPipeline, m.pipeline, statistic, int(*period.ToSeconds(nil)))
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String(expr),
		Label:      jsii.String("${PROP('Dim." + dimension + "')}"),
		Period:     period,
	})
}

// withinShares is, for each accuracy threshold (geodist.Thresholds), the
// percentage of photos with both an EXIF position and a prediction whose
// error is within it: PredictionsWithin by Threshold over the sample count
// of PredictionErrorKm. FILL(..., 0) makes a threshold no photo reached 0 %
// rather than a gap.
func (m pipelineMetrics) withinShares(period awscdk.Duration) []awscloudwatch.IMetric {
	total := m.metric(metricnames.PredictionErrorKm, "SampleCount", period)
	var shares []awscloudwatch.IMetric
	for i, th := range geodist.Thresholds {
		within := awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace:  jsii.String(metricnames.DefaultNamespace),
			MetricName: jsii.String(metricnames.PredictionsWithin),
			DimensionsMap: &map[string]*string{
				metricnames.DimPipeline:  jsii.String(m.pipeline),
				metricnames.DimThreshold: jsii.String(th.Name),
			},
			Statistic: jsii.String("Sum"),
			Period:    period,
		})
		id := "w" + strconv.Itoa(i)
		shares = append(shares, awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression:   jsii.String("100 * FILL(" + id + ", 0) / total"),
			UsingMetrics: &map[string]awscloudwatch.IMetric{id: within, "total": total},
			Label:        jsii.String(fmt.Sprintf("%s (%g km)", th.Name, th.Km)),
			Period:       period,
		}))
	}
	return shares
}
