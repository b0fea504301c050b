// Package widget is the CloudWatch custom widget that shows the dashboard's
// time range of predictions on a world map (functions/mapwidget runs it).
//
// CloudWatch calls the function with the widget's parameters and a
// widgetContext (dashboard, time range, zoom, the widget's size in
// pixels) and shows the HTML it returns, scripts removed: the map is
// geomap's server-side SVG, which needs none. With "describe": true it
// returns its documentation as {"markdown": ...}.
//
// Event format (AWS documentation, "Details about custom widgets in
// CloudWatch"; the same fields as Powertools' CloudWatchDashboardCustomWidgetEvent):
//
//	{"colorBy": "model", "widgetContext": {"dashboardName": "...", "widgetId": "widget-16",
//	  "timeRange": {"mode": "relative", "start": 1627236199729, "end": 1627322599729,
//	    "relativeStart": 86400012, "zoom": {"start": ..., "end": ...}},
//	  "width": 588, "height": 369, "params": {"colorBy": "model"}, ...}}
//
// Times are Unix milliseconds. A zoom, when present, is the range shown.
// Unknown fields are ignored; a missing or unusable range falls back to
// the last DefaultRange, and the widget says so.
package widget

import (
	"context"
	"fmt"
	"html"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geomap"
	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// Event is a custom widget invocation. The widget's parameters arrive at
// the top level (and again in WidgetContext.Params).
type Event struct {
	Describe      bool           `json:"describe"`
	WidgetContext *WidgetContext `json:"widgetContext"`
	Params
}

// Params are the widget's parameters (the dashboard's "params").
type Params struct {
	// ColorBy is "status" (default) or "model".
	ColorBy string `json:"colorBy"`
	// Status is the record status to show; default succeeded, the records
	// that carry a position.
	Status string `json:"status"`
	// Prefix keeps objects whose key starts with it.
	Prefix string `json:"prefix"`
}

// WidgetContext is what CloudWatch says about the widget being drawn.
type WidgetContext struct {
	DashboardName string    `json:"dashboardName"`
	WidgetID      string    `json:"widgetId"`
	TimeRange     TimeRange `json:"timeRange"`
	Width         int       `json:"width"`
	Height        int       `json:"height"`
	Params        *Params   `json:"params"`
	// Theme is the dashboard's, "light" or "dark": CloudWatch's custom
	// widget event ("theme": the current theme of the dashboard).
	Theme string `json:"theme"`
}

// themeDark is WidgetContext.Theme on a dark dashboard.
const themeDark = "dark"

// The widget's colours by theme: its text, and behind each map. The map is
// drawn in light colours (its legend's text is dark), so on a dark
// dashboard it sits on a light panel rather than on the dark background,
// where its legend would be unreadable, and the text around it is light.
var (
	lightTheme = widgetTheme{text: "#444", mapStyle: ""}
	darkTheme  = widgetTheme{text: "#D5DBDB", mapStyle: ";background:#F2F3F3;border-radius:4px;padding:4px"}
)

type widgetTheme struct{ text, mapStyle string }

// TimeRange is the dashboard's range, in Unix milliseconds.
type TimeRange struct {
	Mode  string `json:"mode"` // "relative" or "absolute"
	Start int64  `json:"start"`
	End   int64  `json:"end"`
	Zoom  *struct {
		Start int64 `json:"start"`
		End   int64 `json:"end"`
	} `json:"zoom"`
}

// Source is where the records come from: the ledger's Store on AWS (a
// Query on the by-status index, nothing else), the run's records locally.
type Source interface {
	Query(ctx context.Context, in ledger.QueryInput) ([]ledger.Record, error)
}

// Options adjust a Widget.
type Options struct {
	// MaxRecords caps the records read per call, newest first (default
	// DefaultMaxRecords): it bounds the function's time, memory and read
	// cost whatever range the dashboard shows. The widget says when the
	// cap cut the range short.
	MaxRecords int
	// DefaultRange is shown when the event has no usable time range.
	DefaultRange time.Duration
	// Clock returns the current time (default time.Now).
	Clock func() time.Time
	// Logger receives one line per call (default: discarded).
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultMaxRecords   = 10000
	DefaultRange        = 3 * time.Hour
	defaultWidth        = 960
	minWidth            = 320
	headerHeight        = 34 // the line above the map, pixels
	widgetHorizontalPad = 12
	// sideBySideWidth is the widget width from which a closer map is drawn
	// beside the world map.
	sideBySideWidth = 1000
)

// Widget draws the map for one event.
type Widget struct {
	src  Source
	opts Options
}

// New returns a widget reading records from src.
func New(src Source, optFns ...func(*Options)) *Widget {
	o := Options{MaxRecords: DefaultMaxRecords, DefaultRange: DefaultRange, Clock: time.Now}
	for _, fn := range optFns {
		fn(&o)
	}
	if o.MaxRecords <= 0 {
		o.MaxRecords = DefaultMaxRecords
	}
	if o.DefaultRange <= 0 {
		o.DefaultRange = DefaultRange
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	}
	return &Widget{src: src, opts: o}
}

// Markdown is the {"markdown": ...} answer CloudWatch shows as text.
type Markdown struct {
	Markdown string `json:"markdown"`
}

// Handle answers one invocation: the HTML of the map, or Markdown for
// "describe". A bad parameter is answered with a message in the widget,
// not an error: the dashboard's author sees what to fix.
func (w *Widget) Handle(ctx context.Context, ev Event) (any, error) {
	if ev.Describe {
		return Markdown{Markdown: describe}, nil
	}
	started := w.opts.Clock()
	q, err := w.query(ev)
	if err != nil {
		return message(err.Error()), nil
	}
	records, err := w.src.Query(ctx, q.input)
	if err != nil {
		return nil, fmt.Errorf("read the records of %s to %s: %w", q.input.Since.Format(time.RFC3339), q.input.Until.Format(time.RFC3339), err)
	}
	points, skipped := geomap.FromRecords(records, q.colorBy)
	// A wide widget shows the world and, beside it, a closer look where
	// most points are (their radii are too small to see on the world).
	worldWidth := q.width
	sub, bounds, label, closer := geomap.Focus(points)
	closer = closer && q.width >= sideBySideWidth
	if closer {
		worldWidth = q.width * 55 / 100
	}
	theme := lightTheme
	if q.theme == themeDark {
		theme = darkTheme
	}
	style := "display:block;max-width:100%;width:auto;height:auto" + theme.mapStyle
	if q.height > 0 {
		style += ";max-height:" + strconv.Itoa(q.height) + "px"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<div class="geomap-widget" style="font-family:Helvetica,Arial,sans-serif;font-size:12px;color:%s">`, theme.text)
	fmt.Fprintf(&b, `<p style="margin:0 0 4px 0">%s</p>`, html.EscapeString(q.summary(len(records), len(points), skipped, w.opts.MaxRecords)))
	b.WriteString(`<div style="display:flex;gap:8px;align-items:flex-start">`)
	res, err := drawMap(&b, points, worldWidth, "geomap-"+idSafe(q.widgetID), nil, style, "")
	if err != nil {
		return nil, err
	}
	if closer {
		title := fmt.Sprintf("Closer: %d point(s) around %s", len(sub), label)
		if _, err := drawMap(&b, sub, q.width-worldWidth-8, "geomap-closer-"+idSafe(q.widgetID), &bounds, style, title); err != nil {
			return nil, err
		}
	}
	b.WriteString(`</div></div>`)
	lambdarun.WithRequestID(ctx, w.opts.Logger).LogAttrs(ctx, slog.LevelInfo, "map drawn",
		slog.String("dashboard", q.dashboard), slog.String("widget_id", q.widgetID),
		slog.Time("from", q.input.Since), slog.Time("to", q.input.Until), slog.String("status", q.input.Status),
		slog.Int("records", len(records)), slog.Int("points", res.Points), slog.Int("clusters", res.Clusters),
		slog.Int("html_bytes", b.Len()), slog.Duration("took", w.opts.Clock().Sub(started)))
	return b.String(), nil
}

// drawMap writes one map, its title (if any) above it, in a block.
func drawMap(b *strings.Builder, points []geomap.Point, width int, id string, bounds *geomap.Bounds, style, title string) (geomap.Result, error) {
	var svg strings.Builder
	res, err := geomap.Render(&svg, points, func(o *geomap.Options) {
		o.Width, o.ID, o.Bounds = width, id, bounds
	})
	if err != nil {
		return res, fmt.Errorf("draw the map: %w", err)
	}
	b.WriteString(`<div>`)
	if title != "" {
		fmt.Fprintf(b, `<p style="margin:0 0 2px 0;font-weight:bold">%s</p>`, html.EscapeString(title))
	}
	b.WriteString(strings.Replace(svg.String(), "<svg ", `<svg style="`+style+`" `, 1))
	b.WriteString(`</div>`)
	return res, nil
}

// query is one invocation's reading of its event.
type query struct {
	input         ledger.QueryInput
	colorBy       geomap.ColorBy
	width, height int
	dashboard     string
	widgetID      string
	theme         string
	fellBack      string // why the default range is shown, if it is
}

func (w *Widget) query(ev Event) (query, error) {
	p := ev.Params
	q := query{colorBy: geomap.ByStatus, width: defaultWidth}
	if c := ev.WidgetContext; c != nil {
		q.dashboard, q.widgetID, q.theme = c.DashboardName, c.WidgetID, c.Theme
		if c.Params != nil && p == (Params{}) {
			p = *c.Params
		}
		if c.Width > 0 {
			q.width = max(c.Width-widgetHorizontalPad, minWidth)
		}
		if c.Height > headerHeight {
			q.height = c.Height - headerHeight
		}
	}
	switch strings.ToLower(p.ColorBy) {
	case "", string(geomap.ByStatus):
	case string(geomap.ByModel):
		q.colorBy = geomap.ByModel
	default:
		return q, fmt.Errorf("parameter colorBy %q: want %q or %q", p.ColorBy, geomap.ByStatus, geomap.ByModel)
	}
	q.input.Status = ledger.StatusSucceeded
	if p.Status != "" {
		if !isStatus(p.Status) {
			return q, fmt.Errorf("parameter status %q: want one of %s", p.Status, strings.Join(ledger.Statuses, ", "))
		}
		q.input.Status = p.Status
	}
	q.input.KeyPrefix = p.Prefix
	q.input.Limit = w.opts.MaxRecords

	now := w.opts.Clock()
	from, to, why := rangeOf(ev.WidgetContext)
	if why != "" {
		from, to, q.fellBack = now.Add(-w.opts.DefaultRange), now, why
	}
	// Nothing is recorded after now; a range wholly in the future is empty.
	if to.After(now) {
		to = now
	}
	if from.After(to) {
		from = to
	}
	// The ledger reads at most MaxQueryDays back from the range's end.
	if oldest := to.Add(-(ledger.MaxQueryDays - 1) * 24 * time.Hour); from.Before(oldest) {
		from = oldest
		q.fellBack = fmt.Sprintf("the range starts more than %d days before its end; shown from %s", ledger.MaxQueryDays-1, oldest.UTC().Format(time.DateOnly))
	}
	q.input.Since, q.input.Until = from, to
	return q, nil
}

// rangeOf is the range an event shows: its zoom if any, else its range;
// why says what was unusable.
func rangeOf(c *WidgetContext) (from, to time.Time, why string) {
	if c == nil {
		return from, to, "no widgetContext in the event"
	}
	start, end := c.TimeRange.Start, c.TimeRange.End
	if z := c.TimeRange.Zoom; z != nil && z.Start > 0 && z.End > z.Start {
		start, end = z.Start, z.End
	}
	if start <= 0 || end <= start {
		return from, to, fmt.Sprintf("the event's time range %d to %d is not a range", start, end)
	}
	return time.UnixMilli(start).UTC(), time.UnixMilli(end).UTC(), ""
}

func (q query) summary(records, points, skipped, maxRecords int) string {
	const layout = "2006-01-02 15:04"
	var s strings.Builder
	fmt.Fprintf(&s, "%s records %s to %s UTC", q.input.Status, q.input.Since.UTC().Format(layout), q.input.Until.UTC().Format(layout))
	if q.input.KeyPrefix != "" {
		fmt.Fprintf(&s, " under %q", q.input.KeyPrefix)
	}
	fmt.Fprintf(&s, ": %d on the map", points)
	if skipped > 0 {
		fmt.Fprintf(&s, ", %d without a position", skipped)
	}
	if records >= maxRecords {
		fmt.Fprintf(&s, "; the newest %d only", maxRecords)
	}
	if q.fellBack != "" {
		fmt.Fprintf(&s, " (%s)", q.fellBack)
	}
	s.WriteString(".")
	return s.String()
}

func message(text string) string {
	return `<p style="font-family:Helvetica,Arial,sans-serif;color:#D13212">` + html.EscapeString(text) + `</p>`
}

func isStatus(s string) bool {
	for _, st := range ledger.Statuses {
		if s == st {
			return true
		}
	}
	return false
}

// idSafe keeps a widget id usable in an SVG element id.
func idSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "widget"
	}
	return b.String()
}

const describe = `## Prediction map

Draws the dashboard's time range of prediction records on a world map
(Natural Earth land, Equal Earth projection): each prediction with its radius
to scale, the photo's EXIF position and the error line to it, coloured by
status or model. Past 300 markers, points are grouped by a grid with their
count. Reads at most the newest 10,000 records of the range (a Query on the
results table's by-status index).

Parameters (all optional):

    colorBy: status | model     # default status
    status: succeeded           # or in_progress, waiting, rejected, failed
    prefix: uploads/2026/       # object keys starting with this
`
