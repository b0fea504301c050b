package main

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/cfntemplate"
)

// TestAlarmEvaluatorUnderstandsEveryAlarm reads the synthesized template of
// each test stack with the local alarm evaluator (pkg/local/alarmeval), the
// one the alarm scenarios run on: every alarm must be understood, metric,
// math and settings, with nothing refused as unsupported, or the scenarios
// would prove alarms other than the ones deployed.
func TestAlarmEvaluatorUnderstandsEveryAlarm(t *testing.T) {
	for name, s := range synthApp(t).scenarios() {
		t.Run(name, func(t *testing.T) {
			raw, err := json.Marshal(s.doc)
			if err != nil {
				t.Fatal(err)
			}
			alarms, err := alarmeval.ParseTemplate(raw, func(o *alarmeval.ParseOptions) {
				o.Refs = map[string]string{"AWS::StackName": s.cfg.StackName}
			})
			if err != nil {
				// The error names every alarm and field not understood.
				t.Fatalf("the evaluator does not understand the template's alarms:\n%v", err)
			}
			resources := s.resources("AWS::CloudWatch::Alarm")
			if len(alarms) != len(resources) || len(alarms) == 0 {
				t.Fatalf("evaluator found %d alarms, the template has %d", len(alarms), len(resources))
			}
			topicID, _ := s.onlyResource(t, "AWS::SNS::Topic", nil)
			all, _ := s.doc["Resources"].(map[string]any)

			var names []string
			for _, a := range alarms {
				names = append(names, a.Name)
				props, _ := resources[a.LogicalID]["Properties"].(map[string]any)
				if props == nil {
					t.Errorf("%s: logical id %s is not an alarm of the template", a.Name, a.LogicalID)
					continue
				}
				// The settings read back as the template has them.
				if a.Name != props["AlarmName"] || !strings.HasPrefix(a.Name, alarmName(s.cfg.StackName, "")) {
					t.Errorf("%s: name read as %q, template has %v", a.LogicalID, a.Name, props["AlarmName"])
				}
				for field, got := range map[string]any{
					"EvaluationPeriods":  float64(a.EvaluationPeriods),
					"DatapointsToAlarm":  float64(a.DatapointsToAlarm),
					"Threshold":          a.Threshold,
					"ComparisonOperator": string(a.ComparisonOperator),
					"TreatMissingData":   string(a.TreatMissingData),
				} {
					if !reflect.DeepEqual(got, props[field]) {
						t.Errorf("%s: %s read as %v, template has %v", a.Name, field, got, props[field])
					}
				}
				topic := []string{"Ref:" + topicID}
				if !a.ActionsEnabled || !slices.Equal(a.AlarmActions, topic) || !slices.Equal(a.OKActions, topic) {
					t.Errorf("%s: actions enabled %v, ALARM %v, OK %v; want the topic %s on both", a.Name, a.ActionsEnabled, a.AlarmActions, a.OKActions, topicID)
				}

				// The metric: one metric, or math whose inputs are metrics
				// of the alarm's period; every referenced resource exists.
				stats := []*alarmeval.MetricStat{a.MetricStat}
				if a.MetricStat == nil {
					stats = nil
					expressions := 0
					for _, q := range a.Metrics {
						if q.MetricStat != nil {
							stats = append(stats, q.MetricStat)
						} else {
							expressions++
						}
					}
					if expressions == 0 || len(stats) == 0 {
						t.Errorf("%s: math with %d expressions over %d metrics", a.Name, expressions, len(stats))
					}
				}
				for _, st := range stats {
					if st.Stat.IsZero() || st.Period != a.Period || a.Period <= 0 {
						t.Errorf("%s: %s: statistic %q, period %s (alarm %s)", a.Name, st.Metric, st.Stat, st.Period, a.Period)
					}
					for _, d := range st.Metric.Dimensions {
						if ref, ok := cfntemplate.ParseReference(d.Value); ok && all[ref.LogicalID] == nil {
							t.Errorf("%s: dimension %s refers to %s, not a resource of the template", a.Name, d.Name, ref.LogicalID)
						}
					}
				}
				t.Logf("%s: %s", a.Name, a)
			}
			t.Logf("%d alarms: %s", len(names), strings.Join(names, ", "))

			// The evaluator runs them. Right after deployment, with no data
			// at all, each alarm's state is its missing-data treatment's;
			// the math alarms FILL their inputs, so they compute 0: OK.
			ev, err := alarmeval.NewEvaluator(alarmeval.NewStore(), alarms)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ev.Evaluate(time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC)); err != nil {
				t.Fatal(err)
			}
			for _, a := range alarms {
				want := map[alarmeval.TreatMissingData]alarmeval.State{
					alarmeval.TreatNotBreaching: alarmeval.StateOK,
					alarmeval.TreatBreaching:    alarmeval.StateAlarm,
					alarmeval.TreatIgnore:       alarmeval.StateInsufficientData,
					alarmeval.TreatMissing:      alarmeval.StateInsufficientData,
				}[a.TreatMissingData]
				// A math alarm that FILLs its inputs computes a value from
				// none; CreditsLow's picks one of two metrics and, with
				// neither, has no datapoint: its treatment applies.
				if a.MetricStat == nil && !strings.HasSuffix(a.Name, "CreditsLow") {
					want = alarmeval.StateOK
				}
				if got, _ := ev.State(a.Name); got != want {
					t.Errorf("%s with no data: %s, want %s", a.Name, got, want)
				}
			}
		})
	}
}
