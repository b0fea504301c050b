package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/local/dashpage"
)

// TestDashboardScreenshotIsCurrent: docs/dashboard-demo.png, the README's
// picture of the dashboard, is committed with the list of widgets (type and
// title, in order) it was drawn from. When the stack's dashboard has other
// widgets, the picture shows an older dashboard (issue 46 point 17: other
// model names, fewer widgets and alarms): redraw it with make screenshots,
// which writes both from the page itself.
func TestDashboardScreenshotIsCurrent(t *testing.T) {
	s := synthApp(t).disposable // the stack make synth and make dashboard-demo draw
	template, err := json.Marshal(s.doc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := dashpage.Widgets(template)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "docs", "dashboard-demo.widgets.json"))
	if err != nil {
		t.Fatal(err)
	}
	var drawn []dashpage.WidgetInfo
	if err := json.Unmarshal(raw, &drawn); err != nil {
		t.Fatalf("docs/dashboard-demo.widgets.json: %v", err)
	}
	if len(got) != len(drawn) {
		t.Errorf("the dashboard has %d widgets, its screenshot was drawn from %d: run make screenshots", len(got), len(drawn))
	}
	for i := range min(len(got), len(drawn)) {
		if got[i] != drawn[i] {
			t.Errorf("widget %d is %+v, the screenshot shows %+v: run make screenshots", i, got[i], drawn[i])
		}
	}
}
