package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
	"github.com/geolocate-aws/geolocate/pkg/shared/tableschema"
)

func isMapWidget(p obj) bool { _, ok := environment(p)[envvars.MapMaxRecords]; return ok }

// TestMapWidgetFunction: the third function, built and sized like the
// others, may only Query the table's by-status index (and write its logs),
// in every configuration.
func TestMapWidgetFunction(t *testing.T) {
	for name, s := range synthApp(t).scenarios() {
		t.Run(name, func(t *testing.T) {
			fnID, fn := s.onlyResource(t, "AWS::Lambda::Function", isMapWidget)
			if fn["MemorySize"] != float64(mapWidgetMemoryMB) || fn["Timeout"] != float64(mapWidgetTimeoutSeconds) ||
				fn["Runtime"] != "provided.al2023" || asJSON(fn["Architectures"]) != `["arm64"]` || fn["Handler"] != "bootstrap" {
				t.Errorf("%s: memory %v, timeout %v, runtime %v %v", fnID, fn["MemorySize"], fn["Timeout"], fn["Runtime"], fn["Architectures"])
			}
			env := environment(fn)
			tableID, _ := s.onlyResource(t, "AWS::DynamoDB::Table", nil)
			if asJSON(env[envvars.TableName]) != asJSON(obj{"Ref": tableID}) || env[envvars.MapMaxRecords] != "10000" || env[envGoMemLimit] != "460MiB" {
				t.Errorf("environment %s", asJSON(env))
			}
			for _, secretish := range []string{envvars.SecretID, envvars.APIURL, envvars.APIKey} {
				if _, ok := env[secretish]; ok {
					t.Errorf("the map widget is given %s, which it does not use", secretish)
				}
			}
			grants := s.grants(t, roleOf(t, fn))
			var actions []string
			for a := range grants {
				actions = append(actions, a)
			}
			slices.Sort(actions)
			if strings.Join(actions, " ") != "dynamodb:Query logs:CreateLogStream logs:PutLogEvents" {
				t.Fatalf("the map widget may %v; want Query and its logs only", actions)
			}
			wantIndex := asJSON(obj{"Fn::Join": []any{"", []any{obj{"Fn::GetAtt": []any{tableID, "Arn"}}, "/index/" + tableschema.StatusIndex}}})
			if q := grants["dynamodb:Query"]; len(q) != 1 || q[0] != wantIndex {
				t.Errorf("Query on %v, want only %s", q, wantIndex)
			}
		})
	}
}

// TestDashboardHasTheMapWidget: the dashboard's custom widget calls the
// map widget function and is redrawn with the dashboard's time range; the
// text above it says what to do when it is blank (custom widgets run only
// once allowed).
func TestDashboardHasTheMapWidget(t *testing.T) {
	s := synthApp(t).created
	fnID, _ := s.onlyResource(t, "AWS::Lambda::Function", isMapWidget)
	_, dash := s.onlyResource(t, "AWS::CloudWatch::Dashboard", nil)
	body := asJSON(dash["DashboardBody"])
	for _, want := range []string{
		`{\"type\":\"custom\",\"width\":24,\"height\":12,`,
		`\"endpoint\":\"",` + getAtt(fnID, "Arn"),
		`\"params\":{\"colorBy\":\"status\"}`,
		`\"updateOn\":{\"refresh\":true,\"resize\":true,\"timeRange\":true}`,
		`{\"type\":\"text\",\"width\":24,\"height\":2,`,
		"Allow always",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the dashboard body lacks %s:\n%s", want, body)
		}
	}
}
