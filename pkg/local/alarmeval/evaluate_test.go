package alarmeval

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// t0 is the start of every scenario, on a period boundary.
var t0 = time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC)

func at(minute int) time.Time { return t0.Add(time.Duration(minute) * time.Minute) }

const topic = "Ref:Topic1A2B3C4D"

var pipeline = map[string]string{"Pipeline": "Test"}

// sim runs alarms of the test template over simulated minutes.
type sim struct {
	t     *testing.T
	store *Store
	ev    *Evaluator
	sent  []Notification
}

// newSim evaluates the named alarms of testdata/stack.template.json, with
// the stack's function and queue mapped to their local names.
func newSim(t *testing.T, names []string, optFns ...func(*Options)) *sim {
	t.Helper()
	all := parseTestTemplate(t)
	var alarms []*Alarm
	for _, n := range names {
		a, ok := all[n]
		if !ok {
			t.Fatalf("no alarm %s", n)
		}
		alarms = append(alarms, a)
	}
	local := map[string]string{"Ref:Fn9CBB3B5A": "local-fn", "GetAtt:QueueA4421744.QueueName": "uploads"}
	resolve := func(o *Options) {
		o.ResolveDimension = func(d Dimension) (string, bool) { v, ok := local[d.Value]; return v, ok }
	}
	s := &sim{t: t, store: NewStore()}
	var err error
	if s.ev, err = NewEvaluator(s.store, alarms, append([]func(*Options){resolve}, optFns...)...); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *sim) put(minute int, namespace, name string, dims map[string]string, values ...float64) {
	s.t.Helper()
	for _, v := range values {
		if err := s.store.Add(Datapoint{Namespace: namespace, MetricName: name, Dimensions: dims, Timestamp: at(minute), Value: v}); err != nil {
			s.t.Fatal(err)
		}
	}
}

// run publishes each minute's metrics with emit, then evaluates that minute.
func (s *sim) run(from, to int, emit func(minute int)) {
	s.t.Helper()
	for m := from; m <= to; m++ {
		if emit != nil {
			emit(m)
		}
		n, err := s.ev.Evaluate(at(m))
		if err != nil {
			s.t.Fatal(err)
		}
		s.sent = append(s.sent, n...)
	}
}

// transitions lists alarm's changes as "minute:FROM->TO".
func (s *sim) transitions(alarm string) []string {
	var out []string
	for _, tr := range s.ev.Transitions() {
		if tr.Alarm == alarm {
			out = append(out, fmt.Sprintf("%d:%s->%s", int(tr.Time.Sub(t0)/time.Minute), tr.From, tr.To))
		}
	}
	return out
}

// notified lists alarm's notifications as "minute:STATE".
func (s *sim) notified(alarm string) []string {
	var out []string
	for _, n := range s.sent {
		if n.Alarm != alarm {
			continue
		}
		if !reflect.DeepEqual(n.Actions, []string{topic}) {
			s.t.Errorf("notification %+v: actions %v, want the topic", n, n.Actions)
		}
		out = append(out, fmt.Sprintf("%d:%s", int(n.Time.Sub(t0)/time.Minute), n.To))
	}
	return out
}

func (s *sim) expect(alarm string, transitions, notifications []string) {
	s.t.Helper()
	if got := s.transitions(alarm); !reflect.DeepEqual(got, transitions) {
		s.t.Errorf("%s transitions %v, want %v", alarm, got, transitions)
	}
	if notifications != nil {
		if got := s.notified(alarm); !reflect.DeepEqual(got, notifications) {
			s.t.Errorf("%s notifications %v, want %v", alarm, got, notifications)
		}
	}
}

// A function failing every minute for half an hour: one ALARM, kept while
// the errors last, then OK once the last error's datapoint has left the
// evaluation range (5-minute periods, 1 of 1, range 3): the missing
// periods after it do not count while an existing datapoint is in range.
func TestErrorsAlarmFiresOnceAndRecovers(t *testing.T) {
	s := newSim(t, []string{"Test-Errors"})
	fn := map[string]string{"FunctionName": "local-fn"}
	s.run(0, 90, func(m int) {
		if m >= 10 && m <= 40 {
			s.put(m, "AWS/Lambda", "Errors", fn, 1)
		}
	})
	// The first evaluation finds nothing, which is not breaching: OK, and
	// OKActions go out, as CloudWatch sends them for INSUFFICIENT_DATA -> OK.
	s.expect("Test-Errors",
		[]string{"0:INSUFFICIENT_DATA->OK", "10:OK->ALARM", "55:ALARM->OK"},
		[]string{"0:OK", "10:ALARM", "55:OK"})

	tr := s.ev.Transitions()[1]
	if !strings.Contains(tr.Reason, "1 out of the last 1 datapoints [1 (06/01/25 00:10:00)] were greater than or equal to the threshold (1)") {
		t.Errorf("reason %q", tr.Reason)
	}
	if st, _ := s.ev.State("Test-Errors"); st != StateOK {
		t.Errorf("state %s, want OK", st)
	}
}

// Lambda publishes Errors = 0 for every period with invocations: then the
// first clean period brings the alarm back at once.
func TestErrorsAlarmRecoversOnCleanDatapoints(t *testing.T) {
	s := newSim(t, []string{"Test-Errors"})
	fn := map[string]string{"FunctionName": "local-fn"}
	s.run(0, 90, func(m int) {
		errs := 0.0
		if m >= 10 && m <= 40 {
			errs = 1
		}
		s.put(m, "AWS/Lambda", "Errors", fn, errs)
	})
	s.expect("Test-Errors", []string{"0:INSUFFICIENT_DATA->OK", "10:OK->ALARM", "45:ALARM->OK"}, nil)
}

// Evaluate catches up on the minutes it was not called for, each seeing
// only the datapoints published by then.
func TestEvaluateCatchesUp(t *testing.T) {
	s := newSim(t, []string{"Test-Errors"})
	for m := 10; m <= 40; m++ {
		s.put(m, "AWS/Lambda", "Errors", map[string]string{"FunctionName": "local-fn"}, 1)
	}
	s.run(0, 0, nil)
	n, err := s.ev.Evaluate(at(90).Add(30 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	s.sent = append(s.sent, n...)
	s.expect("Test-Errors", []string{"0:INSUFFICIENT_DATA->OK", "10:OK->ALARM", "55:ALARM->OK"}, []string{"0:OK", "10:ALARM", "55:OK"})

	if _, err := s.ev.Evaluate(at(89)); err == nil {
		t.Error("evaluating back in time: no error")
	}
	// The same minute again evaluates nothing new.
	if n, err := s.ev.Evaluate(at(90)); err != nil || len(n) != 0 {
		t.Errorf("same minute again: %v, %v", n, err)
	}
}

// A heartbeat treated as breaching when missing: ALARM from the first
// evaluation until the first run, then ALARM again only when the whole
// evaluation range (4 periods for 2) is silent, and OK at the first run
// after that. A run reporting failure alarms after 2 periods.
func TestHeartbeatAlarm(t *testing.T) {
	s := newSim(t, []string{"Test-Heartbeat"})
	s.run(0, 140, func(m int) {
		if m%5 == 2 && (m <= 32 || m >= 122) {
			s.put(m, "Test", "Healthy", pipeline, 1)
		}
	})
	s.expect("Test-Heartbeat",
		[]string{"0:INSUFFICIENT_DATA->ALARM", "2:ALARM->OK", "50:OK->ALARM", "122:ALARM->OK"},
		[]string{"0:ALARM", "2:OK", "50:ALARM", "122:OK"})

	s = newSim(t, []string{"Test-Heartbeat"})
	s.run(0, 80, func(m int) {
		if m%5 == 2 {
			healthy := 1.0
			if m >= 37 && m < 62 {
				healthy = 0
			}
			s.put(m, "Test", "Healthy", pipeline, healthy)
		}
	})
	s.expect("Test-Heartbeat", []string{"0:INSUFFICIENT_DATA->ALARM", "2:ALARM->OK", "42:OK->ALARM", "62:ALARM->OK"}, nil)
}

// ignore keeps the state while the metric is silent, however long.
func TestIgnoreKeepsStateThroughSilence(t *testing.T) {
	s := newSim(t, []string{"Test-CreditsLow"})
	s.run(0, 320, func(m int) {
		switch {
		case m%5 == 1 && m <= 26:
			s.put(m, "Test", "CreditsRemaining", pipeline, 500)
		case m == 31 || m == 36:
			s.put(m, "Test", "CreditsRemaining", pipeline, 50)
		case m == 301:
			s.put(m, "Test", "CreditsRemaining", pipeline, 1000)
		}
	})
	s.expect("Test-CreditsLow", []string{"1:INSUFFICIENT_DATA->OK", "31:OK->ALARM", "301:ALARM->OK"}, []string{"1:OK", "31:ALARM", "301:OK"})
}

// The math alarm: FILL and IF give every 15-minute period a rate, failures
// published with a Reason dimension are another metric, and the alarm
// stays in ALARM for as long as the failures last.
func TestFailureRateMathAlarm(t *testing.T) {
	s := newSim(t, []string{"Test-FailureRate"})
	byReason := map[string]string{"Pipeline": "Test", "Reason": "service_error"}
	s.run(0, 150, func(m int) {
		if m <= 120 {
			s.put(m, "Test", "ImagesSucceeded", pipeline, 10)
		}
		if m >= 60 && m <= 104 {
			s.put(m, "Test", "ImagesFailed", pipeline, 5)
		}
		if m == 20 {
			s.put(m, "Test", "ImagesFailed", byReason, 100)
		}
	})
	s.expect("Test-FailureRate", []string{"0:INSUFFICIENT_DATA->OK", "60:OK->ALARM", "105:ALARM->OK"}, []string{"0:OK", "60:ALARM", "105:OK"})
}

// The current period is evaluated before it ends, so a rate over a long
// period can swing while the period fills: one failure as the first image
// of a period is 100 %, then diluted. Leaving the unfinished period out
// (CompletePeriodsOnly) evaluates the whole period once it is over.
func TestUnfinishedPeriodCanSwingARate(t *testing.T) {
	emit := func(s *sim) func(int) {
		return func(m int) {
			if m == 0 {
				s.put(m, "Test", "ImagesFailed", pipeline, 1)
			} else if m < 30 {
				s.put(m, "Test", "ImagesSucceeded", pipeline, 10)
			}
		}
	}
	s := newSim(t, []string{"Test-FailureRate"})
	s.run(0, 30, emit(s))
	s.expect("Test-FailureRate", []string{"0:INSUFFICIENT_DATA->ALARM", "1:ALARM->OK"}, nil)

	s = newSim(t, []string{"Test-FailureRate"}, func(o *Options) { o.CompletePeriodsOnly = true })
	s.run(0, 30, emit(s))
	s.expect("Test-FailureRate", []string{"0:INSUFFICIENT_DATA->OK"}, nil)
}

// A 3 of 3 math alarm on queue metrics, the queue's dimension resolved to
// the local queue's name: messages waiting with no deletion for three
// periods alarm; the first deletion ends it. Another queue is not seen.
func TestStalledQueueMathAlarm(t *testing.T) {
	s := newSim(t, []string{"Test-Stalled"})
	uploads := map[string]string{"QueueName": "uploads"}
	other := map[string]string{"QueueName": "other"}
	s.run(0, 60, func(m int) {
		s.put(m, "AWS/SQS", "ApproximateNumberOfMessagesVisible", uploads, 3)
		s.put(m, "AWS/SQS", "NumberOfMessagesDeleted", other, 5)
		if m >= 30 {
			s.put(m, "AWS/SQS", "NumberOfMessagesDeleted", uploads, 1)
		}
	})
	// No OKActions on this alarm: the OK transitions notify nobody.
	s.expect("Test-Stalled", []string{"0:INSUFFICIENT_DATA->OK", "10:OK->ALARM", "30:ALARM->OK"}, []string{"10:ALARM"})
}

// Left unresolved, a reference matches only itself, unless told to match
// the dimension by key.
func TestUnresolvedDimensions(t *testing.T) {
	alarms := parseTestTemplate(t)
	errs := alarms["Test-Errors"]
	for _, byKey := range []bool{false, true} {
		store := NewStore()
		ev, err := NewEvaluator(store, []*Alarm{errs}, func(o *Options) { o.MatchUnresolvedByKey = byKey })
		if err != nil {
			t.Fatal(err)
		}
		store.Add(Datapoint{Namespace: "AWS/Lambda", MetricName: "Errors", Dimensions: map[string]string{"FunctionName": "anything"}, Timestamp: at(0), Value: 1})
		// A datapoint with one more dimension is another metric.
		store.Add(Datapoint{Namespace: "AWS/Lambda", MetricName: "Errors", Dimensions: map[string]string{"FunctionName": "Ref:Fn9CBB3B5A", "Resource": "x"}, Timestamp: at(0), Value: 1})
		if _, err := ev.Evaluate(at(0)); err != nil {
			t.Fatal(err)
		}
		want := StateOK
		if byKey {
			want = StateAlarm
		}
		if st, _ := ev.State("Test-Errors"); st != want {
			t.Errorf("MatchUnresolvedByKey %v: %s, want %s", byKey, st, want)
		}
	}
}

// A percentile alarm with the default missing-data treatment, a unit, and
// actions disabled: transitions happen, nothing is sent. When the metric
// stops, the alarm keeps evaluating the datapoints left in its range, then
// goes to INSUFFICIENT_DATA.
func TestPercentileAlarmWithActionsDisabled(t *testing.T) {
	s := newSim(t, []string{"LatencyAlarm0A1B2C3D"})
	s.run(0, 30, func(m int) {
		if m < 1 || m > 20 {
			return
		}
		scale := 1.0
		if m >= 5 && m <= 9 {
			scale = 3
		}
		for v := 100.0; v <= 1000; v += 100 {
			s.store.Add(Datapoint{Namespace: "Test", MetricName: "ServiceLatency", Dimensions: pipeline, Timestamp: at(m), Value: v * scale, Unit: "Milliseconds"})
		}
		s.store.Add(Datapoint{Namespace: "Test", MetricName: "ServiceLatency", Dimensions: pipeline, Timestamp: at(m), Value: 1e6, Unit: "Seconds"})
	})
	s.expect("LatencyAlarm0A1B2C3D",
		[]string{"1:INSUFFICIENT_DATA->OK", "6:OK->ALARM", "11:ALARM->OK", "25:OK->INSUFFICIENT_DATA"}, nil)
	if len(s.sent) != 0 {
		t.Errorf("sent %v with actions disabled", s.sent)
	}
}

// Every alarm of the template together, and the states map.
func TestEvaluatorStates(t *testing.T) {
	all := parseTestTemplate(t)
	var alarms []*Alarm
	for _, a := range all {
		alarms = append(alarms, a)
	}
	ev, err := NewEvaluator(NewStore(), alarms)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Evaluate(at(0)); err != nil {
		t.Fatal(err)
	}
	want := map[string]State{
		"Test-Errors":          StateOK,               // notBreaching
		"Test-Heartbeat":       StateAlarm,            // breaching
		"Test-CreditsLow":      StateInsufficientData, // ignore
		"Test-FailureRate":     StateOK,               // FILL: 0 %
		"Test-Stalled":         StateOK,               // FILL: 0
		"LatencyAlarm0A1B2C3D": StateInsufficientData, // missing
	}
	if got := ev.States(); !reflect.DeepEqual(got, want) {
		t.Errorf("states %v, want %v", got, want)
	}
	if len(ev.Alarms()) != len(alarms) {
		t.Errorf("%d alarms", len(ev.Alarms()))
	}
	if _, ok := ev.State("nope"); ok {
		t.Error("State of an unknown alarm")
	}
}

func TestNewEvaluatorRefusesBadAlarms(t *testing.T) {
	ok := func() *Alarm {
		return &Alarm{Name: "A", EvaluationPeriods: 1, DatapointsToAlarm: 1, ComparisonOperator: GreaterThanThreshold, TreatMissingData: TreatMissing,
			Period: time.Minute, MetricStat: &MetricStat{Metric: Metric{Namespace: "N", MetricName: "M"}, Stat: Sum, Period: time.Minute}}
	}
	tests := map[string]func(a *Alarm){
		"no name":            func(a *Alarm) { a.Name = "" },
		"EvaluationPeriods":  func(a *Alarm) { a.EvaluationPeriods = 0 },
		"DatapointsToAlarm":  func(a *Alarm) { a.DatapointsToAlarm = 2 },
		"ComparisonOperator": func(a *Alarm) { a.ComparisonOperator = "Sideways" },
		"TreatMissingData":   func(a *Alarm) { a.TreatMissingData = "" },
		"no statistic":       func(a *Alarm) { a.MetricStat.Stat = Statistic{} },
		"period":             func(a *Alarm) { a.Period = 90 * time.Second },
		"exactly one of":     func(a *Alarm) { a.Metrics = []MetricDataQuery{{ID: "e", Expression: "1"}} },
		"Expression": func(a *Alarm) {
			a.MetricStat = nil
			a.Metrics = []MetricDataQuery{{ID: "e", Expression: "1 +", ReturnData: true}}
		},
		"returns data": func(a *Alarm) { a.MetricStat = nil; a.Metrics = []MetricDataQuery{{ID: "e", Expression: "1"}} },
		"unknown id": func(a *Alarm) {
			a.MetricStat = nil
			a.Metrics = []MetricDataQuery{{ID: "e", Expression: "m1", ReturnData: true}}
		},
	}
	for want, breakIt := range tests {
		a := ok()
		breakIt(a)
		if _, err := NewEvaluator(NewStore(), []*Alarm{a}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
	if _, err := NewEvaluator(NewStore(), []*Alarm{ok(), ok()}); err == nil || !strings.Contains(err.Error(), "two alarms are named A") {
		t.Errorf("duplicate names: %v", err)
	}
	// A hand-built math alarm is parsed when the evaluator is made.
	a := ok()
	a.MetricStat = nil
	a.Metrics = []MetricDataQuery{{ID: "e", Expression: "FILL(m, 0) + 1", ReturnData: true},
		{ID: "m", MetricStat: &MetricStat{Metric: Metric{Namespace: "N", MetricName: "M"}, Stat: Sum, Period: time.Minute}}}
	ev, err := NewEvaluator(NewStore(), []*Alarm{a})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Evaluate(at(0)); err != nil {
		t.Fatal(err)
	}
	if st, _ := ev.State("A"); st != StateAlarm { // FILL(m, 0) + 1 > 0
		t.Errorf("hand-built math alarm: %s, want ALARM", st)
	}
}
