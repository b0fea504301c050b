package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// jobsRow is the dashboard's row of jobs (issue 47): how many run and how
// long the slowest has gone without progress, each running job's objects
// done and remaining, its ETA, and the JobStalled alarm beside the
// feeder's own Lambda figures (a row of their own). The per-job figures are SEARCHes on the Job
// dimension: the monitor publishes them for at most monitor.MaxJobsPublished
// jobs, so a line per job that ran within the graph's range.
func jobsRow(p *pipeline, stalled awscloudwatch.Alarm, monitorPeriod, flow awscdk.Duration) []awscloudwatch.IWidget {
	m := p.metrics
	byJob := func(name, statistic string) awscloudwatch.IMetric {
		return m.search(name, metricnames.DimJob, statistic, monitorPeriod)
	}
	graph := func(title string, width float64, left, right []awscloudwatch.IMetric) awscloudwatch.IWidget {
		return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
			Title: jsii.String(title), Width: jsii.Number(width), Height: jsii.Number(6),
			Left: &left, Right: &right,
		})
	}
	return []awscloudwatch.IWidget{
		graph("Jobs running", 6, []awscloudwatch.IMetric{
			m.labelled(metricnames.JobsRunning, "Maximum", "Jobs running", monitorPeriod),
		}, []awscloudwatch.IMetric{
			m.labelled(metricnames.JobMinutesSinceProgress, "Maximum", "Minutes since the slowest job's progress", monitorPeriod),
		}),
		graph("Job objects remaining (left) and done (right), by job", 6,
			[]awscloudwatch.IMetric{byJob(metricnames.JobObjectsRemaining, "Minimum")},
			[]awscloudwatch.IMetric{byJob(metricnames.JobObjectsDone, "Maximum")}),
		graph("Job ETA (hours) and credits spent, by job", 6,
			[]awscloudwatch.IMetric{byJob(metricnames.JobEtaHours, "Minimum")},
			[]awscloudwatch.IMetric{byJob(metricnames.JobCreditsSpent, "Maximum")}),
		awscloudwatch.NewAlarmWidget(&awscloudwatch.AlarmWidgetProps{
			Title: jsii.String(fmt.Sprintf("Job stalled (no object ended for %d minutes)", int(jobStalledAfter.Minutes()))),
			Width: jsii.Number(6), Height: jsii.Number(6),
			Alarm: stalled,
		}),
		lambdaGraph("Job feeder", p.jobs.fn, flow),
	}
}
