package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/dashpage/browsertest"
	"github.com/geolocate-aws/geolocate/pkg/local/scenario"
	"github.com/geolocate-aws/geolocate/pkg/shared/resultevents"
)

// TestDemoDashboardIsReadable draws the synthesized stack's dashboard from
// the simulated busy day (geolocate local --dashboard-demo), from noon to
// 16:00 to keep the test short, the service's outage at 14:00 included,
// and looks at it in headless chromium at a laptop's width (1280 px), the
// browser in a time zone far from UTC:
//   - every chart is readable (browsertest.AssertReadable: none squashed,
//     no label cut at a chart's edge, no two labels on top of each other,
//     no widget's content, a legend, hidden past its edge);
//   - the time labels are UTC, as the page's header says (14:00 UTC is
//     03:00 in Auckland);
//   - the alarm that fired during the outage shows a red stretch in the
//     alarm widget, in the screenshot.
func TestDemoDashboardIsReadable(t *testing.T) {
	if testing.Short() {
		t.Skip("plays four simulated hours on DynamoDB Local")
	}
	browsertest.Chromium(t)
	// The disposable stack keeps cdk.json's result events on the default
	// bus, as `make dashboard-demo` draws them (the created one has none).
	s := synthApp(t).disposable
	template, err := json.Marshal(s.doc)
	if err != nil {
		t.Fatal(err)
	}
	s3c, bucket := awspartstest.S3Unversioned(t)
	ddb, table := awspartstest.DynamoDB(t)
	noon := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "dashboard-demo.html")
	err = scenario.WriteDemoDashboard(t.Context(), path, scenario.DemoOptions{
		Template: template, StackName: s.cfg.StackName,
		S3: s3c, Bucket: bucket, DynamoDB: ddb, Table: table,
		Start: noon, Day: 4 * time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}

	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A third of the day's photos carry a GPS position: the accuracy
	// widgets are drawn, not "no local data".
	if strings.Contains(string(page), "no local data for Geolocation/PredictionErrorKm") {
		t.Errorf("the accuracy widgets have no data: the day's photos carry no position")
	}
	// The result events graph reads the counting rules' TriggeredRules and
	// the pipe's EventCount, which the rig publishes from the day's final
	// records: the day's geolocated photos and the records through the
	// pipe have data (a type with no event has none, as in CloudWatch).
	if !strings.Contains(string(page), "Result events published, by type") {
		t.Errorf("the demo page has no result events graph")
	}
	for _, label := range []string{resultevents.DetailTypeGeolocated, "Records through the pipe"} {
		if strings.Contains(string(page), label+": no local data") {
			t.Errorf("the result events graph has no data for %q: the demo published no result events", label)
		}
	}

	layout := browsertest.Layout(t, path, 1280, 1400, "TZ=Pacific/Auckland")
	browsertest.AssertReadable(t, layout)
	texts := layout.Texts()
	if !slices.Contains(texts, "14:00") || slices.Contains(texts, "03:00") {
		t.Errorf("time labels %v: want UTC (14:00), not the browser's time zone (03:00)", strings.Join(texts, " "))
	}

	shot, boxes := browsertest.ShotWithBoxes(t, path, `ul.alarms span[data-state="ALARM"]`, 1280, 2400)
	if len(boxes) == 0 {
		t.Fatal("no ALARM stretch in the alarm widget: the outage fired no alarm")
	}
	for _, b := range boxes {
		if ok, got := browsertest.ColorNear(shot, b.Left+b.Width/2, b.Top+b.Height/2, "#d13212", 16); !ok {
			t.Errorf("an ALARM stretch at %.0f,%.0f is %s, want ALARM red #d13212", b.Left, b.Top, got)
		}
	}
}
