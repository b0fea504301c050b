package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/awsmetrics"
)

// Stack is what the rig takes from the synthesized template: the functions'
// environments and timeouts, the queue's settings and the event source
// mapping's, and the names the alarms use for the resources, so the local
// run is configured as the deployed one.
type Stack struct {
	// PredictorEnv and MonitorEnv are the functions' environment variables.
	// A value that refers to a resource is the opaque reference
	// ("Ref:ResultsTableF0B5BF22"); the rig replaces those with local names.
	PredictorEnv, MonitorEnv map[string]string
	PredictorTimeout         time.Duration
	MonitorTimeout           time.Duration

	// Names are the dimension values the template's alarms and widgets
	// use for the functions, the queues and the schedule.
	awsmetrics.Names

	VisibilityTimeout time.Duration
	// QueueRetention and DeadLetterRetention are the queues'
	// MessageRetentionPeriod (SQS's default of 4 days when unset).
	QueueRetention, DeadLetterRetention time.Duration
	MaxReceiveCount                     int
	BatchSize                           int
	MaxConcurrency                      int
	MonitorSchedule                     time.Duration
}

type cfnResource struct {
	Type       string         `json:"Type"`
	Properties map[string]any `json:"Properties"`
}

// ReadStack reads the pipeline's resources from a synthesized template.
func ReadStack(template []byte) (*Stack, error) {
	var doc struct {
		Resources map[string]cfnResource `json:"Resources"`
	}
	if err := json.Unmarshal(template, &doc); err != nil {
		return nil, fmt.Errorf("read template: %w", err)
	}
	byType := func(t string) map[string]cfnResource {
		out := map[string]cfnResource{}
		for id, r := range doc.Resources {
			if r.Type == t {
				out[id] = r
			}
		}
		return out
	}
	var s Stack
	var errs []error

	// The event source mapping names the predictor and the upload queue.
	mappings := byType("AWS::Lambda::EventSourceMapping")
	if len(mappings) != 1 {
		return nil, fmt.Errorf("template has %d event source mappings, want the predictor's one", len(mappings))
	}
	var predictorID, queueID string
	for _, m := range mappings {
		predictorID = refID(m.Properties["FunctionName"])
		queueID = refID(m.Properties["EventSourceArn"])
		s.BatchSize = intProp(m.Properties, "BatchSize", 10)
		if sc, ok := m.Properties["ScalingConfig"].(map[string]any); ok {
			s.MaxConcurrency = intProp(sc, "MaximumConcurrency", 0)
		}
	}
	queue, ok := doc.Resources[queueID]
	if !ok || queue.Type != "AWS::SQS::Queue" {
		return nil, fmt.Errorf("event source mapping: queue %q not in the template", queueID)
	}
	s.Queue = alarmeval.Reference{Kind: "GetAtt", LogicalID: queueID, Attribute: "QueueName"}.String()
	s.VisibilityTimeout = time.Duration(intProp(queue.Properties, "VisibilityTimeout", 30)) * time.Second
	s.QueueRetention = retention(queue.Properties)
	if redrive, ok := queue.Properties["RedrivePolicy"].(map[string]any); ok {
		s.MaxReceiveCount = intProp(redrive, "maxReceiveCount", 0)
		dlq := refID(redrive["deadLetterTargetArn"])
		s.DeadLetterQueue = alarmeval.Reference{Kind: "GetAtt", LogicalID: dlq, Attribute: "QueueName"}.String()
		if r, ok := doc.Resources[dlq]; ok {
			s.DeadLetterRetention = retention(r.Properties)
		}
	}

	predictor, ok := doc.Resources[predictorID]
	if !ok || predictor.Type != "AWS::Lambda::Function" {
		return nil, fmt.Errorf("event source mapping: function %q not in the template", predictorID)
	}
	s.Predictor = alarmeval.Reference{Kind: "Ref", LogicalID: predictorID}.String()
	s.PredictorEnv, s.PredictorTimeout = functionSettings(predictor)

	// The schedule rule names the monitor; a rule with a pattern of one
	// detail type and no target counts the result events of that type.
	for id, r := range byType("AWS::Events::Rule") {
		expr, _ := r.Properties["ScheduleExpression"].(string)
		if expr == "" {
			if detailType, ok := countedDetailType(r); ok {
				if s.ResultEventRules == nil {
					s.ResultEventRules = map[string]string{}
				}
				s.ResultEventRules[detailType] = alarmeval.Reference{Kind: "Ref", LogicalID: id}.String()
			}
			continue
		}
		every, err := parseRate(expr)
		if err != nil {
			errs = append(errs, fmt.Errorf("rule %s: %w", id, err))
			continue
		}
		targets, _ := r.Properties["Targets"].([]any)
		if len(targets) != 1 {
			errs = append(errs, fmt.Errorf("rule %s: %d targets, want the monitor", id, len(targets)))
			continue
		}
		target, _ := targets[0].(map[string]any)
		monitorID := refID(target["Arn"])
		monitor, ok := doc.Resources[monitorID]
		if !ok || monitor.Type != "AWS::Lambda::Function" {
			errs = append(errs, fmt.Errorf("rule %s: target %q is not a function of the template", id, monitorID))
			continue
		}
		s.MonitorRule = alarmeval.Reference{Kind: "Ref", LogicalID: id}.String()
		s.Monitor = alarmeval.Reference{Kind: "Ref", LogicalID: monitorID}.String()
		s.MonitorSchedule = every
		s.MonitorEnv, s.MonitorTimeout = functionSettings(monitor)
	}
	// The results pipe (events=true): one at most.
	pipes := byType("AWS::Pipes::Pipe")
	if len(pipes) > 1 {
		errs = append(errs, fmt.Errorf("template has %d pipes, want the results pipe alone", len(pipes)))
	}
	for id := range pipes {
		s.ResultsPipe = alarmeval.Reference{Kind: "Ref", LogicalID: id}.String()
	}
	if s.Monitor == "" && len(errs) == 0 {
		errs = append(errs, errors.New("no schedule rule targets a monitor function"))
	}
	if s.DeadLetterQueue == "" {
		errs = append(errs, fmt.Errorf("queue %s has no redrive policy", queueID))
	}
	return &s, errors.Join(errs...)
}

// functionSettings returns a function's environment, references kept as
// opaque strings, and its timeout (Lambda's default, 3 s, when unset).
func functionSettings(fn cfnResource) (map[string]string, time.Duration) {
	env := map[string]string{}
	if e, ok := fn.Properties["Environment"].(map[string]any); ok {
		vars, _ := e["Variables"].(map[string]any)
		for name, v := range vars {
			switch v := v.(type) {
			case string:
				env[name] = v
			case float64, bool:
				env[name] = fmt.Sprint(v)
			default:
				env[name] = opaque(v)
			}
		}
	}
	return env, time.Duration(intProp(fn.Properties, "Timeout", 3)) * time.Second
}

// opaque renders a Ref or Fn::GetAtt the way alarmeval does ("Ref:<id>",
// "GetAtt:<id>.<attr>"), anything else as its JSON.
func opaque(v any) string {
	m, _ := v.(map[string]any)
	if ref, ok := m["Ref"].(string); ok {
		return alarmeval.Reference{Kind: "Ref", LogicalID: ref}.String()
	}
	if att, ok := m["Fn::GetAtt"].([]any); ok && len(att) == 2 {
		id, _ := att[0].(string)
		attr, _ := att[1].(string)
		return alarmeval.Reference{Kind: "GetAtt", LogicalID: id, Attribute: attr}.String()
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

// refID is the logical id a Ref or Fn::GetAtt points at.
func refID(v any) string {
	m, _ := v.(map[string]any)
	if ref, ok := m["Ref"].(string); ok {
		return ref
	}
	if att, ok := m["Fn::GetAtt"].([]any); ok && len(att) > 0 {
		id, _ := att[0].(string)
		return id
	}
	return ""
}

func intProp(props map[string]any, name string, def int) int {
	switch v := props[name].(type) {
	case float64:
		return int(v)
	case string:
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

var rateExpr = regexp.MustCompile(`^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$`)

// retention is a queue's MessageRetentionPeriod, SQS's default of 4 days
// when the template leaves it out.
func retention(props map[string]any) time.Duration {
	return time.Duration(intProp(props, "MessageRetentionPeriod", 4*24*3600)) * time.Second
}

// countedDetailType is the one detail type a target-less rule's pattern
// matches (a counting rule of the result events).
func countedDetailType(r cfnResource) (string, bool) {
	if targets, _ := r.Properties["Targets"].([]any); len(targets) > 0 {
		return "", false
	}
	pattern, _ := r.Properties["EventPattern"].(map[string]any)
	types, _ := pattern["detail-type"].([]any)
	if len(types) != 1 {
		return "", false
	}
	t, ok := types[0].(string)
	return t, ok && t != ""
}

// parseRate reads an EventBridge rate expression; cron schedules are not
// modelled.
func parseRate(expr string) (time.Duration, error) {
	m := rateExpr.FindStringSubmatch(strings.TrimSpace(expr))
	if m == nil {
		return 0, fmt.Errorf("schedule %q: only rate(N minutes|hours|days) is modelled", expr)
	}
	n, _ := strconv.Atoi(m[1])
	unit := map[string]time.Duration{"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour}[strings.TrimSuffix(m[2], "s")]
	return time.Duration(n) * unit, nil
}
