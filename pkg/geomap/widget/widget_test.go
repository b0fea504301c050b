package widget

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/geolocate-aws/geolocate/pkg/lambdarun"
	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/awscalls"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
)

// widgetCalls records the AWS calls of the widget's reads; the golden list
// testdata/aws-calls/mapwidget.json is what infra/policy_calls_test.go
// requires the stack to grant the function, and nothing more.
var widgetCalls awscalls.Recorder

func TestMain(m *testing.M) {
	os.Exit(awscalls.FinishMain(awspartstest.Run(m), "../../../testdata/aws-calls/mapwidget.json", "pkg/geomap/widget", widgetCalls.Calls()))
}

// fakeSource records the query and answers with records.
type fakeSource struct {
	got     []ledger.QueryInput
	records []ledger.Record
	err     error
}

func (f *fakeSource) Query(_ context.Context, in ledger.QueryInput) ([]ledger.Record, error) {
	f.got = append(f.got, in)
	return f.records, f.err
}

var now = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func newWidget(src Source) *Widget {
	return New(src, func(o *Options) { o.Clock = func() time.Time { return now } })
}

func f64(v float64) *float64 { return &v }

// event decodes a widget event as Lambda hands it to the handler.
func event(t *testing.T, raw string) Event {
	t.Helper()
	var ev Event
	if err := json.Unmarshal([]byte(raw), &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// The example event of AWS's documentation, with a zoom: the zoomed range
// is the one read.
const docEvent = `{
  "original": "param-to-widget",
  "widgetContext": {
    "dashboardName": "Geolocation-eu-west-1", "widgetId": "widget-16", "accountId": "123456789012", "locale": "en",
    "timezone": {"label": "UTC", "offsetISO": "+00:00", "offsetInMinutes": 0},
    "period": 300, "isAutoPeriod": true,
    "timeRange": {"mode": "relative", "start": 1627236199729, "end": 1627322599729, "relativeStart": 86400012,
      "zoom": {"start": 1627276030434, "end": 1627282956521}},
    "theme": "light", "linkCharts": true, "title": "Where the photos are",
    "forms": {"all": {}}, "params": {"original": "param-to-widget"}, "width": 588, "height": 369
  }
}`

func TestHandleReadsTheDashboardsRange(t *testing.T) {
	src := &fakeSource{records: []ledger.Record{
		{Key: "a.jpg", Status: ledger.StatusSucceeded, Latitude: f64(48.85), Longitude: f64(2.35), RadiusKM: f64(300)},
		{Key: "b.jpg", Status: ledger.StatusSucceeded},
	}}
	out, err := newWidget(src).Handle(context.Background(), event(t, docEvent))
	if err != nil {
		t.Fatal(err)
	}
	if len(src.got) != 1 {
		t.Fatalf("%d queries", len(src.got))
	}
	in := src.got[0]
	if !in.Since.Equal(time.UnixMilli(1627276030434)) || !in.Until.Equal(time.UnixMilli(1627282956521)) {
		t.Errorf("read %s to %s, want the zoomed range", in.Since, in.Until)
	}
	if in.Status != ledger.StatusSucceeded || in.Limit != DefaultMaxRecords || in.KeyPrefix != "" {
		t.Errorf("query %+v", in)
	}
	page, ok := out.(string)
	if !ok {
		t.Fatalf("answer %T, want HTML", out)
	}
	for _, want := range []string{`<svg style="display:block;max-width:100%;width:auto;height:auto;max-height:335px" xmlns="http://www.w3.org/2000/svg"`,
		`width="576"`, `data-points="1"`, "succeeded records 2021-07-26 05:07 to 2021-07-26 07:02 UTC: 1 on the map, 1 without a position.",
		`clip-path="url(#geomap-widget-16-sphere)"`} {
		if !strings.Contains(page, want) {
			t.Errorf("answer lacks %q:\n%.600s", want, page)
		}
	}
	if strings.Contains(page, "<script") {
		t.Errorf("the answer has a script, which CloudWatch would remove")
	}
}

func TestHandleParametersAndFallbacks(t *testing.T) {
	t.Run("parameters at the top level", func(t *testing.T) {
		src := &fakeSource{}
		ev := event(t, `{"colorBy":"model","status":"rejected","prefix":"2026/","widgetContext":{"timeRange":{"start":1000,"end":2000}}}`)
		if _, err := newWidget(src).Handle(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		if in := src.got[0]; in.Status != "rejected" || in.KeyPrefix != "2026/" || !in.Until.Equal(time.UnixMilli(2000)) {
			t.Errorf("query %+v", in)
		}
	})
	t.Run("parameters only in widgetContext", func(t *testing.T) {
		src := &fakeSource{}
		ev := event(t, `{"widgetContext":{"params":{"prefix":"x/"},"timeRange":{"start":1000,"end":2000}}}`)
		if _, err := newWidget(src).Handle(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		if src.got[0].KeyPrefix != "x/" {
			t.Errorf("query %+v", src.got[0])
		}
	})
	t.Run("no widgetContext: the default range, said", func(t *testing.T) {
		src := &fakeSource{}
		out, err := newWidget(src).Handle(context.Background(), Event{})
		if err != nil {
			t.Fatal(err)
		}
		if in := src.got[0]; !in.Since.Equal(now.Add(-DefaultRange)) || !in.Until.Equal(now) {
			t.Errorf("read %s to %s, want the last %s", in.Since, in.Until, DefaultRange)
		}
		if !strings.Contains(out.(string), "(no widgetContext in the event)") || !strings.Contains(out.(string), `width="960"`) {
			t.Errorf("answer %.300s", out)
		}
	})
	t.Run("a range beyond what the ledger reads is cut, and said", func(t *testing.T) {
		src := &fakeSource{}
		ev := Event{WidgetContext: &WidgetContext{TimeRange: TimeRange{Start: now.AddDate(-2, 0, 0).UnixMilli(), End: now.UnixMilli()}}}
		out, err := newWidget(src).Handle(context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		if d := src.got[0].Until.Sub(src.got[0].Since); d > ledger.MaxQueryDays*24*time.Hour {
			t.Errorf("reads %s, more than the ledger allows", d)
		}
		if !strings.Contains(out.(string), "more than 399 days") {
			t.Errorf("answer %.300s", out)
		}
	})
	t.Run("a range in the future ends now", func(t *testing.T) {
		src := &fakeSource{}
		ev := Event{WidgetContext: &WidgetContext{TimeRange: TimeRange{Start: now.Add(time.Hour).UnixMilli(), End: now.Add(2 * time.Hour).UnixMilli()}}}
		if _, err := newWidget(src).Handle(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		if in := src.got[0]; !in.Since.Equal(now) || !in.Until.Equal(now) {
			t.Errorf("read %s to %s, want nothing past now", in.Since, in.Until)
		}
	})
	t.Run("a wide widget adds a closer map where most points are", func(t *testing.T) {
		src := &fakeSource{records: []ledger.Record{
			{Key: "paris.jpg", Status: ledger.StatusSucceeded, Latitude: f64(48.85), Longitude: f64(2.35), RadiusKM: f64(90), Place: "Paris"},
			{Key: "prague.jpg", Status: ledger.StatusSucceeded, Latitude: f64(50.08), Longitude: f64(14.44), RadiusKM: f64(80)},
			{Key: "sydney.jpg", Status: ledger.StatusSucceeded, Latitude: f64(-33.86), Longitude: f64(151.2), RadiusKM: f64(50)},
		}}
		ev := Event{WidgetContext: &WidgetContext{WidgetID: "w1", Width: 1412, Height: 500, TimeRange: TimeRange{Start: 1000, End: 2000}}}
		out, err := newWidget(src).Handle(context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		page := out.(string)
		if strings.Count(page, `class="geomap"`) != 2 || !strings.Contains(page, "Closer: 2 point(s) around Paris") ||
			!strings.Contains(page, `width="770"`) || !strings.Contains(page, `data-points="2" data-individual="2" data-clusters="0" data-radii="2"`) {
			t.Errorf("answer %.1500s", page)
		}
	})
	t.Run("a bad parameter is shown, and nothing is read", func(t *testing.T) {
		src := &fakeSource{}
		out, err := newWidget(src).Handle(context.Background(), event(t, `{"colorBy":"rainbow"}`))
		if err != nil || !strings.Contains(out.(string), `parameter colorBy &#34;rainbow&#34;`) || len(src.got) != 0 {
			t.Errorf("answer %v %v, %d queries", out, err, len(src.got))
		}
	})
	t.Run("the newest MaxRecords only, said", func(t *testing.T) {
		src := &fakeSource{records: make([]ledger.Record, 3)}
		w := New(src, func(o *Options) { o.MaxRecords = 3; o.Clock = func() time.Time { return now } })
		out, _ := w.Handle(context.Background(), Event{})
		if src.got[0].Limit != 3 || !strings.Contains(out.(string), "the newest 3 only") {
			t.Errorf("limit %d, answer %.300s", src.got[0].Limit, out)
		}
	})
	t.Run("a read that fails is the invocation's error", func(t *testing.T) {
		_, err := newWidget(&fakeSource{err: errors.New("AccessDenied")}).Handle(context.Background(), Event{})
		if err == nil || !strings.Contains(err.Error(), "AccessDenied") {
			t.Errorf("err %v", err)
		}
	})
	t.Run("describe", func(t *testing.T) {
		out, err := lambdarun.Invoke(context.Background(), newWidget(&fakeSource{}).Handle, []byte(`{"describe":true}`), time.Minute)
		var md struct{ Markdown string }
		if err != nil || json.Unmarshal(out, &md) != nil || !strings.HasPrefix(md.Markdown, "## Prediction map") {
			t.Errorf("describe: %s %v", out, err)
		}
	})
}

// TestWidgetReadsTheLedgerIndex draws from the ledger on DynamoDB Local, as
// the function does, and records its AWS calls: a Query on the by-status
// index, nothing else (the golden list the stack's grant is checked against).
func TestWidgetReadsTheLedgerIndex(t *testing.T) {
	client, table := awspartstest.DynamoDB(t)
	clock := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	seed := ledger.New(client, table, func(o *ledger.Options) { o.Clock = func() time.Time { return clock } })
	ctx := context.Background()
	for i, key := range []string{"early.jpg", "paris.jpg", "tokyo.jpg", "late.jpg"} {
		ref := ledger.ObjectRef{Bucket: "uploads", Key: key, VersionID: "v1"}
		claim, _, err := seed.Claim(ctx, ref, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		lat := float64(10 * i)
		if err := seed.Complete(ctx, claim, ledger.Record{Latitude: f64(lat), Longitude: f64(lat), RadiusKM: f64(100)}); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(time.Hour)
	}
	code := dynamodb.New(client.Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(slices.Clip(o.APIOptions), widgetCalls.Register)
	})
	// Records at 09:00, 10:00, 11:00, 12:00; the dashboard shows 09:30 to 11:30.
	from, to := time.Date(2026, 11, 25, 9, 30, 0, 0, time.UTC), time.Date(2026, 11, 25, 11, 30, 0, 0, time.UTC)
	w := New(ledger.New(code, table, func(o *ledger.Options) { o.Clock = func() time.Time { return clock } }))
	payload, _ := json.Marshal(Event{WidgetContext: &WidgetContext{TimeRange: TimeRange{Mode: "absolute", Start: from.UnixMilli(), End: to.UnixMilli()}, Width: 800}})
	out, err := lambdarun.Invoke(ctx, w.Handle, payload, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var page string
	if err := json.Unmarshal(out, &page); err != nil {
		t.Fatalf("the answer is not a JSON string of HTML: %s", out)
	}
	if !strings.Contains(page, `data-points="2"`) || !strings.Contains(page, "paris.jpg") || !strings.Contains(page, "tokyo.jpg") || strings.Contains(page, "early.jpg") || strings.Contains(page, "late.jpg") {
		t.Errorf("the map does not hold exactly the range's two records:\n%.800s", page)
	}
	for _, c := range widgetCalls.Calls() {
		if c.Operation != "Query" || c.IndexName != "by-status" {
			t.Errorf("the widget called %s %s on %q/%q: it may only Query the by-status index", c.Service, c.Operation, c.TableName, c.IndexName)
		}
	}
}

// A dark dashboard (widgetContext.theme "dark") gets light text around the
// map and each map on a light panel, where its dark legend stays readable;
// a light one is drawn as before.
func TestHandleFollowsTheDashboardsTheme(t *testing.T) {
	src := &fakeSource{records: []ledger.Record{
		{Key: "a.jpg", Status: ledger.StatusSucceeded, Latitude: f64(48.85), Longitude: f64(2.35), RadiusKM: f64(300)},
	}}
	for _, theme := range []string{"light", "dark"} {
		out, err := newWidget(src).Handle(context.Background(), event(t, strings.Replace(docEvent, `"theme": "light"`, `"theme": "`+theme+`"`, 1)))
		if err != nil {
			t.Fatal(err)
		}
		page := out.(string)
		dark := theme == "dark"
		if got := strings.Contains(page, `color:`+darkTheme.text+`"`); got != dark {
			t.Errorf("%s theme: light text %t\n%.400s", theme, got, page)
		}
		if got := strings.Contains(page, `height:auto`+darkTheme.mapStyle); got != dark {
			t.Errorf("%s theme: map on a light panel %t\n%.600s", theme, got, page)
		}
	}
}
