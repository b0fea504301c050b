package alarmeval

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// State is an alarm's state.
type State string

// Alarm states.
const (
	StateOK               State = "OK"
	StateAlarm            State = "ALARM"
	StateInsufficientData State = "INSUFFICIENT_DATA"
)

// Transition is one change of an alarm's state.
type Transition struct {
	Alarm    string
	From, To State
	Time     time.Time
	Reason   string
}

// Notification is what CloudWatch sends when an alarm changes state: the
// actions for the new state (AlarmActions for ALARM, OKActions for OK,
// InsufficientDataActions for INSUFFICIENT_DATA), once per change. An SNS
// action is invoked once per change, not again while the state lasts.
type Notification struct {
	Alarm    string
	From, To State
	Time     time.Time
	// Actions as in the template, e.g. "Ref:AlarmTopicD01E77F9".
	Actions []string
	Reason  string
}

// Options adjust an Evaluator.
type Options struct {
	// ResolveDimension maps a dimension of an alarm's metric to the value
	// the local parts publish, typically an opaque reference such as
	// "Ref:Predictor9CBB3B5A" (FunctionName) or
	// "GetAtt:UploadQueueA4421744.QueueName" (QueueName) to a local name.
	// ok false keeps the template's value.
	ResolveDimension func(d Dimension) (value string, ok bool)
	// MatchUnresolvedByKey makes a dimension whose value is still an
	// opaque reference match any value of that dimension.
	MatchUnresolvedByKey bool
	// EvaluationRange is how many periods CloudWatch retrieves to evaluate
	// an alarm (the evaluation range). CloudWatch documents only that it is
	// more than EvaluationPeriods, depending on the period; the default is
	// EvaluationPeriods + 2, as in the documentation's examples (5 for 3).
	EvaluationRange func(a *Alarm) int
	// CompletePeriodsOnly leaves the current, unfinished period out of the
	// evaluation. By default it is in, as CloudWatch queries the metric up
	// to the evaluation time, so a Sum alarm can fire before its period ends.
	CompletePeriodsOnly bool
}

// Evaluator evaluates alarms over a Store on a simulated clock, as
// CloudWatch does: once a minute, each alarm from the datapoints of its
// evaluation range. It is safe for concurrent use.
type Evaluator struct {
	store *Store
	opts  Options

	mu          sync.Mutex
	alarms      []*run
	byName      map[string]*run
	last        time.Time // the last minute evaluated
	started     bool
	transitions []Transition
}

// run is one alarm and its state.
type run struct {
	*compiled
	state State
}

// NewEvaluator returns an evaluator of alarms over store. Every alarm
// starts in INSUFFICIENT_DATA, as a new CloudWatch alarm does.
func NewEvaluator(store *Store, alarms []*Alarm, optFns ...func(*Options)) (*Evaluator, error) {
	var opts Options
	for _, fn := range optFns {
		fn(&opts)
	}
	e := &Evaluator{store: store, opts: opts, byName: map[string]*run{}}
	for _, a := range alarms {
		c, err := compile(a, opts)
		if err != nil {
			return nil, fmt.Errorf("alarmeval: %w", err)
		}
		if _, dup := e.byName[a.Name]; dup {
			return nil, fmt.Errorf("alarmeval: two alarms are named %s", a.Name)
		}
		r := &run{compiled: c, state: StateInsufficientData}
		e.alarms = append(e.alarms, r)
		e.byName[a.Name] = r
	}
	return e, nil
}

// Evaluate runs every evaluation CloudWatch would have run since the
// previous call, once per whole minute up to now (the first call evaluates
// now's minute only), and returns the notifications those evaluations
// sent, in time order. Call it at least every simulated minute, or after
// moving the clock: evaluations it catches up on see the datapoints
// timestamped up to their own minute. now must not go back.
func (e *Evaluator) Evaluate(now time.Time) ([]Notification, error) {
	at := now.UTC().Truncate(time.Minute)
	e.mu.Lock()
	defer e.mu.Unlock()
	first := at
	if e.started {
		if at.Before(e.last) {
			return nil, fmt.Errorf("alarmeval: evaluate at %s, before the previous evaluation at %s", at, e.last)
		}
		first = e.last.Add(time.Minute)
	}
	var out []Notification
	for t := first; !t.After(at); t = t.Add(time.Minute) {
		for _, r := range e.alarms {
			if n, ok := e.evaluate(r, t); ok {
				out = append(out, n)
			}
		}
		e.started, e.last = true, t
	}
	return out, nil
}

// evaluationRange is the number of periods retrieved for a.
func (e *Evaluator) evaluationRange(a *Alarm) int {
	if e.opts.EvaluationRange != nil {
		if n := e.opts.EvaluationRange(a); n >= a.EvaluationPeriods {
			return n
		}
	}
	return a.EvaluationPeriods + 2
}

// periodStart aligns t to the period boundary, counted from the Unix epoch
// in UTC, as CloudWatch aligns datapoints.
func periodStart(t time.Time, period time.Duration) time.Time {
	epoch := time.Unix(0, 0).UTC()
	return epoch.Add(t.Sub(epoch).Truncate(period))
}

// evaluate evaluates one alarm at t, recording a transition and returning
// its notification, if any.
func (e *Evaluator) evaluate(r *run, t time.Time) (Notification, bool) {
	a := r.alarm
	n := e.evaluationRange(a)
	latest := periodStart(t, a.Period)
	if e.opts.CompletePeriodsOnly {
		latest = latest.Add(-a.Period)
	}
	starts := make([]time.Time, n)
	values := make([]value, n)
	classes := make([]class, n)
	for i := range n {
		starts[i] = latest.Add(-time.Duration(n-1-i) * a.Period)
		values[i] = r.datapoint(e.store, starts[i], t)
		switch {
		case !values[i].ok:
			classes[i] = absent
		case a.ComparisonOperator.breaches(values[i].v, a.Threshold):
			classes[i] = breaching
		default:
			classes[i] = within
		}
	}
	v := decide(classes, a.EvaluationPeriods, a.DatapointsToAlarm, a.TreatMissingData)
	if v.keep || v.state == r.state {
		return Notification{}, false
	}
	reason := reason(a, r.state, v, starts, values)
	e.transitions = append(e.transitions, Transition{Alarm: a.Name, From: r.state, To: v.state, Time: t, Reason: reason})
	from := r.state
	r.state = v.state

	var actions []string
	switch v.state {
	case StateAlarm:
		actions = a.AlarmActions
	case StateOK:
		actions = a.OKActions
	case StateInsufficientData:
		actions = a.InsufficientDataActions
	}
	if !a.ActionsEnabled || len(actions) == 0 {
		return Notification{}, false
	}
	return Notification{Alarm: a.Name, From: from, To: v.state, Time: t, Actions: append([]string(nil), actions...), Reason: reason}, true
}

// reason words a transition the way CloudWatch's StateReason does.
func reason(a *Alarm, from State, v verdict, starts []time.Time, values []value) string {
	if v.state == StateInsufficientData {
		return fmt.Sprintf("Insufficient Data: %d datapoints were unknown.", len(values)-v.evaluated)
	}
	var pts []string
	for i := len(v.used) - 1; i >= 0; i-- { // most recent first, as CloudWatch lists them
		j := v.used[i]
		pts = append(pts, fmt.Sprintf("%g (%s)", values[j].v, starts[j].Format("02/01/06 15:04:05")))
	}
	verb := map[ComparisonOperator]string{
		GreaterThanOrEqualToThreshold: "greater than or equal to", GreaterThanThreshold: "greater than",
		LessThanThreshold: "less than", LessThanOrEqualToThreshold: "less than or equal to",
	}[a.ComparisonOperator]
	if v.state == StateOK {
		verb = "not " + verb
	}
	count := v.breaching
	if v.state == StateOK {
		count = v.evaluated + v.filled - v.breaching
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Threshold Crossed: %d out of the last %d datapoints [%s] were %s the threshold (%g)",
		count, v.evaluated+v.filled, strings.Join(pts, ", "), verb, a.Threshold)
	if v.filled > 0 {
		fmt.Fprintf(&b, ", with %d missing datapoints treated as %s", v.filled, a.TreatMissingData)
	}
	// Leaving ALARM takes enough non-breaching datapoints that fewer than
	// DatapointsToAlarm breach.
	needed := a.DatapointsToAlarm
	if v.state == StateOK {
		needed = a.EvaluationPeriods - a.DatapointsToAlarm + 1
	}
	fmt.Fprintf(&b, " (minimum %d datapoints for %s -> %s transition).", needed, from, v.state)
	return b.String()
}

// State returns the current state of the alarm named name, and false if
// there is no such alarm.
func (e *Evaluator) State(name string) (State, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.byName[name]
	if !ok {
		return "", false
	}
	return r.state, true
}

// States returns every alarm's current state by name.
func (e *Evaluator) States() map[string]State {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]State, len(e.alarms))
	for _, r := range e.alarms {
		out[r.alarm.Name] = r.state
	}
	return out
}

// Transitions returns every state change so far, in time order.
func (e *Evaluator) Transitions() []Transition {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Transition(nil), e.transitions...)
}

// Alarms returns the evaluated alarms.
func (e *Evaluator) Alarms() []*Alarm {
	out := make([]*Alarm, len(e.alarms))
	for i, r := range e.alarms {
		out[i] = r.alarm
	}
	return out
}
