package dashpage

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
)

// bandOpacity keeps a graph's lines readable over its state bands.
const bandOpacity = 0.18

// palette is ECharts' default series palette, given to each line
// explicitly so that the page's own legend (an HTML list under the chart:
// ECharts' legend pages its items on a narrow widget) shows the same colour.
var palette = []string{"#5470c6", "#91cc75", "#fac858", "#ee6666", "#73c0de", "#3ba272", "#fc8452", "#9a60b4", "#ea7ccc"}

// legendItem is one entry of a graph's legend.
type legendItem struct {
	Name  string
	Color string
	// Kind is "line", "threshold" (dashed) or "band" (the alarm states).
	Kind string
}

// pixelsPerTimeLabel is the width a time axis label needs with room around
// it ("14:30" in ECharts' 12 px font); the axis gets at most one label per
// that many pixels of the widget's width at the nominal page width.
const pixelsPerTimeLabel = 90

// graphOption builds the ECharts option of a graph widget with go-echarts:
// a time axis over the page's range, the left and right value axes, one
// line per series, each alarm threshold as a dashed line on the axis of its
// metric, and the alarms' worst state over time as bands. It returns the
// legend the page draws under the chart. width is the widget's width in
// grid columns.
func (b *builder) graphOption(p metricProperties, lines []line, thresholds []threshold, bands []span, width int) (string, []legendItem) {
	// A period starts on its boundary, which may be before the page's
	// range begins: the axis starts early enough to show it.
	// Whole minutes at both ends: an axis from 20:55:19.406 labels its
	// first tick with the milliseconds.
	axisFrom := b.from
	for _, l := range lines {
		if len(l.Points) > 0 && l.Points[0].Time.Before(axisFrom) {
			axisFrom = l.Points[0].Time
		}
	}
	axisFrom = axisFrom.Truncate(time.Minute)
	axisTo := b.to.Add(time.Minute - time.Nanosecond).Truncate(time.Minute)
	var legend []legendItem
	chart := charts.NewLine()
	chart.SetGlobalOptions(
		charts.WithAnimation(false),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		// containLabel: the grid leaves room for every axis label, so a
		// right axis's "1,000,000" is not cut at the widget's edge.
		// (The first and last time labels are centred on the axis's ends:
		// Left and Right keep half of one inside, if no value axis does.)
		charts.WithGridOpts(opts.Grid{Left: "24", Right: "24", Top: "24", Bottom: "4", ContainLabel: opts.Bool(true)}),
		charts.WithXAxisOpts(opts.XAxis{
			Type: "time", Min: axisFrom.UnixMilli(), Max: axisTo.UnixMilli(),
			SplitNumber: max(2, width*nominalPageWidth/24/pixelsPerTimeLabel),
			MinInterval: float64(time.Minute.Milliseconds()), // no datapoint is finer
			AxisLabel:   &opts.AxisLabel{HideOverlap: opts.Bool(true)},
		}),
		charts.WithYAxisOpts(valueAxis(p.YAxis.Left, "left")),
	)
	chart.ExtendYAxis(valueAxis(p.YAxis.Right, "right"))

	for i, l := range lines {
		data := make([]opts.LineData, len(l.Points))
		for j, pt := range l.Points {
			data[j] = opts.LineData{Value: []any{pt.Time.UnixMilli(), pt.Value}}
		}
		color := l.Color
		if color == "" {
			color = palette[i%len(palette)]
		}
		seriesOpts := []charts.SeriesOpts{
			charts.WithLineChartOpts(opts.LineChart{YAxisIndex: axisIndex(l.Right), ShowSymbol: opts.Bool(len(l.Points) < 2)}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: color}), charts.WithLineStyleOpts(opts.LineStyle{Color: color}),
		}
		if p.Stacked {
			seriesOpts = append(seriesOpts, charts.WithLineChartOpts(opts.LineChart{YAxisIndex: axisIndex(l.Right), Stack: "stack"}))
		}
		if i == 0 {
			for _, h := range p.Annotations.Horizontal {
				seriesOpts = append(seriesOpts, charts.WithMarkLineNameYAxisItemOpts(opts.MarkLineNameYAxisItem{Name: h.Label, YAxis: h.Value}))
			}
		}
		chart.AddSeries(l.Name, data, seriesOpts...)
		legend = append(legend, legendItem{Name: l.Name, Color: color, Kind: "line"})
	}

	// Thresholds and bands each get a series of their own, without data,
	// so that they are drawn whether or not the metric has local data.
	// Two alarms at one threshold on one axis share a line: only the first
	// is labelled (the legend names both), or the labels overlap.
	labelled := map[[2]float64]bool{}
	for _, t := range thresholds {
		if t.Row == nil {
			continue
		}
		at := [2]float64{float64(axisIndex(t.Row.Right)), t.Alarm.Threshold}
		showLabel := !labelled[at]
		labelled[at] = true
		label := fmt.Sprintf("%s: %s %s %v", t.Alarm.Name, t.Alarm.MetricStat.Stat, comparisonSymbol(t.Alarm.ComparisonOperator), t.Alarm.Threshold)
		chart.AddSeries(label, []opts.LineData{},
			charts.WithLineChartOpts(opts.LineChart{YAxisIndex: axisIndex(t.Row.Right)}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: stateColors[alarmeval.StateAlarm]}),
			charts.WithMarkLineNameYAxisItemOpts(opts.MarkLineNameYAxisItem{Name: t.Alarm.Name, YAxis: t.Alarm.Threshold}),
			charts.WithMarkLineStyleOpts(opts.MarkLineStyle{
				Symbol:    []string{"none", "none"},
				LineStyle: &opts.LineStyle{Color: stateColors[alarmeval.StateAlarm], Type: "dashed", Width: 2},
				Label:     &opts.Label{Show: opts.Bool(showLabel), Position: "insideEndTop", Formatter: fmt.Sprintf("%s %v", comparisonSymbol(t.Alarm.ComparisonOperator), t.Alarm.Threshold)},
			}),
		)
		legend = append(legend, legendItem{Name: label, Color: stateColors[alarmeval.StateAlarm], Kind: "threshold"})
	}
	if len(bands) > 0 {
		var areas [][]opts.MarkAreaData
		for _, s := range bands {
			areas = append(areas, []opts.MarkAreaData{
				{Name: string(s.State), XAxis: s.From.UnixMilli(), MarkAreaStyle: opts.MarkAreaStyle{ItemStyle: &opts.ItemStyle{Color: stateColors[s.State], Opacity: bandOpacity}}},
				{XAxis: s.To.UnixMilli()},
			})
		}
		chart.AddSeries("Alarm state", []opts.LineData{},
			charts.WithItemStyleOpts(opts.ItemStyle{Color: stateColors[alarmeval.StateAlarm]}),
			charts.WithMarkAreaData(areas...),
			charts.WithMarkAreaStyleOpts(opts.MarkAreaStyle{Label: &opts.Label{Show: opts.Bool(false)}}),
		)
		legend = append(legend, legendItem{Name: "alarm state", Kind: "band"})
	}
	return withUTC(chart.RenderSnippet().Option), legend
}

// withUTC sets ECharts' useUTC on an option: its time axis labels and
// tooltips then read in UTC, as the page's header does, whatever the
// browser's time zone (go-echarts has no global field for it).
func withUTC(option string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(option), &m); err != nil {
		return option // go-echarts wrote it; left as it is if it is not JSON
	}
	m["useUTC"] = true
	out, err := json.Marshal(m)
	if err != nil {
		return option
	}
	return string(out)
}

func valueAxis(a axisProperties, position string) opts.YAxis {
	y := opts.YAxis{Type: "value", Position: position, Name: a.Label, Scale: opts.Bool(true)}
	if a.Min != nil {
		y.Min = *a.Min
	}
	if a.Max != nil {
		y.Max = *a.Max
	}
	return y
}

func axisIndex(right bool) int {
	if right {
		return 1
	}
	return 0
}

func comparisonSymbol(op alarmeval.ComparisonOperator) string {
	switch op {
	case alarmeval.GreaterThanOrEqualToThreshold:
		return ">="
	case alarmeval.GreaterThanThreshold:
		return ">"
	case alarmeval.LessThanThreshold:
		return "<"
	case alarmeval.LessThanOrEqualToThreshold:
		return "<="
	}
	return string(op)
}
