package dashpage

import (
	"fmt"
	"html/template"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/cfntemplate"
)

// stateColors are the console's colours for alarm states.
var stateColors = map[alarmeval.State]string{
	alarmeval.StateAlarm:            "#d13212",
	alarmeval.StateOK:               "#1d8102",
	alarmeval.StateInsufficientData: "#879596",
}

// span is a stretch of time an alarm (or the worst of several) spent in
// one state.
type span struct {
	From, To time.Time
	State    alarmeval.State
}

// spans returns an alarm's states over [b.from, b.to): INSUFFICIENT_DATA
// until its first transition, as every alarm starts.
func (b *builder) spans(alarm string) []span {
	current := span{From: b.from, State: alarmeval.StateInsufficientData}
	var out []span
	for _, t := range b.transitions {
		if t.Alarm != alarm || t.Time.After(b.to) {
			continue
		}
		if t.Time.After(current.From) {
			current.To = t.Time
			out = append(out, current)
			current = span{From: t.Time}
		}
		current.State = t.To
	}
	current.To = b.to
	return append(out, current)
}

// severity orders states for the worst state of several alarms.
var severity = map[alarmeval.State]int{alarmeval.StateOK: 0, alarmeval.StateInsufficientData: 1, alarmeval.StateAlarm: 2}

// worst merges the spans of several alarms into the worst state at each
// moment: ALARM if any is in ALARM, else INSUFFICIENT_DATA if any is, else OK.
func worst(perAlarm [][]span) []span {
	var cuts []time.Time
	for _, spans := range perAlarm {
		for _, s := range spans {
			cuts = append(cuts, s.From, s.To)
		}
	}
	slices.SortFunc(cuts, time.Time.Compare)
	cuts = slices.CompactFunc(cuts, time.Time.Equal)
	var out []span
	for i := 0; i+1 < len(cuts); i++ {
		from, to := cuts[i], cuts[i+1]
		state, found := alarmeval.StateOK, false
		for _, spans := range perAlarm {
			for _, s := range spans {
				if !s.From.After(from) && s.To.After(from) {
					found = true
					if severity[s.State] > severity[state] {
						state = s.State
					}
				}
			}
		}
		if !found {
			continue
		}
		if n := len(out); n > 0 && out[n-1].State == state && out[n-1].To.Equal(from) {
			out[n-1].To = to
			continue
		}
		out = append(out, span{From: from, To: to, State: state})
	}
	return out
}

// threshold is an alarm's threshold drawn on the graph of its metric.
type threshold struct {
	Alarm *alarmeval.Alarm
	// Row is the graph's row of the alarm's metric; nil for an alarm
	// named in the annotations whose metric the graph does not show.
	Row *row
}

// alarmsOn returns the alarms a graph shows: those named in its
// annotations, and those on one of its metrics (a metric alarm on it, or
// a metric math alarm reading it). Only a metric alarm on a drawn metric
// has a threshold on the graph's scale.
func (b *builder) alarmsOn(rows []row, annotated []string) (related []*alarmeval.Alarm, thresholds []threshold) {
	byKey := map[string]*row{}
	for i := range rows {
		if rows[i].isMetric() {
			byKey[b.metricKey(rows[i].Metric)] = &rows[i]
		}
	}
	named := map[string]bool{}
	for _, arn := range annotated {
		if ref, ok := cfntemplate.ParseReference(arn); ok {
			named[ref.LogicalID] = true
		}
	}
	for _, a := range b.alarms {
		var onGraph bool
		if a.MetricStat != nil {
			if r := byKey[b.metricKey(a.MetricStat.Metric)]; r != nil {
				thresholds = append(thresholds, threshold{Alarm: a, Row: r})
				onGraph = true
			}
		}
		for _, q := range a.Metrics {
			if q.MetricStat != nil && byKey[b.metricKey(q.MetricStat.Metric)] != nil {
				onGraph = true
			}
		}
		if onGraph || named[a.LogicalID] || named[a.Name] {
			related = append(related, a)
		}
	}
	return related, thresholds
}

// metricKey identifies a metric after mapping its dimensions to local
// values, so a widget's metric and an alarm's compare equal when they read
// the same local series.
func (b *builder) metricKey(m alarmeval.Metric) string {
	dims := map[string]string{}
	for _, d := range m.Dimensions {
		dims[d.Name] = b.dimensionValue(d)
	}
	var sb strings.Builder
	sb.WriteString(m.Namespace + "\x00" + m.MetricName)
	for _, k := range slices.Sorted(maps.Keys(dims)) {
		sb.WriteString("\x00" + k + "=" + dims[k])
	}
	return sb.String()
}

func (b *builder) dimensionValue(d alarmeval.Dimension) string {
	if b.opts.ResolveDimension != nil {
		if v, ok := b.opts.ResolveDimension(d); ok {
			return v
		}
	}
	return d.Value
}

// metricString names a metric with its local dimension values.
func (b *builder) metricString(m alarmeval.Metric) string {
	local := alarmeval.Metric{Namespace: m.Namespace, MetricName: m.MetricName}
	for _, d := range m.Dimensions {
		local.Dimensions = append(local.Dimensions, alarmeval.Dimension{Name: d.Name, Value: b.dimensionValue(d)})
	}
	return local.String()
}

// alarmView is one alarm of an alarm widget: its current state, since
// when, and its states over the page's range as a strip of segments.
type alarmView struct {
	Name, State string
	// Color is the current state's colour.
	Color template.CSS
	// Since is when the alarm entered its current state, "" if it never
	// left the state every alarm starts in.
	Since    string
	Segments []segmentView
	// Title lists the alarm's states over time, for a pointer hovering.
	Title string
}

type segmentView struct {
	State string
	Style template.CSS // width and colour
}

// alarmViews draws an alarm widget as HTML: one row per alarm, a badge in
// its current state's colour (a red ALARM cannot be missed, nor hide
// behind the colour of an earlier state) and the timeline of its states.
func (b *builder) alarmViews(alarms []*alarmeval.Alarm) []alarmView {
	total := b.to.Sub(b.from).Seconds()
	views := make([]alarmView, 0, len(alarms))
	for _, a := range alarms {
		spans := b.spans(a.Name)
		current := spans[len(spans)-1]
		if s, ok := b.states[a.Name]; ok {
			current.State = s
		}
		v := alarmView{Name: b.shortAlarmName(a.Name), State: string(current.State), Color: template.CSS(stateColors[current.State])}
		if len(spans) > 1 || current.State != alarmeval.StateInsufficientData {
			v.Since = current.From.UTC().Format("15:04")
		}
		var title []string
		for _, s := range spans {
			if !s.To.After(s.From) {
				continue
			}
			pct := 100 * s.To.Sub(s.From).Seconds() / total
			v.Segments = append(v.Segments, segmentView{State: string(s.State),
				Style: template.CSS(fmt.Sprintf("width: %.3f%%; background: %s;", pct, stateColors[s.State]))})
			title = append(title, fmt.Sprintf("%s %s to %s", s.State, s.From.UTC().Format("15:04"), s.To.UTC().Format("15:04")))
		}
		v.Title = a.Name + ": " + strings.Join(title, ", ")
		views = append(views, v)
	}
	return views
}

// shortAlarmName is an alarm's name without the stack's name in front
// ("Geolocation-CreditsLow" is "CreditsLow"): every alarm of the widget
// has it, and the room is the alarm's own.
func (b *builder) shortAlarmName(name string) string {
	if stack := b.opts.Refs["AWS::StackName"]; stack != "" {
		for _, sep := range []string{"-", "/"} {
			if rest, ok := strings.CutPrefix(name, stack+sep); ok && rest != "" {
				return rest
			}
		}
	}
	return name
}
