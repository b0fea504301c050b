package dashpage

import (
	"fmt"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
)

// bandOpacity keeps a graph's lines readable over its state bands.
const bandOpacity = 0.18

// graphOption builds the ECharts option of a graph widget with go-echarts:
// a time axis over the page's range, the left and right value axes, one
// line per series, each alarm threshold as a dashed line on the axis of its
// metric, and the alarms' worst state over time as bands.
func (b *builder) graphOption(p metricProperties, lines []line, thresholds []threshold, bands []span) string {
	// A period starts on its boundary, which may be before the page's
	// range begins: the axis starts early enough to show it.
	axisFrom := b.from
	for _, l := range lines {
		if len(l.Points) > 0 && l.Points[0].Time.Before(axisFrom) {
			axisFrom = l.Points[0].Time
		}
	}
	chart := charts.NewLine()
	chart.SetGlobalOptions(
		charts.WithAnimation(false),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Bottom: "0", Type: "scroll"}),
		charts.WithGridOpts(opts.Grid{Left: "48", Right: "48", Top: "24", Bottom: "48"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "time", Min: axisFrom.UnixMilli(), Max: b.to.UnixMilli()}),
		charts.WithYAxisOpts(valueAxis(p.YAxis.Left, "left")),
	)
	chart.ExtendYAxis(valueAxis(p.YAxis.Right, "right"))

	for i, l := range lines {
		data := make([]opts.LineData, len(l.Points))
		for j, pt := range l.Points {
			data[j] = opts.LineData{Value: []any{pt.Time.UnixMilli(), pt.Value}}
		}
		seriesOpts := []charts.SeriesOpts{charts.WithLineChartOpts(opts.LineChart{YAxisIndex: axisIndex(l.Right), ShowSymbol: opts.Bool(len(l.Points) < 2)})}
		if p.Stacked {
			seriesOpts = append(seriesOpts, charts.WithLineChartOpts(opts.LineChart{YAxisIndex: axisIndex(l.Right), Stack: "stack"}))
		}
		if l.Color != "" {
			seriesOpts = append(seriesOpts, charts.WithItemStyleOpts(opts.ItemStyle{Color: l.Color}), charts.WithLineStyleOpts(opts.LineStyle{Color: l.Color}))
		}
		if i == 0 {
			for _, h := range p.Annotations.Horizontal {
				seriesOpts = append(seriesOpts, charts.WithMarkLineNameYAxisItemOpts(opts.MarkLineNameYAxisItem{Name: h.Label, YAxis: h.Value}))
			}
		}
		chart.AddSeries(l.Name, data, seriesOpts...)
	}

	// Thresholds and bands each get a series of their own, without data,
	// so that they are drawn whether or not the metric has local data and
	// the legend can hide them.
	for _, t := range thresholds {
		if t.Row == nil {
			continue
		}
		label := fmt.Sprintf("%s: %s %s %v", t.Alarm.Name, t.Alarm.MetricStat.Stat, comparisonSymbol(t.Alarm.ComparisonOperator), t.Alarm.Threshold)
		chart.AddSeries(label, []opts.LineData{},
			charts.WithLineChartOpts(opts.LineChart{YAxisIndex: axisIndex(t.Row.Right)}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: stateColors[alarmeval.StateAlarm]}),
			charts.WithMarkLineNameYAxisItemOpts(opts.MarkLineNameYAxisItem{Name: t.Alarm.Name, YAxis: t.Alarm.Threshold}),
			charts.WithMarkLineStyleOpts(opts.MarkLineStyle{
				Symbol:    []string{"none", "none"},
				LineStyle: &opts.LineStyle{Color: stateColors[alarmeval.StateAlarm], Type: "dashed", Width: 2},
				Label:     &opts.Label{Show: opts.Bool(true), Position: "insideEndTop", Formatter: fmt.Sprintf("%s %v", comparisonSymbol(t.Alarm.ComparisonOperator), t.Alarm.Threshold)},
			}),
		)
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
	}
	return chart.RenderSnippet().Option
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

// timelineOption builds the ECharts option of an alarm widget: one row per
// alarm, its states over time as solid bands, drawn as mark areas from 0.4
// below to 0.4 above the row's index on a numeric axis (on a category axis
// they would have no height). The first band of each row names the alarm
// and its current state, which spares the axis a JavaScript formatter.
func (b *builder) timelineOption(alarms []*alarmeval.Alarm) string {
	chart := charts.NewScatter()
	chart.SetGlobalOptions(
		charts.WithAnimation(false),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true)}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		charts.WithGridOpts(opts.Grid{Left: "16", Right: "24", Top: "8", Bottom: "24"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "time", Min: b.from.UnixMilli(), Max: b.to.UnixMilli()}),
		charts.WithYAxisOpts(opts.YAxis{
			Type: "value", Min: -0.5, Max: float64(len(alarms)) - 0.5, Inverse: opts.Bool(true),
			SplitLine: &opts.SplitLine{Show: opts.Bool(false)},
			AxisLabel: &opts.AxisLabel{Show: opts.Bool(false)},
		}),
	)
	var areas [][]opts.MarkAreaData
	for i, a := range alarms {
		for j, s := range b.spans(a.Name) {
			first := opts.MarkAreaData{
				Name:          string(s.State),
				Coord:         []any{s.From.UnixMilli(), float64(i) - 0.4},
				MarkAreaStyle: opts.MarkAreaStyle{ItemStyle: &opts.ItemStyle{Color: stateColors[s.State]}},
			}
			if j == 0 {
				first.Name = fmt.Sprintf("%s (%s)", a.Name, b.states[a.Name])
				first.MarkAreaStyle.Label = &opts.Label{Show: opts.Bool(true), Position: "insideLeft", Color: "#fff", FontSize: 11}
			}
			areas = append(areas, []opts.MarkAreaData{first, {Coord: []any{s.To.UnixMilli(), float64(i) + 0.4}}})
		}
	}
	chart.AddSeries("Alarm states", []opts.ScatterData{},
		charts.WithMarkAreaData(areas...),
		charts.WithMarkAreaStyleOpts(opts.MarkAreaStyle{Label: &opts.Label{Show: opts.Bool(false)}}),
	)
	return chart.RenderSnippet().Option
}
