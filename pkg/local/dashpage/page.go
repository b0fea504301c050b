package dashpage

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/cfntemplate"
)

// Source is what a page is drawn from.
type Source struct {
	// Template is the synthesized CloudFormation template (JSON).
	Template []byte
	// Metrics holds the datapoints of the local run.
	Metrics *alarmeval.Store
	// Alarms, when set, is the evaluator that ran over the run's minutes:
	// its alarms' thresholds and state transitions are drawn.
	Alarms *alarmeval.Evaluator
	// From and To bound the time axis of every chart.
	From, To time.Time
	// Description says what the metrics are from, at the top of the page;
	// default "Drawn from the local run's metrics".
	Description string
}

// shortRange is a page range short enough to fall in one or two of a
// metric's periods, which the page then explains.
const shortRange = 10 * time.Minute

// Options adjust a page.
type Options struct {
	// Refs resolves Refs in the dashboard, e.g. {"AWS::StackName":
	// "Geolocation", "AWS::Region": "local"}; others stay opaque.
	Refs map[string]string
	// ResolveDimension and MatchUnresolvedByKey map the dashboard's metric
	// dimensions to the local series, as alarmeval.Options do for alarms;
	// give both the same, so a graph shows what its alarm evaluates.
	ResolveDimension     func(d alarmeval.Dimension) (value string, ok bool)
	MatchUnresolvedByKey bool
	// CustomWidget, when set, answers a custom widget's invocation as its
	// Lambda function would (endpoint is the widget's function, event the
	// JSON CloudWatch sends): the page shows the HTML it returns.
	CustomWidget func(endpoint string, event []byte) ([]byte, error)
}

// rowHeight is the height in pixels of one unit of the dashboard's grid.
const rowHeight = 40

// builder draws one page.
type builder struct {
	store       *alarmeval.Store
	alarms      []*alarmeval.Alarm
	transitions []alarmeval.Transition
	states      map[string]alarmeval.State
	from, to    time.Time
	opts        Options
	charts      int
	dashboard   string // the name of the dashboard being drawn
	customs     int    // custom widgets drawn so far
}

func (b *builder) evalOptions() alarmeval.Options {
	return alarmeval.Options{ResolveDimension: b.opts.ResolveDimension, MatchUnresolvedByKey: b.opts.MatchUnresolvedByKey}
}

// Write writes the page of the template's dashboards (usually one) to w.
func Write(w io.Writer, src Source, optFns ...func(*Options)) error {
	var o Options
	for _, fn := range optFns {
		fn(&o)
	}
	switch {
	case src.Metrics == nil:
		return fmt.Errorf("dashpage: no metric store")
	case !src.From.Before(src.To):
		return fmt.Errorf("dashpage: time range %s to %s is empty", src.From, src.To)
	}
	dashboards, err := parseDashboards(src.Template, o.Refs)
	if err != nil {
		return err
	}
	b := &builder{store: src.Metrics, from: src.From.UTC(), to: src.To.UTC(), opts: o, states: map[string]alarmeval.State{}}
	if src.Alarms != nil {
		b.alarms = src.Alarms.Alarms()
		b.transitions = src.Alarms.Transitions()
		b.states = src.Alarms.States()
	}
	view := pageView{From: b.from.Format("2006-01-02 15:04:05"), To: b.to.Format("15:04:05"), EChartsJS: template.JS(echartsJS),
		Source: src.Description, Short: b.to.Sub(b.from) < shortRange}
	if view.Source == "" {
		view.Source = "Drawn from the local run's metrics"
	}
	if b.to.YearDay() != b.from.YearDay() || b.to.Year() != b.from.Year() {
		view.To = b.to.Format("2006-01-02 15:04:05")
	}
	for _, d := range dashboards {
		dv := dashboardView{Name: d.Name}
		b.dashboard = d.Name
		for i, wd := range d.Widgets {
			wv, err := b.widget(wd)
			if err != nil {
				return fmt.Errorf("dashpage: dashboard %s, widget %d (%s): %w", d.Name, i, wd.Type, err)
			}
			dv.Widgets = append(dv.Widgets, wv)
		}
		view.Dashboards = append(view.Dashboards, dv)
		view.Title = append(view.Title, d.Name)
	}
	view.Charts = b.charts
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, view); err != nil {
		return fmt.Errorf("dashpage: render page: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// WriteFile writes the page to path, replacing it.
func WriteFile(path string, src Source, optFns ...func(*Options)) error {
	var buf bytes.Buffer
	if err := Write(&buf, src, optFns...); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("dashpage: write %s: %w", path, err)
	}
	return nil
}

type pageView struct {
	Title      []string
	Source     string
	Short      bool
	From, To   string
	Dashboards []dashboardView
	Charts     int
	EChartsJS  template.JS
}

type dashboardView struct {
	Name    string
	Widgets []widgetView
}

// widgetView is one widget as the page template draws it.
type widgetView struct {
	Type    string
	Title   string
	Grid    template.CSS
	ChartID string
	Height  int
	Option  template.JS
	Values  []valueView
	Code    string
	// Text is a text widget's Markdown, rendered (its raw "**bold**" and
	// backticks read as a broken page).
	Text  template.HTML
	Notes []string
	// Folded are notes beside a chart, shown folded under one line.
	Folded []string
	Legend []legendItem
	Alarms []alarmView
	HTML   template.HTML // a custom widget's answer
}

type valueView struct{ Label, Value string }

func (b *builder) widget(w widget) (widgetView, error) {
	v := widgetView{Type: w.Type, Height: w.Height*rowHeight - 44}
	if w.X != nil && w.Y != nil {
		v.Grid = template.CSS(fmt.Sprintf("grid-column: %d / span %d; grid-row: %d / span %d;", *w.X+1, w.Width, *w.Y+1, w.Height))
	} else {
		v.Grid = template.CSS(fmt.Sprintf("grid-column: span %d; grid-row: span %d;", w.Width, w.Height))
	}
	switch w.Type {
	case "metric":
		var p metricProperties
		if err := json.Unmarshal(w.Properties, &p); err != nil {
			return v, fmt.Errorf("properties: %w", err)
		}
		v.Title = p.Title
		rows, err := parseRows(p)
		if err != nil {
			return v, err
		}
		if p.View == "singleValue" {
			b.singleValue(&v, rows)
			return v, nil
		}
		if p.View != "" && p.View != "timeSeries" {
			v.Notes = append(v.Notes, fmt.Sprintf("The %q view is drawn as a time series.", p.View))
		}
		lines, notes := b.widgetLines(rows)
		related, thresholds := b.alarmsOn(rows, p.Annotations.Alarms)
		var perAlarm [][]span
		for _, a := range related {
			perAlarm = append(perAlarm, b.spans(a.Name))
		}
		if len(lines) == 0 && len(related) == 0 {
			v.Notes = append(v.Notes, notes...)
			v.Notes = append(v.Notes, "No local data for any metric of this widget: nothing to draw.")
			return v, nil
		}
		// Beside a chart the notes are folded into one line, so they never
		// squash it (four "no local data" lines left a chart 20 px high).
		v.Folded = notes
		option, legend := b.graphOption(p, lines, thresholds, worst(perAlarm), w.Width)
		b.chart(&v, option)
		v.Legend = legend
	case "alarm":
		var p struct {
			Title  string   `json:"title"`
			Alarms []string `json:"alarms"`
		}
		if err := json.Unmarshal(w.Properties, &p); err != nil {
			return v, fmt.Errorf("properties: %w", err)
		}
		v.Title = p.Title
		var alarms []*alarmeval.Alarm
		for _, arn := range p.Alarms {
			a := b.alarm(arn)
			if a == nil {
				v.Notes = append(v.Notes, fmt.Sprintf("%s: not evaluated locally", arn))
				continue
			}
			alarms = append(alarms, a)
		}
		v.Alarms = b.alarmViews(alarms)
	case "log":
		var p struct {
			Title string `json:"title"`
			Query string `json:"query"`
		}
		if err := json.Unmarshal(w.Properties, &p); err != nil {
			return v, fmt.Errorf("properties: %w", err)
		}
		v.Title, v.Code = p.Title, p.Query
		v.Notes = append(v.Notes, "A Logs Insights query: it runs in CloudWatch Logs only, not locally.")
	case "custom":
		if err := b.custom(&v, w); err != nil {
			return v, err
		}
	case "text":
		var p struct {
			Markdown string `json:"markdown"`
		}
		if err := json.Unmarshal(w.Properties, &p); err != nil {
			return v, fmt.Errorf("properties: %w", err)
		}
		v.Text = markdownHTML(p.Markdown)
	default:
		v.Title = w.Type
		v.Notes = append(v.Notes, fmt.Sprintf("Widgets of type %q are shown in CloudWatch only.", w.Type))
	}
	return v, nil
}

// chart gives a widget the next chart id and its option. "</" is escaped
// so that no text from the template can close the page's script element.
func (b *builder) chart(v *widgetView, option string) {
	b.charts++
	v.ChartID = "chart" + strconv.Itoa(b.charts)
	v.Option = template.JS(strings.ReplaceAll(strings.TrimSpace(option), "</", `<\/`))
}

// alarm finds the evaluated alarm an alarm widget or annotation names by
// ARN, which a synthesized template gives as Fn::GetAtt <id>.Arn.
func (b *builder) alarm(arn string) *alarmeval.Alarm {
	ref, isRef := cfntemplate.ParseReference(arn)
	for _, a := range b.alarms {
		if (isRef && a.LogicalID == ref.LogicalID) || strings.HasSuffix(arn, ":alarm:"+a.Name) {
			return a
		}
	}
	return nil
}

// singleValue shows each metric's latest datapoint in the page's range.
func (b *builder) singleValue(v *widgetView, rows []row) {
	lines, notes := b.widgetLines(rows)
	v.Notes = append(v.Notes, notes...)
	for _, l := range lines {
		last := l.Points[len(l.Points)-1]
		v.Values = append(v.Values, valueView{Label: l.Name, Value: formatValue(last.Value)})
	}
}

func formatValue(f float64) string {
	if math.Abs(f) >= 1e6 || f == math.Trunc(f) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', 2, 64)
}

//go:embed page.html
var pageHTML string

var pageTemplate = template.Must(template.New("page").Parse(pageHTML))
