package dashpage

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/dashpage/browsertest"
)

var refs = map[string]string{"AWS::StackName": "Geo", "AWS::Region": "local"}

// run is an hour of a local run: credits fall 10 a minute from 400 to 20
// (the CreditsLow alarm, < 100, fires at minute 31), 6 calls a minute, and one
// timeout failure every 10 minutes.
func run(t *testing.T) (template []byte, src Source) {
	t.Helper()
	template, err := os.ReadFile("testdata/template.json")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	store := alarmeval.NewStore()
	pipeline := map[string]string{"Pipeline": "Geo"}
	for m := range 60 {
		at := start.Add(time.Duration(m) * time.Minute)
		add := func(name string, v float64, dims map[string]string) {
			if err := store.Add(alarmeval.Datapoint{Namespace: "App", MetricName: name, Dimensions: dims, Timestamp: at, Value: v}); err != nil {
				t.Fatal(err)
			}
		}
		add("CreditsRemaining", max(400-10*float64(m), 20), pipeline)
		add("Calls", 6, pipeline)
		if m%10 == 0 {
			add("Failed", 1, map[string]string{"Pipeline": "Geo", "Reason": "timeout"})
		}
	}
	alarms, err := alarmeval.ParseTemplate(template, func(o *alarmeval.ParseOptions) { o.Refs = refs })
	if err != nil {
		t.Fatal(err)
	}
	eval, err := alarmeval.NewEvaluator(store, alarms)
	if err != nil {
		t.Fatal(err)
	}
	for m := range 60 {
		if _, err := eval.Evaluate(start.Add(time.Duration(m) * time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if s, _ := eval.State("Geo-CreditsLow"); s != alarmeval.StateAlarm {
		t.Fatalf("fixture: Geo-CreditsLow is %s, want ALARM", s)
	}
	return template, Source{Template: template, Metrics: store, Alarms: eval, From: start, To: start.Add(time.Hour)}
}

func writePage(t *testing.T, src Source) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, src, func(o *Options) { o.Refs = refs }); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.String()
}

func TestPageHasEveryWidgetInItsPlace(t *testing.T) {
	_, src := run(t)
	page := writePage(t, src)

	for _, want := range []string{
		`data-widget-type="metric" style="grid-column: 1 / span 8; grid-row: 1 / span 6;"`,
		`data-widget-type="metric" style="grid-column: 9 / span 16; grid-row: 1 / span 6;"`,
		`data-widget-type="alarm" style="grid-column: 1 / span 12; grid-row: 13 / span 6;"`,
		`data-widget-type="log" style="grid-column: 13 / span 12; grid-row: 13 / span 6;"`,
		`data-widget-type="text" style="grid-column: 1 / span 24; grid-row: 19 / span 2;"`,
		"<h1>Geo-local</h1>",
		// singleValue: the latest Minimum of the last 5-minute period.
		"<b>20</b><span>Remaining</span>",
		"Never published: no local data for App/NeverPublished{Pipeline=Geo}",
		// The queue's name stays an opaque reference nothing maps.
		"no local data for AWS/SQS/ApproximateNumberOfMessagesVisible{QueueName=GetAtt:Queue4A7E3555.QueueName}",
		"No local data for any metric of this widget",
		"runs in CloudWatch Logs only",
		"SOURCE &#39;Ref:Logs1&#39;",
		// Markdown rendered, not shown raw (issue 46 point 16).
		`<div class="text"><h3>Runbook</h3><p>See the README.</p></div>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(page, "<section class=\"widget\""); n != 8 {
		t.Errorf("%d widgets, want the template's 8", n)
	}
	// Charts: the credits graph, the search and the metric math; the queue
	// graph has no data and no alarm, and the alarm widget is HTML.
	if n := strings.Count(page, "dashpageChart(\"chart"); n != 3 {
		t.Errorf("%d charts, want 3", n)
	}
	// The log query's "</script>" must not end a script element early.
	if strings.Count(page, "</script>") != strings.Count(page, "<script") {
		t.Errorf("script elements are unbalanced")
	}
	if strings.Contains(page, "<script src") {
		t.Errorf("page loads a script from outside itself")
	}
}

func TestGraphDrawsThresholdBandsAndMath(t *testing.T) {
	_, src := run(t)
	page := writePage(t, src)
	for _, want := range []string{
		// The alarm's threshold on the credits graph, with its statistic.
		`"name":"Geo-CreditsLow: Minimum \u003c 100"`,
		`"yAxis":100`,
		// The search names each series by its Reason.
		`"name":"timeout"`,
		// FILL(f,0): 100*0/30 where no failure, 100*1/30 otherwise.
		`"name":"Failure rate"`,
	} {
		if !strings.Contains(page, want) && !strings.Contains(page, strings.ReplaceAll(want, `\u003c`, "<")) {
			t.Errorf("page lacks %s", want)
		}
	}
	rate := regexp.MustCompile(`\[\d+,3\.33333`)
	if !rate.MatchString(page) {
		t.Errorf("the failure rate (1 of 30 calls in a period with a failure) is not drawn")
	}
	// The credits graph's bands: OK from the first evaluation, then ALARM
	// once credits are under 100.
	ok, alarm := strings.Index(page, `"name":"OK"`), strings.Index(page, `"name":"ALARM"`)
	if ok < 0 || alarm < ok {
		t.Errorf("the graph lacks an OK band followed by an ALARM band (at %d and %d)", ok, alarm)
	}
}

func TestPageWithoutAlarms(t *testing.T) {
	_, src := run(t)
	src.Alarms = nil
	page := writePage(t, src)
	if strings.Contains(page, "Geo-CreditsLow") {
		t.Errorf("alarms drawn without an evaluator")
	}
	if !strings.Contains(page, "not evaluated locally") {
		t.Errorf("the alarm widget does not say its alarm was not evaluated")
	}
}

func TestWriteRefusesATemplateWithoutDashboard(t *testing.T) {
	_, src := run(t)
	src.Template = []byte(`{"Resources":{}}`)
	err := Write(&bytes.Buffer{}, src)
	if err == nil || !strings.Contains(err.Error(), "no AWS::CloudWatch::Dashboard") {
		t.Fatalf("Write = %v, want an error naming the missing dashboard", err)
	}
}

// TestPageRendersInBrowser loads the page in headless chromium from
// file://, with no network: every chart draws, no script fails, and the
// screenshot shows the alarm states' colours.
func TestPageRendersInBrowser(t *testing.T) {
	browsertest.Chromium(t)
	_, src := run(t)
	path := filepath.Join(t.TempDir(), "dashboard.html")
	if err := WriteFile(path, src, func(o *Options) { o.Refs = refs }); err != nil {
		t.Fatal(err)
	}
	browsertest.AssertDashboardRendered(t, path, 3)

	// The alarm widget's badge is in the alarm's current state's colour:
	// CreditsLow ends the hour in ALARM, red, whatever state it started in
	// (the label once sat on the grey of its first state).
	shot, boxes := browsertest.ShotWithBoxes(t, path, `ul.alarms li[data-state="ALARM"] .state`, 1600, 1400)
	if len(boxes) != 1 {
		t.Fatalf("%d ALARM badges, want CreditsLow's", len(boxes))
	}
	if ok, got := browsertest.ColorNear(shot, boxes[0].Left+3, boxes[0].Top+boxes[0].Height/2, "#d13212", 12); !ok {
		t.Errorf("the ALARM badge is %s, want ALARM red #d13212", got)
	}
}
