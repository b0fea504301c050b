// Package dashpage writes a stack's CloudWatch dashboard as one
// self-contained HTML page, drawn from the metrics and alarms of a local
// run, so that a person sees what the dashboard will show before deploying.
// It is test tooling and never ships in a Lambda.
//
// The dashboard comes from the synthesized template (the
// AWS::CloudWatch::Dashboard resource's DashboardBody), not from a copy of
// its definition, and every widget keeps its place on the dashboard's grid
// of 24 columns:
//
//   - graph widgets (metric, timeSeries view) are line charts of the local
//     metrics at each metric's statistic and period, on their left or right
//     axis; metric math is evaluated as alarmeval evaluates it, and SEARCH
//     in its simple form ({Namespace,Dims} MetricName="..." Dim="...") over
//     the series the store holds;
//   - the alarms on a graph's metrics (or named in its annotations) draw
//     their threshold as a horizontal line, and their states over time as
//     bands behind it: ALARM red, INSUFFICIENT_DATA grey, OK green (the
//     worst state of the graph's alarms at each moment);
//   - singleValue widgets show each metric's latest value;
//   - alarm widgets list each alarm with a badge in its current state's
//     colour and a strip of its states over the page's range (HTML, not a
//     chart);
//   - log (Logs Insights) and text widgets show their query or text, with a
//     note that they run in CloudWatch only;
//   - custom widgets show the HTML their function returns, when
//     Options.CustomWidget answers for it (the local run answers the map
//     widget with its own handler over the run's records), invoked with the
//     event CloudWatch would send: the page's time range, the widget's size
//     and params.
//
// A metric without local data is named as such rather than drawn as an
// empty chart; beside a chart those notes fold into one line, so they never
// squash it. Each graph's legend is an HTML list under its chart (ECharts'
// own pages its items on a narrow widget), its axes keep their labels
// inside the chart (containLabel), its time labels never overlap
// (hideOverlap, one per 90 px) and read in UTC, as the header (useUTC).
// browsertest.AssertReadable checks all of it in a real browser. The charts are built with go-echarts and drawn by Apache
// ECharts, whose script is embedded in the page (assets/), so the page works
// offline, from file://.
package dashpage
