package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dashboardTemplate is a stack template in miniature: a dashboard with a
// graph of a metric the predictor publishes and one SQS publishes, and an
// alarm on the latter, written as CDK writes them (Fn::Join, GetAtt).
const dashboardTemplate = `{"Resources":{
 "Queue":{"Type":"AWS::SQS::Queue","Properties":{}},
 "Board":{"Type":"AWS::CloudWatch::Dashboard","Properties":{"DashboardBody":{"Fn::Join":["",[
  "{\"widgets\":[{\"type\":\"metric\",\"x\":0,\"y\":0,\"width\":12,\"height\":6,\"properties\":{\"view\":\"timeSeries\",\"title\":\"Images\",\"region\":\"eu-west-1\",\"period\":300,\"metrics\":[[\"Geolocation\",\"ImagesSucceeded\",\"Pipeline\",\"",
  {"Ref":"AWS::StackName"},
  "\",{\"stat\":\"Sum\"}],[\"AWS/SQS\",\"NumberOfMessagesDeleted\",\"QueueName\",\"",
  {"Fn::GetAtt":["Queue","QueueName"]},
  "\",{\"stat\":\"Sum\"}]]}},{\"type\":\"alarm\",\"x\":12,\"y\":0,\"width\":12,\"height\":6,\"properties\":{\"title\":\"Alarms\",\"alarms\":[\"",
  {"Fn::GetAtt":["Deleted","Arn"]},
  "\"]}}]}"]]}}},
 "Deleted":{"Type":"AWS::CloudWatch::Alarm","Properties":{"AlarmName":"Geolocation-Deleted","ComparisonOperator":"GreaterThanOrEqualToThreshold","Threshold":1000,"EvaluationPeriods":1,
  "MetricName":"NumberOfMessagesDeleted","Namespace":"AWS/SQS","Dimensions":[{"Name":"QueueName","Value":{"Fn::GetAtt":["Queue","QueueName"]}}],"Statistic":"Sum","Period":300,"TreatMissingData":"missing"}}
}}`

func TestLocalWritesTheDashboardPage(t *testing.T) {
	dir := t.TempDir()
	images := filepath.Join(dir, "images")
	if err := os.Mkdir(images, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(imgJPEG)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(images, "photo.jpg"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	template := filepath.Join(dir, "stack.template.json")
	if err := os.WriteFile(template, []byte(dashboardTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "dashboard.html")

	r := runCLI(t, map[string]string{}, nil, "local", "--images", images, "--dashboard", page, "--template", template)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatalf("no page: %v\n%s", err, r.stderr)
	}
	html := string(data)
	// Both series come from the run: the function's EMF line and the
	// queue's metric as SQS would publish it; the alarm's threshold shows.
	for _, missing := range []string{"no local data for Geolocation/ImagesSucceeded", "no local data for AWS/SQS/NumberOfMessagesDeleted"} {
		if strings.Contains(html, missing) {
			t.Errorf("the page says %q", missing)
		}
	}
	if !strings.Contains(html, "Images") || strings.Contains(html, "<script src") {
		t.Errorf("page lacks the widget, or loads a script from elsewhere (%d bytes)", len(html))
	}
	// The alarm is judged on the run's data, as CloudWatch would a minute
	// after the run: OK, not INSUFFICIENT_DATA (its missing-data rule), even
	// for a run of seconds.
	if !strings.Contains(html, `<li data-state="OK" title="Geolocation-Deleted: `) {
		t.Errorf("the alarm widget does not show Geolocation-Deleted in OK")
	}

	// Without a template the run stops before anything starts.
	r = runCLI(t, map[string]string{}, nil, "local", "--images", images, "--dashboard", page, "--template", filepath.Join(dir, "absent.json"))
	if r.code == 0 || !strings.Contains(r.stderr, "make synth") || strings.Contains(r.stderr, "uploaded") {
		t.Errorf("missing template: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}
