package dashpage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/geomap"
	mapwidget "github.com/geolocate-aws/geolocate/pkg/geomap/widget"
	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/dashpage/browsertest"
)

// customTemplate is a dashboard with the map's custom widget, as
// infra/mapwidget.go writes it.
const customTemplate = `{"Resources": {"Dash": {"Type": "AWS::CloudWatch::Dashboard", "Properties": {
  "DashboardName": "Geo-local",
  "DashboardBody": {"Fn::Join": ["", ["{\"widgets\":[{\"type\":\"custom\",\"width\":24,\"height\":12,\"x\":0,\"y\":0,\"properties\":{\"endpoint\":\"", {"Fn::GetAtt": ["MapWidget1", "Arn"]}, "\",\"params\":{\"colorBy\":\"status\"},\"title\":\"Where the photos are\",\"updateOn\":{\"refresh\":true,\"resize\":true,\"timeRange\":true}}}]}"]]}
}}}}`

var customFrom = time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)

func customSource() Source {
	return Source{Template: []byte(customTemplate), Metrics: alarmeval.NewStore(), From: customFrom, To: customFrom.Add(time.Hour)}
}

func f64(v float64) *float64 { return &v }

// records of a run: Oslo predicted with its EXIF position, Lima from EXIF.
var runRecords = []ledger.Record{
	{Key: "oslo.jpg", Status: ledger.StatusSucceeded, Source: ledger.SourceService, Latitude: f64(59.91), Longitude: f64(10.75), RadiusKM: f64(300),
		ExifLatitude: f64(60.39), ExifLongitude: f64(5.32), ErrorKm: f64(305), UpdatedAt: customFrom.Add(10 * time.Minute)},
	{Key: "lima.jpg", Status: ledger.StatusSucceeded, Source: ledger.SourceEXIF, Latitude: f64(-12.05), Longitude: f64(-77.04), UpdatedAt: customFrom.Add(20 * time.Minute)},
}

type records []ledger.Record

func (rs records) Query(_ context.Context, in ledger.QueryInput) ([]ledger.Record, error) {
	var out []ledger.Record
	for _, r := range rs {
		if !r.UpdatedAt.Before(in.Since) && !r.UpdatedAt.After(in.Until) {
			out = append(out, r)
		}
	}
	return out, nil
}

// mapWidget answers as functions/mapwidget would, and keeps the events.
func mapWidget(events *[]map[string]any) func(string, []byte) ([]byte, error) {
	w := mapwidget.New(records(runRecords), func(o *mapwidget.Options) { o.Clock = func() time.Time { return customFrom.Add(2 * time.Hour) } })
	return func(endpoint string, event []byte) ([]byte, error) {
		var ev map[string]any
		_ = json.Unmarshal(event, &ev)
		ev["endpoint"] = endpoint
		*events = append(*events, ev)
		return lambdarun.Invoke(context.Background(), w.Handle, event, time.Minute)
	}
}

func TestCustomWidgetIsDrawnByItsFunction(t *testing.T) {
	var events []map[string]any
	var buf bytes.Buffer
	err := Write(&buf, customSource(), func(o *Options) { o.CustomWidget = mapWidget(&events) })
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 {
		t.Fatalf("%d invocations, want 1", len(events))
	}
	ev := events[0]
	ctx := ev["widgetContext"].(map[string]any)
	tr := ctx["timeRange"].(map[string]any)
	if ev["endpoint"] != "GetAtt:MapWidget1.Arn" || ev["colorBy"] != "status" || ctx["dashboardName"] != "Geo-local" ||
		tr["start"] != float64(customFrom.UnixMilli()) || tr["end"] != float64(customFrom.Add(time.Hour).UnixMilli()) ||
		ctx["width"] != float64(1582) || ctx["height"] != float64(436) {
		t.Errorf("event %v", ev)
	}
	page := buf.String()
	for _, want := range []string{`data-widget-type="custom"`, "<h2>Where the photos are</h2>", `<svg style=`, `data-points="2"`, "oslo.jpg"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
}

func TestCustomWidgetAnswers(t *testing.T) {
	for name, c := range map[string]struct {
		answer []byte
		err    error
		want   string
	}{
		"no function":       {nil, nil, "in CloudWatch; no local function was given"},
		"markdown":          {[]byte(`{"markdown":"## Hello"}`), nil, "<pre>## Hello</pre>"},
		"a failure":         {nil, errors.New("boom"), "The widget&#39;s function failed: boom"},
		"a script":          {[]byte(`"<p>hi</p><script>alert(1)</script>"`), nil, "holds a script, which CloudWatch removes"},
		"neither":           {[]byte(`42`), nil, "answered neither HTML nor Markdown"},
		"html, shown as is": {[]byte(`"<p class=\"mine\">hello</p>"`), nil, `<div class="custom"><p class="mine">hello</p></div>`},
	} {
		var buf bytes.Buffer
		err := Write(&buf, customSource(), func(o *Options) {
			if name != "no function" {
				o.CustomWidget = func(string, []byte) ([]byte, error) { return c.answer, c.err }
			}
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(buf.String(), c.want) {
			t.Errorf("%s: page lacks %s", name, c.want)
		}
	}
}

// TestCustomWidgetInBrowser: the local dashboard page shows the map widget
// drawn from the run, the points where they belong.
func TestCustomWidgetInBrowser(t *testing.T) {
	browsertest.Chromium(t)
	var events []map[string]any
	path := filepath.Join(t.TempDir(), "dashboard.html")
	if err := WriteFile(path, customSource(), func(o *Options) { o.CustomWidget = mapWidget(&events) }); err != nil {
		t.Fatal(err)
	}
	shot, boxes := browsertest.ShotWithBoxes(t, path, "svg.geomap", 1600, 900)
	if len(boxes) != 1 || boxes[0].Width < 700 {
		t.Fatalf("map boxes %v, want the world map across the widget (the two points are too far apart for a closer one)", boxes)
	}
	browsertest.CheckMap(t, shot, boxes[0], 1570, geomap.Pixel, []browsertest.Place{
		{What: "Oslo's marker", Lat: 59.91, Lon: 10.75, Color: "#0072B2"},
		{What: "Bergen, Oslo's EXIF position (hollow)", Lat: 60.39, Lon: 5.32, Color: "#FFFFFF"},
		{What: "Lima's marker, from EXIF", Lat: -12.05, Lon: -77.04, Color: "#009E73"},
		{What: "Africa", Lat: 10, Lon: 20, Color: "#EAE6D9"},
		{What: "the Pacific", Lat: 0, Lon: -150, Color: "#DCE9F5"},
	})
}
