package awsapi

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/eventpattern"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
)

// defaultBus is the account's default event bus, the one a request
// without EventBusName addresses.
const defaultBus = "default"

// EventBridge serves rules (event patterns matched by pkg/local/eventpattern,
// rate schedules run on real time) and PutEvents over awsJson1_1, and
// delivers each matched event to the rule's targets: an SQS queue of the
// SQS stand-in (the event as the message body, as an SQS target sends it)
// or a function of the Lambda stand-in (an Event invocation).
type EventBridge struct {
	opts EventBridgeOptions

	mu sync.Mutex
	// buses hold each bus's rules by name; the default bus always exists.
	buses map[string]map[string]*rule
	// delivered counts the deliveries to targets, by rule, for the
	// summary of what ran.
	delivered map[string]int
	closed    bool
	wg        sync.WaitGroup
}

// EventBridgeOptions name the stand-ins rules deliver to.
type EventBridgeOptions struct {
	Region, AccountID string
	SQS               *SQS
	Lambda            *Lambda
	// Logger receives a line per failed delivery. Default: discarded.
	Logger *slog.Logger
	// Metrics receives what EventBridge publishes for rules (AWS/Events
	// TriggeredRules, Invocations, FailedInvocations by RuleName, with
	// EventBusName on a custom bus); nil: none.
	Metrics *alarmeval.Store
	// Ticker makes a schedule's ticks: every period of its rate, by
	// default (time.NewTicker); tests tick faster.
	Ticker func(period time.Duration) (ticks <-chan time.Time, stop func())
}

type rule struct {
	name, bus, pattern, schedule, state string
	compiled                            *eventpattern.Pattern
	targets                             map[string]target // by id
	stop                                chan struct{}     // closes a schedule's ticker
}

type target struct {
	Id, Arn, Input string
}

// NewEventBridge returns an EventBridge stand-in with no rules.
func NewEventBridge(optFns ...func(*EventBridgeOptions)) *EventBridge {
	o := EventBridgeOptions{Region: sqsqueue.DefaultRegion, AccountID: sqsqueue.DefaultAccountID}
	for _, fn := range optFns {
		fn(&o)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Ticker == nil {
		o.Ticker = func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		}
	}
	return &EventBridge{opts: o, buses: map[string]map[string]*rule{defaultBus: {}}, delivered: map[string]int{}}
}

// AddBus creates a custom event bus (the stack's result events bus).
func (e *EventBridge) AddBus(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.buses[name] == nil {
		e.buses[name] = map[string]*rule{}
	}
}

// PutEvent puts one event on bus, as PutEvents does (the results pipe's
// target is a bus): every enabled rule of the bus that matches it
// delivers it to its targets.
func (e *EventBridge) PutEvent(bus, source, detailType string, detail json.RawMessage, resources []string, at time.Time) error {
	rules, err := e.rulesOf(bus)
	if err != nil {
		return err
	}
	e.route(rules, e.envelope(source, detailType, resources, detail, at))
	return nil
}

// Handler is the HTTP handler of the EventBridge API.
func (e *EventBridge) Handler() http.Handler {
	return awsJSON{target: "AWSEvents", version: "1.1", ops: map[string]jsonOp{
		"PutRule":               e.putRule,
		"PutTargets":            e.putTargets,
		"RemoveTargets":         e.removeTargets,
		"DeleteRule":            e.deleteRule,
		"PutEvents":             e.putEvents,
		"ListRuleNamesByTarget": e.listRuleNamesByTarget,
		"DescribeRule":          e.describeRule,
	}}
}

// Deliveries are the target deliveries so far, by rule name.
func (e *EventBridge) Deliveries() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]int, len(e.delivered))
	for k, v := range e.delivered {
		out[k] = v
	}
	return out
}

// Close stops the schedules and waits for deliveries in progress.
func (e *EventBridge) Close() {
	e.mu.Lock()
	e.closed = true
	for _, rules := range e.buses {
		for _, r := range rules {
			if r.stop != nil {
				close(r.stop)
				r.stop = nil
			}
		}
	}
	e.mu.Unlock()
	e.wg.Wait()
}

func (e *EventBridge) ruleARN(name string) string {
	return "arn:aws:events:" + e.opts.Region + ":" + e.opts.AccountID + ":rule/" + name
}

func notFound(format string, args ...any) *apiError {
	return senderError("ResourceNotFoundException", format, args...)
}

// busName is the name of the bus a request names by name or ARN (empty:
// the default bus).
func busName(bus string) string {
	if i := strings.Index(bus, ":event-bus/"); i >= 0 {
		bus = bus[i+len(":event-bus/"):]
	}
	if bus == "" {
		return defaultBus
	}
	return bus
}

// The metrics EventBridge publishes for rules ("Monitoring Amazon
// EventBridge", namespace AWS/Events).
const (
	NamespaceEvents         = "AWS/Events"
	MetricTriggeredRules    = "TriggeredRules"
	MetricInvocations       = "Invocations"
	MetricFailedInvocations = "FailedInvocations"
	dimRuleName             = "RuleName"
	dimEventBusName         = "EventBusName"
)

// metric publishes one count of a rule: by RuleName on the default bus,
// by EventBusName and RuleName on a custom one.
func (e *EventBridge) metric(name string, r *rule, at time.Time) {
	if e.opts.Metrics == nil {
		return
	}
	dims := map[string]string{dimRuleName: r.name}
	if r.bus != defaultBus {
		dims[dimEventBusName] = r.bus
	}
	// Well-formed by construction: the store refuses only malformed points.
	_ = e.opts.Metrics.Add(alarmeval.Datapoint{Namespace: NamespaceEvents, MetricName: name, Dimensions: dims, Timestamp: at, Value: 1, Unit: "Count"})
}

// rulesOf returns the rules of the bus a request names (by name or ARN;
// empty: the default bus), or EventBridge's ResourceNotFoundException.
// The map is guarded by e.mu.
func (e *EventBridge) rulesOf(bus string) (map[string]*rule, error) {
	rules, unlock, err := e.lockRules(bus)
	if err != nil {
		return nil, err
	}
	unlock()
	return rules, nil
}

// lockRules is rulesOf with e.mu held until the caller's unlock: the
// rule operations read and change a bus's rules under one lock.
func (e *EventBridge) lockRules(bus string) (rules map[string]*rule, unlock func(), err error) {
	e.mu.Lock()
	rules = e.buses[busName(bus)]
	if rules == nil {
		e.mu.Unlock()
		return nil, nil, notFound("Event bus %s does not exist.", bus)
	}
	return rules, e.mu.Unlock, nil
}

// ruleOf is the rule of that name, or EventBridge's ResourceNotFound
// naming the bus.
func ruleOf(rules map[string]*rule, name, bus string) (*rule, error) {
	if r := rules[name]; r != nil {
		return r, nil
	}
	return nil, notFound("Rule %s does not exist on EventBus %s.", name, busName(bus))
}

// rateExpression is EventBridge's rate(value unit) schedule.
var rateExpression = regexp.MustCompile(`^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$`)

// ParseRate reads a rate(...) schedule expression; cron(...) is not served.
func ParseRate(expr string) (time.Duration, error) {
	m := rateExpression.FindStringSubmatch(expr)
	if m == nil {
		return 0, senderError("ValidationException", "Parameter ScheduleExpression is not valid: %q (locally only rate(N minute(s)|hour(s)|day(s)) is served)", expr)
	}
	n, _ := strconv.Atoi(m[1])
	unit := map[string]time.Duration{"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour}[strings.TrimSuffix(m[2], "s")]
	if n < 1 || (n == 1) != !strings.HasSuffix(m[2], "s") {
		return 0, senderError("ValidationException", "Parameter ScheduleExpression is not valid: %q (1 takes the singular unit, more the plural)", expr)
	}
	return time.Duration(n) * unit, nil
}

func (e *EventBridge) putRule(_ context.Context, _ *http.Request, body []byte) (any, error) {
	var in struct {
		Name, EventPattern, ScheduleExpression, State, EventBusName string
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	rules, err := e.rulesOf(in.EventBusName)
	if err != nil {
		return nil, err
	}
	if in.Name == "" || (in.EventPattern == "") == (in.ScheduleExpression == "") {
		return nil, senderError("ValidationException", "a rule needs a Name and exactly one of EventPattern and ScheduleExpression")
	}
	if in.State == "" {
		in.State = "ENABLED"
	}
	r := &rule{name: in.Name, bus: busName(in.EventBusName), pattern: in.EventPattern, schedule: in.ScheduleExpression, state: in.State}
	var every time.Duration
	if in.EventPattern != "" {
		p, err := eventpattern.Compile([]byte(in.EventPattern))
		if err != nil {
			return nil, senderError("InvalidEventPatternException", "Event pattern is not valid. Reason: %v", err)
		}
		r.compiled = p
	} else {
		var err error
		if every, err = ParseRate(in.ScheduleExpression); err != nil {
			return nil, err
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if old := rules[in.Name]; old != nil {
		r.targets = old.targets
		if old.stop != nil {
			close(old.stop)
		}
	} else {
		r.targets = map[string]target{}
	}
	rules[in.Name] = r
	if every > 0 && r.state == "ENABLED" && !e.closed {
		r.stop = make(chan struct{})
		e.wg.Add(1)
		go e.runSchedule(r, every, r.stop)
	}
	return map[string]string{"RuleArn": e.ruleARN(in.Name)}, nil
}

// runSchedule sends the rule's "Scheduled Event" every period, the first
// one period after the rule was put, as EventBridge does.
func (e *EventBridge) runSchedule(r *rule, every time.Duration, stop chan struct{}) {
	defer e.wg.Done()
	ticks, stopTicks := e.opts.Ticker(every)
	defer stopTicks()
	for {
		select {
		case <-stop:
			return
		case at := <-ticks:
			event := e.envelope("aws.events", "Scheduled Event", []string{e.ruleARN(r.name)}, json.RawMessage(`{}`), at)
			e.deliver(r, event)
		}
	}
}

func (e *EventBridge) putTargets(_ context.Context, _ *http.Request, body []byte) (any, error) {
	var in struct {
		Rule, EventBusName string
		Targets            []target
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	rules, unlock, err := e.lockRules(in.EventBusName)
	if err != nil {
		return nil, err
	}
	defer unlock()
	r, err := ruleOf(rules, in.Rule, in.EventBusName)
	if err != nil {
		return nil, err
	}
	type failed struct{ TargetId, ErrorCode, ErrorMessage string }
	out := struct {
		FailedEntryCount int
		FailedEntries    []failed
	}{FailedEntries: []failed{}}
	for _, t := range in.Targets {
		if !strings.HasPrefix(t.Arn, "arn:aws:sqs:") && !strings.HasPrefix(t.Arn, "arn:aws:lambda:") {
			out.FailedEntries = append(out.FailedEntries, failed{TargetId: t.Id, ErrorCode: "ValidationException", ErrorMessage: "locally a target is an SQS queue or a Lambda function: " + t.Arn})
			continue
		}
		r.targets[t.Id] = t
	}
	out.FailedEntryCount = len(out.FailedEntries)
	return out, nil
}

func (e *EventBridge) removeTargets(_ context.Context, _ *http.Request, body []byte) (any, error) {
	var in struct {
		Rule, EventBusName string
		Ids                []string
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	rules, unlock, err := e.lockRules(in.EventBusName)
	if err != nil {
		return nil, err
	}
	defer unlock()
	r, err := ruleOf(rules, in.Rule, in.EventBusName)
	if err != nil {
		return nil, err
	}
	for _, id := range in.Ids {
		delete(r.targets, id)
	}
	return map[string]any{"FailedEntryCount": 0, "FailedEntries": []any{}}, nil
}

func (e *EventBridge) deleteRule(_ context.Context, _ *http.Request, body []byte) (any, error) {
	var in struct{ Name, EventBusName string }
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	rules, unlock, err := e.lockRules(in.EventBusName)
	if err != nil {
		return nil, err
	}
	defer unlock()
	r := rules[in.Name]
	if r == nil {
		return nil, nil // DeleteRule of a missing rule succeeds
	}
	if len(r.targets) > 0 {
		return nil, senderError("ValidationException", "Rule can't be deleted since it has targets.")
	}
	if r.stop != nil {
		close(r.stop)
	}
	delete(rules, in.Name)
	return nil, nil
}

func (e *EventBridge) describeRule(_ context.Context, _ *http.Request, body []byte) (any, error) {
	var in struct{ Name, EventBusName string }
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	rules, unlock, err := e.lockRules(in.EventBusName)
	if err != nil {
		return nil, err
	}
	defer unlock()
	r, err := ruleOf(rules, in.Name, in.EventBusName)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"Name": r.name, "Arn": e.ruleARN(r.name), "State": r.state, "EventBusName": cmp.Or(in.EventBusName, defaultBus)}
	if r.pattern != "" {
		out["EventPattern"] = r.pattern
	} else {
		out["ScheduleExpression"] = r.schedule
	}
	return out, nil
}

func (e *EventBridge) listRuleNamesByTarget(_ context.Context, _ *http.Request, body []byte) (any, error) {
	var in struct{ TargetArn, EventBusName string }
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	rules, unlock, err := e.lockRules(in.EventBusName)
	if err != nil {
		return nil, err
	}
	defer unlock()
	names := []string{}
	for name, r := range rules {
		for _, t := range r.targets {
			if t.Arn == in.TargetArn {
				names = append(names, name)
				break
			}
		}
	}
	sort.Strings(names)
	return map[string]any{"RuleNames": names}, nil
}

// envelope is the event as rules match it and targets receive it.
func (e *EventBridge) envelope(source, detailType string, resources []string, detail json.RawMessage, at time.Time) []byte {
	if resources == nil {
		resources = []string{}
	}
	body, _ := json.Marshal(map[string]any{
		"version": "0", "id": uuid.NewString(), "detail-type": detailType, "source": source,
		"account": e.opts.AccountID, "time": at.UTC().Format(time.RFC3339), "region": e.opts.Region,
		"resources": resources, "detail": detail,
	})
	return body
}

// maxPutEventsEntries is PutEvents' limit per request.
const maxPutEventsEntries = 10

func (e *EventBridge) putEvents(_ context.Context, _ *http.Request, body []byte) (any, error) {
	var in struct {
		Entries []struct {
			Source, DetailType, Detail, EventBusName string
			Resources                                []string
			Time                                     *float64
		}
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	if len(in.Entries) == 0 || len(in.Entries) > maxPutEventsEntries {
		return nil, senderError("ValidationException", "PutEvents takes 1 to %d entries, got %d", maxPutEventsEntries, len(in.Entries))
	}
	type result struct {
		EventId      string `json:",omitempty"`
		ErrorCode    string `json:",omitempty"`
		ErrorMessage string `json:",omitempty"`
	}
	out := struct {
		FailedEntryCount int
		Entries          []result
	}{}
	for _, en := range in.Entries {
		rules, busErr := e.rulesOf(en.EventBusName)
		if en.Source == "" || en.DetailType == "" || !json.Valid([]byte(en.Detail)) || busErr != nil {
			out.FailedEntryCount++
			out.Entries = append(out.Entries, result{ErrorCode: "InvalidArgument", ErrorMessage: "Source, DetailType, a JSON Detail and an existing bus are required"})
			continue
		}
		at := time.Now()
		if en.Time != nil {
			at = epochTime(*en.Time)
		}
		event := e.envelope(en.Source, en.DetailType, en.Resources, json.RawMessage(en.Detail), at)
		var id struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(event, &id)
		e.route(rules, event)
		out.Entries = append(out.Entries, result{EventId: id.ID})
	}
	return out, nil
}

// route delivers event to every enabled rule of rules that matches it.
func (e *EventBridge) route(rules map[string]*rule, event []byte) {
	e.mu.Lock()
	var matched []*rule
	for _, r := range rules {
		if r.compiled == nil || r.state != "ENABLED" {
			continue
		}
		if ok, err := r.compiled.MatchJSON(event); err == nil && ok {
			matched = append(matched, r)
		}
	}
	e.mu.Unlock()
	for _, r := range matched {
		e.metric(MetricTriggeredRules, r, time.Now())
		e.deliver(r, event)
	}
}

// deliver sends event to every target of r: SQS at once, Lambda as an
// Event invocation (its own goroutine, as Lambda's async queue).
func (e *EventBridge) deliver(r *rule, event []byte) {
	e.mu.Lock()
	targets := make([]target, 0, len(r.targets))
	for _, t := range r.targets {
		targets = append(targets, t)
	}
	e.mu.Unlock()
	for _, t := range targets {
		payload := event
		if t.Input != "" {
			payload = []byte(t.Input)
		}
		if err := e.send(t.Arn, payload); err != nil {
			e.metric(MetricFailedInvocations, r, time.Now())
			e.opts.Logger.Error("rule target delivery failed", "rule", r.name, "target", t.Arn, "error", err)
			continue
		}
		e.metric(MetricInvocations, r, time.Now())
		e.mu.Lock()
		e.delivered[r.name]++
		e.mu.Unlock()
	}
}

func (e *EventBridge) send(arn string, payload []byte) error {
	name := arn[strings.LastIndex(arn, ":")+1:]
	switch {
	case strings.HasPrefix(arn, "arn:aws:sqs:") && e.opts.SQS != nil:
		q, err := e.opts.SQS.live(name, "SendMessage")
		if err != nil {
			return err
		}
		_, err = q.SendMessage(string(payload))
		return err
	case strings.HasPrefix(arn, "arn:aws:lambda:") && e.opts.Lambda != nil:
		f, err := e.opts.Lambda.function(arn)
		if err != nil {
			return err
		}
		e.opts.Lambda.invokeAsync(f, payload)
		return nil
	}
	return fmt.Errorf("no local service for target %s", arn)
}
