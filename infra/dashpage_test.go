package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/dashpage"
	"github.com/geolocate-aws/geolocate/pkg/local/dashpage/browsertest"
)

// TestDashboardPageRendersTheStackDashboard draws the synthesized stack's
// own dashboard (pkg/local/dashpage) from an hour of credits running down,
// with the template's alarms evaluated over it, and loads the page in
// headless chromium: every widget is on the page, every chart draws
// without a script error, and the alarm states show in their colours.
func TestDashboardPageRendersTheStackDashboard(t *testing.T) {
	browsertest.Chromium(t)
	s := synthApp(t).created
	template, err := json.Marshal(s.doc)
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]string{"AWS::StackName": s.cfg.StackName, "AWS::Region": "local"}
	alarms, err := alarmeval.ParseTemplate(template, func(o *alarmeval.ParseOptions) { o.Refs = refs })
	if err != nil {
		t.Fatal(err)
	}

	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	store := alarmeval.NewStore()
	for m := range 60 {
		at := start.Add(time.Duration(m) * time.Minute)
		for name, v := range map[string]float64{
			"CreditsRemaining": max(400-10*float64(m), 20),
			"ImagesSucceeded":  5,
			"CreditsConsumed":  5,
			"ServiceLatency":   800 + 10*float64(m),
		} {
			if err := store.Add(alarmeval.Datapoint{Namespace: "Geolocation", MetricName: name, Dimensions: map[string]string{"Pipeline": s.cfg.StackName}, Timestamp: at, Value: v}); err != nil {
				t.Fatal(err)
			}
		}
	}
	eval, err := alarmeval.NewEvaluator(store, alarms, func(o *alarmeval.Options) { o.MatchUnresolvedByKey = true })
	if err != nil {
		t.Fatal(err)
	}
	for m := range 60 {
		if _, err := eval.Evaluate(start.Add(time.Duration(m) * time.Minute)); err != nil {
			t.Fatal(err)
		}
	}

	path := filepath.Join(t.TempDir(), "dashboard.html")
	err = dashpage.WriteFile(path, dashpage.Source{Template: template, Metrics: store, Alarms: eval, From: start, To: start.Add(time.Hour)},
		func(o *dashpage.Options) { o.Refs = refs; o.MatchUnresolvedByKey = true })
	if err != nil {
		t.Fatalf("write the page: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)

	dashboards := s.resources("AWS::CloudWatch::Dashboard")
	if len(dashboards) != 1 {
		t.Fatalf("%d dashboards in the template, want 1", len(dashboards))
	}
	for _, d := range dashboards {
		body, _ := json.Marshal(d["Properties"].(map[string]any)["DashboardBody"])
		want := strings.Count(string(body), `\"type\":`)
		if got := strings.Count(page, `<section class="widget"`); got != want || got == 0 {
			t.Errorf("%d widgets on the page, the dashboard body has %d", got, want)
		}
	}
	for _, want := range []string{`data-widget-type="alarm"`, `data-widget-type="log"`, "runs in CloudWatch Logs only", "CreditsLow"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	charts := strings.Count(page, `dashpageChart("chart`)
	if charts < 5 {
		t.Fatalf("%d charts on the page, want the graphs with data and the alarm widget", charts)
	}
	browsertest.AssertDashboardRendered(t, path, charts)
}
