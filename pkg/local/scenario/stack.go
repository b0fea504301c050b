package scenario

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/awsmetrics"
	"github.com/geolocate-aws/geolocate/pkg/local/cfntemplate"
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

// ReadStack reads the pipeline's resources from a synthesized template.
func ReadStack(template []byte) (*Stack, error) {
	doc, err := cfntemplate.Parse(template)
	if err != nil {
		return nil, err
	}
	var s Stack
	var errs []error

	// The event source mapping names the predictor and the upload queue.
	mappings := doc.IDs("AWS::Lambda::EventSourceMapping")
	if len(mappings) != 1 {
		return nil, fmt.Errorf("template has %d event source mappings, want the predictor's one", len(mappings))
	}
	var predictorID, queueID string
	for _, id := range mappings {
		m := doc.Resources[id]
		predictorID = cfntemplate.RefID(m.Properties["FunctionName"])
		queueID = cfntemplate.RefID(m.Properties["EventSourceArn"])
		s.BatchSize = cfntemplate.IntOr(m.Properties, "BatchSize", 10)
		if sc, ok := m.Properties["ScalingConfig"].(map[string]any); ok {
			s.MaxConcurrency = cfntemplate.IntOr(sc, "MaximumConcurrency", 0)
		}
	}
	queue, ok := doc.Lookup(queueID, "AWS::SQS::Queue")
	if !ok {
		return nil, fmt.Errorf("event source mapping: queue %q not in the template", queueID)
	}
	s.Queue = cfntemplate.GetAtt(queueID, "QueueName").String()
	s.VisibilityTimeout = time.Duration(cfntemplate.IntOr(queue.Properties, "VisibilityTimeout", 30)) * time.Second
	s.QueueRetention = retention(queue.Properties)
	if redrive, ok := queue.Properties["RedrivePolicy"].(map[string]any); ok {
		s.MaxReceiveCount = cfntemplate.IntOr(redrive, "maxReceiveCount", 0)
		dlq := cfntemplate.RefID(redrive["deadLetterTargetArn"])
		s.DeadLetterQueue = cfntemplate.GetAtt(dlq, "QueueName").String()
		if r, ok := doc.Resources[dlq]; ok {
			s.DeadLetterRetention = retention(r.Properties)
		}
	}

	predictor, ok := doc.Lookup(predictorID, "AWS::Lambda::Function")
	if !ok {
		return nil, fmt.Errorf("event source mapping: function %q not in the template", predictorID)
	}
	s.Predictor = cfntemplate.Ref(predictorID).String()
	s.PredictorEnv, s.PredictorTimeout = functionSettings(predictor)

	// The schedule rule names the monitor; a rule with a pattern of one
	// detail type and no target counts the result events of that type.
	for _, id := range doc.IDs("AWS::Events::Rule") {
		r := doc.Resources[id]
		expr, _ := r.Properties["ScheduleExpression"].(string)
		if expr == "" {
			if detailType, ok := countedDetailType(r); ok {
				if s.ResultEventRules == nil {
					s.ResultEventRules = map[string]string{}
				}
				s.ResultEventRules[detailType] = cfntemplate.Ref(id).String()
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
		monitorID := cfntemplate.RefID(target["Arn"])
		monitor, ok := doc.Lookup(monitorID, "AWS::Lambda::Function")
		if !ok {
			errs = append(errs, fmt.Errorf("rule %s: target %q is not a function of the template", id, monitorID))
			continue
		}
		s.MonitorRule = cfntemplate.Ref(id).String()
		s.Monitor = cfntemplate.Ref(monitorID).String()
		s.MonitorSchedule = every
		s.MonitorEnv, s.MonitorTimeout = functionSettings(monitor)
	}
	// The results pipe (events=true): one at most.
	pipes := doc.IDs("AWS::Pipes::Pipe")
	if len(pipes) > 1 {
		errs = append(errs, fmt.Errorf("template has %d pipes, want the results pipe alone", len(pipes)))
	}
	for _, id := range pipes {
		s.ResultsPipe = cfntemplate.Ref(id).String()
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
func functionSettings(fn cfntemplate.Resource) (map[string]string, time.Duration) {
	env := map[string]string{}
	if e, ok := fn.Properties["Environment"].(map[string]any); ok {
		vars, _ := e["Variables"].(map[string]any)
		for name, v := range vars {
			if b, ok := v.(bool); ok {
				env[name] = fmt.Sprint(b)
				continue
			}
			env[name] = cfntemplate.Opaque(v)
		}
	}
	return env, time.Duration(cfntemplate.IntOr(fn.Properties, "Timeout", 3)) * time.Second
}

var rateExpr = regexp.MustCompile(`^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$`)

// retention is a queue's MessageRetentionPeriod, SQS's default of 4 days
// when the template leaves it out.
func retention(props map[string]any) time.Duration {
	return time.Duration(cfntemplate.IntOr(props, "MessageRetentionPeriod", 4*24*3600)) * time.Second
}

// countedDetailType is the one detail type a target-less rule's pattern
// matches (a counting rule of the result events).
func countedDetailType(r cfntemplate.Resource) (string, bool) {
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
