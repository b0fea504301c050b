package alarmeval

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func readTemplate(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/stack.template.json")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// withRefs resolves the template's stack name and threshold parameter.
func withRefs(opts *ParseOptions) {
	opts.Refs = map[string]string{"AWS::StackName": "Test", "Threshold": "100"}
}

func parseTestTemplate(t *testing.T) map[string]*Alarm {
	t.Helper()
	alarms, err := ParseTemplate(readTemplate(t), withRefs)
	if err != nil {
		t.Fatalf("ParseTemplate: %v", err)
	}
	byName := map[string]*Alarm{}
	for _, a := range alarms {
		byName[a.Name] = a
	}
	return byName
}

func TestParseTemplate(t *testing.T) {
	alarms := parseTestTemplate(t)
	var names []string
	for n := range alarms {
		names = append(names, n)
	}
	want := []string{"LatencyAlarm0A1B2C3D", "Test-CreditsLow", "Test-Errors", "Test-FailureRate", "Test-Heartbeat", "Test-Stalled"}
	if len(names) != len(want) {
		t.Fatalf("alarms %v, want %v", names, want)
	}

	errs := alarms["Test-Errors"]
	wantErrs := &Alarm{
		LogicalID:   "ErrorsAlarm8D70E52D",
		Name:        "Test-Errors",
		Description: "The function failed.",
		MetricStat: &MetricStat{
			Metric: Metric{Namespace: "AWS/Lambda", MetricName: "Errors", Dimensions: []Dimension{{"FunctionName", "Ref:Fn9CBB3B5A"}}},
			Stat:   Sum,
			Period: 5 * time.Minute,
		},
		Period:             5 * time.Minute,
		EvaluationPeriods:  1,
		DatapointsToAlarm:  1,
		Threshold:          1,
		ComparisonOperator: GreaterThanOrEqualToThreshold,
		TreatMissingData:   TreatNotBreaching,
		ActionsEnabled:     true,
		AlarmActions:       []string{"Ref:Topic1A2B3C4D"},
		OKActions:          []string{"Ref:Topic1A2B3C4D"},
	}
	if !reflect.DeepEqual(errs, wantErrs) {
		t.Errorf("Errors alarm:\n got %+v\nwant %+v", errs, wantErrs)
	}

	if a := alarms["Test-CreditsLow"]; a.Threshold != 100 || a.DatapointsToAlarm != 1 || a.TreatMissingData != TreatIgnore || a.Period != 5*time.Minute {
		t.Errorf("CreditsLow: threshold %v, datapoints %d, missing %s, period %s", a.Threshold, a.DatapointsToAlarm, a.TreatMissingData, a.Period)
	}

	lat := alarms["LatencyAlarm0A1B2C3D"]
	if lat.MetricStat.Stat.String() != "p90" || lat.MetricStat.Unit != "Milliseconds" || lat.ActionsEnabled ||
		lat.TreatMissingData != TreatMissing || !reflect.DeepEqual(lat.InsufficientDataActions, []string{"Ref:Topic1A2B3C4D"}) {
		t.Errorf("Latency alarm: %+v", lat)
	}

	stalled := alarms["Test-Stalled"]
	if stalled.MetricStat != nil || len(stalled.Metrics) != 3 || stalled.Period != 5*time.Minute || stalled.result != "expr_1" {
		t.Fatalf("Stalled alarm: %+v", stalled)
	}
	for _, q := range stalled.Metrics {
		if q.ID == "expr_1" {
			if !q.ReturnData || q.expr == nil {
				t.Errorf("expr_1: %+v", q)
			}
			continue
		}
		if q.ReturnData || q.MetricStat == nil || q.MetricStat.Metric.Dimensions[0].Value != "GetAtt:QueueA4421744.QueueName" {
			t.Errorf("%s: %+v", q.ID, q)
		}
	}
	if got := alarms["Test-FailureRate"].String(); !strings.Contains(got, "ok=Sum(Test/ImagesSucceeded{Pipeline=Test}, 15m0s)") || !strings.Contains(got, "> 10 for 1 of 1 periods of 15m0s, missing data: notBreaching") {
		t.Errorf("FailureRate described as %q", got)
	}
}

// Without the stack name the joined AlarmName cannot be resolved: the
// logical id stands in.
func TestAlarmNameFallsBackToLogicalID(t *testing.T) {
	alarms, err := ParseTemplate(readTemplate(t), func(o *ParseOptions) { o.Refs = map[string]string{"Threshold": "5"} })
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, a := range alarms {
		found = found || a.Name == "ErrorsAlarm8D70E52D"
	}
	if !found {
		t.Errorf("no alarm named by its logical id ErrorsAlarm8D70E52D")
	}
}

// A template shape the evaluator does not understand is an error naming
// the alarm and the field, never a panic or a silently skipped alarm.
func TestParseTemplateErrors(t *testing.T) {
	alarm := func(props string) string {
		return `{"Resources": {"BadAlarm": {"Type": "AWS::CloudWatch::Alarm", "Properties": ` + props + `}}}`
	}
	base := `"MetricName": "M", "Namespace": "N", "Period": 60, "EvaluationPeriods": 1, "Threshold": 1, "ComparisonOperator": "GreaterThanThreshold"`
	tests := []struct {
		template string
		want     []string
	}{
		{`not json`, []string{"parse template"}},
		{`{"Resources": {"A": {"Type": "AWS::CloudWatch::CompositeAlarm", "Properties": {}}}}`, []string{"resource A", "CompositeAlarm is not modelled"}},
		{`{"Resources": {"A": {"Type": "AWS::CloudWatch::Alarm", "Properties": 3}}}`, []string{"resource A"}},
		{`{"Resources": {"A": {"Type": "AWS::CloudWatch::Alarm"}}}`, []string{"alarm A", "no Properties"}},
		{alarm(`{` + base + `, "Statistic": "tm99"}`), []string{"alarm BadAlarm", "Statistic", `"tm99" is not supported`}},
		{alarm(`{` + base + `, "Statistic": "Sum", "ExtendedStatistic": "p90"}`), []string{"Statistic", "both"}},
		{alarm(`{` + base + `}`), []string{"Statistic", "neither"}},
		{alarm(`{"AlarmName": "Named", ` + base + `, "Statistic": "Sum", "TreatMissingData": "sometimes"}`), []string{"alarm Named (BadAlarm)", "TreatMissingData"}},
		{alarm(`{` + strings.Replace(base, `"Period": 60`, `"Period": 10`, 1) + `, "Statistic": "Sum"}`), []string{"Period", "high-resolution"}},
		{alarm(`{` + strings.Replace(base, `"EvaluationPeriods": 1`, `"EvaluationPeriods": "x"`, 1) + `, "Statistic": "Sum"}`), []string{"EvaluationPeriods", `"x" is not a number`}},
		{alarm(`{` + base + `, "Statistic": "Sum", "DatapointsToAlarm": 2}`), []string{"DatapointsToAlarm", "more than EvaluationPeriods"}},
		{alarm(`{` + strings.Replace(base, `"GreaterThanThreshold"`, `"LessThanLowerOrGreaterThanUpperThreshold"`, 1) + `, "Statistic": "Sum", "ThresholdMetricId": "ad1"}`), []string{"ThresholdMetricId", "anomaly detection", "ComparisonOperator"}},
		{alarm(`{` + base + `, "Statistic": "Sum", "Dimensions": "Pipeline"}`), []string{"Dimensions", "not a list"}},
		{alarm(`{` + base + `, "Statistic": "Sum", "Dimensions": [{"Name": "A", "Value": {"Fn::ImportValue": "x"}}]}`), []string{"Dimensions[0].Value", "Fn::ImportValue is not supported"}},
		{alarm(`{` + base + `, "Statistic": "Sum", "AlarmActions": {"Ref": "T"}}`), []string{"AlarmActions", "not a list"}},
		{alarm(`{"EvaluationPeriods": 1, "Threshold": 1, "ComparisonOperator": "GreaterThanThreshold", "Metrics": [
			{"Id": "e1", "Expression": "SEARCH('{AWS/SQS} x', 'Sum', 300)"}]}`), []string{"Metrics[e1].Expression", "SEARCH is not supported"}},
		{alarm(`{"EvaluationPeriods": 1, "Threshold": 1, "ComparisonOperator": "GreaterThanThreshold", "Metrics": [
			{"Id": "e1", "Expression": "m1 * 2"},
			{"Id": "m1", "MetricStat": {"Metric": {"MetricName": "M", "Namespace": "N"}, "Period": 60, "Stat": "Sum"}}]}`), []string{"2 entries return data"}},
		{alarm(`{"EvaluationPeriods": 1, "Threshold": 1, "ComparisonOperator": "GreaterThanThreshold", "Metrics": [
			{"Id": "e1", "Expression": "m2 * 2"},
			{"Id": "m1", "ReturnData": false, "MetricStat": {"Metric": {"MetricName": "M", "Namespace": "N"}, "Period": 60, "Stat": "Sum"}}]}`), []string{"Metrics[e1].Expression", `unknown id "m2"`}},
		{alarm(`{"EvaluationPeriods": 1, "Threshold": 1, "ComparisonOperator": "GreaterThanThreshold", "Metrics": [
			{"Id": "e1", "Expression": "e2 + m1"}, {"Id": "e2", "ReturnData": false, "Expression": "e1"},
			{"Id": "m1", "ReturnData": false, "MetricStat": {"Metric": {"MetricName": "M", "Namespace": "N"}, "Period": 60, "Stat": "Sum"}}]}`), []string{"cycle"}},
		{alarm(`{"EvaluationPeriods": 1, "Threshold": 1, "ComparisonOperator": "GreaterThanThreshold", "Metrics": [
			{"Id": "e1", "Expression": "m1 + m2"},
			{"Id": "m1", "ReturnData": false, "MetricStat": {"Metric": {"MetricName": "M", "Namespace": "N"}, "Period": 60, "Stat": "Sum"}},
			{"Id": "m2", "ReturnData": false, "MetricStat": {"Metric": {"MetricName": "M", "Namespace": "N"}, "Period": 120, "Stat": "Sum"}}]}`), []string{"Metrics[m2].MetricStat.Period", "differs"}},
		{alarm(`{"EvaluationPeriods": 1, "Threshold": 1, "ComparisonOperator": "GreaterThanThreshold", "Metrics": [7]}`), []string{"Metrics[0]", "not an object"}},
		{alarm(`{` + base + `, "Statistic": "Sum", "Metrics": []}`), []string{"both Metrics and MetricName"}},
	}
	for _, tt := range tests {
		_, err := ParseTemplate([]byte(tt.template))
		if err == nil {
			t.Errorf("%s: no error", tt.template)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s:\nerror %q\nlacks %q", tt.template, err, w)
			}
		}
	}
	// An unresolved parameter for the threshold is named too.
	_, err := ParseTemplate(readTemplate(t))
	if err == nil || !strings.Contains(err.Error(), "Test-CreditsLow") || !strings.Contains(err.Error(), "Threshold: Ref:Threshold is not known") {
		t.Errorf("unresolved threshold: %v", err)
	}
}
