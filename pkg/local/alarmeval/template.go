package alarmeval

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/cfntemplate"
)

// ComparisonOperator compares an alarm's datapoint with its threshold.
type ComparisonOperator string

// The static-threshold operators. The anomaly detection ones
// (LessThanLowerOrGreaterThanUpperThreshold, ...) are refused.
const (
	GreaterThanOrEqualToThreshold ComparisonOperator = "GreaterThanOrEqualToThreshold"
	GreaterThanThreshold          ComparisonOperator = "GreaterThanThreshold"
	LessThanThreshold             ComparisonOperator = "LessThanThreshold"
	LessThanOrEqualToThreshold    ComparisonOperator = "LessThanOrEqualToThreshold"
)

// breaches reports whether v is on the alarming side of threshold.
func (op ComparisonOperator) breaches(v, threshold float64) bool {
	switch op {
	case GreaterThanOrEqualToThreshold:
		return v >= threshold
	case GreaterThanThreshold:
		return v > threshold
	case LessThanThreshold:
		return v < threshold
	case LessThanOrEqualToThreshold:
		return v <= threshold
	}
	return false
}

// symbol is the operator as a math sign, for descriptions.
func (op ComparisonOperator) symbol() string {
	return map[ComparisonOperator]string{
		GreaterThanOrEqualToThreshold: ">=", GreaterThanThreshold: ">",
		LessThanThreshold: "<", LessThanOrEqualToThreshold: "<=",
	}[op]
}

// TreatMissingData is how an alarm treats missing datapoints.
type TreatMissingData string

// TreatMissingData values, as CloudFormation spells them.
const (
	TreatMissing      TreatMissingData = "missing"
	TreatNotBreaching TreatMissingData = "notBreaching"
	TreatBreaching    TreatMissingData = "breaching"
	TreatIgnore       TreatMissingData = "ignore"
)

// Dimension is one dimension of a metric. Value may be an opaque reference
// ("Ref:<id>", "GetAtt:<id>.<attr>"; see cfntemplate.ParseReference).
type Dimension struct {
	Name  string
	Value string
}

// Metric identifies a metric.
type Metric struct {
	Namespace  string
	MetricName string
	// Dimensions in template order.
	Dimensions []Dimension
}

// String renders the metric as Namespace/Name{Dim=Value,...}.
func (m Metric) String() string {
	dims := make([]string, len(m.Dimensions))
	for i, d := range m.Dimensions {
		dims[i] = d.Name + "=" + d.Value
	}
	return m.Namespace + "/" + m.MetricName + "{" + strings.Join(dims, ",") + "}"
}

// MetricStat is a metric aggregated with a statistic over a period.
type MetricStat struct {
	Metric Metric
	Stat   Statistic
	Period time.Duration
	// Unit, when set, keeps only datapoints published with that unit.
	Unit string
}

func (s MetricStat) String() string {
	return fmt.Sprintf("%s(%s, %s)", s.Stat, s.Metric, s.Period)
}

// MetricDataQuery is one entry of a metric math alarm's Metrics: either a
// MetricStat or an Expression over the other entries' ids.
type MetricDataQuery struct {
	ID         string
	Label      string
	ReturnData bool
	MetricStat *MetricStat
	Expression string

	expr node
}

// Alarm is one AWS::CloudWatch::Alarm of a template.
type Alarm struct {
	LogicalID string
	// Name is the AlarmName, resolved as far as possible, else LogicalID.
	Name        string
	Description string

	// MetricStat is set for an alarm on one metric; Metrics for a metric
	// math alarm.
	MetricStat *MetricStat
	Metrics    []MetricDataQuery
	// Period of the alarm's datapoints (the metrics' common period).
	Period time.Duration

	EvaluationPeriods  int
	DatapointsToAlarm  int
	Threshold          float64
	ComparisonOperator ComparisonOperator
	TreatMissingData   TreatMissingData

	ActionsEnabled bool
	// Actions as opaque strings, e.g. "Ref:AlarmTopicD01E77F9".
	AlarmActions            []string
	OKActions               []string
	InsufficientDataActions []string

	// result is the id of the query whose data the alarm evaluates.
	result string
}

// String describes the alarm in one line, e.g.
// "Minimum(Geolocation/CreditsRemaining{Pipeline=x}, 5m0s) < 100 for 1 of 1 periods, missing data: ignore".
func (a *Alarm) String() string {
	what := ""
	if a.MetricStat != nil {
		what = a.MetricStat.String()
	} else {
		var parts []string
		for _, q := range a.Metrics {
			if q.ID == a.result {
				what = q.Expression
			} else if q.MetricStat != nil {
				parts = append(parts, q.ID+"="+q.MetricStat.String())
			} else {
				parts = append(parts, q.ID+"="+q.Expression)
			}
		}
		what = fmt.Sprintf("[%s] where %s", what, strings.Join(parts, ", "))
	}
	return fmt.Sprintf("%s %s %g for %d of %d periods of %s, missing data: %s",
		what, a.ComparisonOperator.symbol(), a.Threshold, a.DatapointsToAlarm, a.EvaluationPeriods, a.Period, a.TreatMissingData)
}

// ParseOptions adjust ParseTemplate.
type ParseOptions struct {
	// Refs resolves Ref to a pseudo parameter or a template parameter, e.g.
	// {"AWS::StackName": "Geolocation"}; other Refs stay opaque.
	Refs map[string]string
}

// ParseTemplate reads every AWS::CloudWatch::Alarm of a synthesized
// CloudFormation template (JSON), sorted by name. Every problem with every
// alarm is reported in the error, each naming the alarm and the field; the
// template's composite alarms and anomaly detectors are refused, since the
// evaluator does not model them.
func ParseTemplate(data []byte, optFns ...func(*ParseOptions)) ([]*Alarm, error) {
	var opts ParseOptions
	for _, fn := range optFns {
		fn(&opts)
	}
	tmpl, err := cfntemplate.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("alarmeval: %w", err)
	}
	resolver := cfntemplate.Keeping(opts.Refs)
	var alarms []*Alarm
	var errs []error
	for id, res := range tmpl.Resources {
		switch res.Type {
		case "AWS::CloudWatch::Alarm":
			a, err := parseAlarm(id, res.Properties, resolver)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			alarms = append(alarms, a)
		case "AWS::CloudWatch::CompositeAlarm", "AWS::CloudWatch::AnomalyDetector":
			errs = append(errs, fmt.Errorf("resource %s: %s is not modelled", id, res.Type))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("alarmeval: %w", err)
	}
	slices.SortFunc(alarms, func(a, b *Alarm) int { return strings.Compare(a.Name, b.Name) })
	return alarms, nil
}

// alarmParser reads one alarm's properties, naming the alarm and the field
// in every error.
type alarmParser struct {
	alarm string
	props map[string]any
	// res resolves the template's intrinsic functions, keeping references
	// to resources opaque.
	res  *cfntemplate.Resolver
	errs []error
}

func (p *alarmParser) fail(field string, err error) {
	p.errs = append(p.errs, fmt.Errorf("alarm %s: %s: %w", p.alarm, field, err))
}

func parseAlarm(id string, props map[string]any, res *cfntemplate.Resolver) (*Alarm, error) {
	if props == nil {
		return nil, fmt.Errorf("alarm %s: no Properties", id)
	}
	a := &Alarm{LogicalID: id, Name: id, ActionsEnabled: true, TreatMissingData: TreatMissing}
	p := &alarmParser{alarm: id, props: props, res: res}

	if v, ok := props["AlarmName"]; ok {
		name, resolved, err := res.String(v)
		switch {
		case err != nil:
			p.fail("AlarmName", err)
		case resolved:
			a.Name = name
			p.alarm = fmt.Sprintf("%s (%s)", name, id)
		}
	}
	if v, ok := props["AlarmDescription"]; ok {
		a.Description, _, _ = res.String(v)
	}

	for field, dst := range map[string]*int{"EvaluationPeriods": &a.EvaluationPeriods, "DatapointsToAlarm": &a.DatapointsToAlarm} {
		v, ok := props[field]
		if !ok {
			continue
		}
		n, err := cfntemplate.PositiveInt(v)
		if err != nil {
			p.fail(field, err)
		}
		*dst = n
	}
	if _, ok := props["EvaluationPeriods"]; !ok {
		p.fail("EvaluationPeriods", errors.New("missing"))
	}
	if a.DatapointsToAlarm == 0 {
		a.DatapointsToAlarm = a.EvaluationPeriods
	}
	if a.DatapointsToAlarm > a.EvaluationPeriods {
		p.fail("DatapointsToAlarm", fmt.Errorf("%d is more than EvaluationPeriods (%d)", a.DatapointsToAlarm, a.EvaluationPeriods))
	}

	if _, ok := props["ThresholdMetricId"]; ok {
		p.fail("ThresholdMetricId", errors.New("anomaly detection alarms are not modelled"))
	}
	if v, ok := props["Threshold"]; !ok {
		p.fail("Threshold", errors.New("missing"))
	} else {
		a.Threshold = p.number("Threshold", v)
	}

	switch op := ComparisonOperator(str(props["ComparisonOperator"])); op {
	case GreaterThanOrEqualToThreshold, GreaterThanThreshold, LessThanThreshold, LessThanOrEqualToThreshold:
		a.ComparisonOperator = op
	default:
		p.fail("ComparisonOperator", fmt.Errorf("%v is not supported", props["ComparisonOperator"]))
	}

	if v, ok := props["TreatMissingData"]; ok {
		switch t := TreatMissingData(str(v)); t {
		case TreatMissing, TreatNotBreaching, TreatBreaching, TreatIgnore:
			a.TreatMissingData = t
		default:
			p.fail("TreatMissingData", fmt.Errorf("%v is not one of missing, notBreaching, breaching, ignore", v))
		}
	}
	if v, ok := props["EvaluateLowSampleCountPercentile"]; ok && str(v) != "evaluate" {
		p.fail("EvaluateLowSampleCountPercentile", fmt.Errorf("%v is not modelled (only evaluate)", v))
	}

	if v, ok := props["ActionsEnabled"]; ok {
		b, err := cfntemplate.Bool(v)
		if err != nil {
			p.fail("ActionsEnabled", err)
		}
		a.ActionsEnabled = b
	}
	a.AlarmActions = p.actions("AlarmActions")
	a.OKActions = p.actions("OKActions")
	a.InsufficientDataActions = p.actions("InsufficientDataActions")

	_, hasMetrics := props["Metrics"]
	_, hasName := props["MetricName"]
	switch {
	case hasMetrics && hasName:
		p.fail("Metrics", errors.New("both Metrics and MetricName are set"))
	case hasMetrics:
		p.metricMath(a)
	default:
		a.MetricStat = p.singleMetric()
		if a.MetricStat != nil {
			a.Period = a.MetricStat.Period
		}
	}
	if err := errors.Join(p.errs...); err != nil {
		return nil, err
	}
	return a, nil
}

// number reads a number that may be given through a Ref to a parameter.
func (p *alarmParser) number(field string, v any) float64 {
	if m, ok := v.(map[string]any); ok {
		s, resolved, err := p.res.String(m)
		switch {
		case err != nil:
			p.fail(field, err)
			return 0
		case !resolved:
			p.fail(field, fmt.Errorf("%s is not known before deployment (see ParseOptions.Refs)", s))
			return 0
		}
		v = s
	}
	f, err := cfntemplate.Number(v)
	if err != nil {
		p.fail(field, err)
	}
	return f
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func (p *alarmParser) actions(field string) []string {
	v, ok := p.props[field]
	if !ok {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		p.fail(field, fmt.Errorf("%T is not a list", v))
		return nil
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		s, _, err := p.res.String(item)
		if err != nil {
			p.fail(fmt.Sprintf("%s[%d]", field, i), err)
			continue
		}
		out = append(out, s)
	}
	return out
}

// singleMetric reads MetricName, Namespace, Dimensions, Statistic or
// ExtendedStatistic, Period and Unit.
func (p *alarmParser) singleMetric() *MetricStat {
	s := &MetricStat{Metric: p.metric("", p.props), Unit: str(p.props["Unit"])}
	stat, ext := str(p.props["Statistic"]), str(p.props["ExtendedStatistic"])
	switch {
	case stat != "" && ext != "":
		p.fail("Statistic", errors.New("both Statistic and ExtendedStatistic are set"))
	case stat == "" && ext == "":
		p.fail("Statistic", errors.New("neither Statistic nor ExtendedStatistic is set"))
	case stat != "":
		s.Stat = p.statistic("Statistic", stat)
	default:
		s.Stat = p.statistic("ExtendedStatistic", ext)
	}
	s.Period = p.period("Period", p.props["Period"])
	return s
}

func (p *alarmParser) statistic(field, s string) Statistic {
	st, err := ParseStatistic(s)
	if err != nil {
		p.fail(field, err)
	}
	return st
}

// period reads a period in seconds. Alarms evaluate standard-resolution
// periods only: a multiple of 60 seconds, at most a day.
func (p *alarmParser) period(field string, v any) time.Duration {
	if v == nil {
		p.fail(field, errors.New("missing"))
		return 0
	}
	n, err := cfntemplate.PositiveInt(v)
	if err != nil {
		p.fail(field, err)
		return 0
	}
	if n%60 != 0 || n > 86400 {
		p.fail(field, fmt.Errorf("%d s: only multiples of 60 s up to a day are modelled (no high-resolution alarms)", n))
		return 0
	}
	return time.Duration(n) * time.Second
}

// metric reads MetricName, Namespace and Dimensions from m; prefix names
// the object in errors.
func (p *alarmParser) metric(prefix string, m map[string]any) Metric {
	var out Metric
	for field, dst := range map[string]*string{"MetricName": &out.MetricName, "Namespace": &out.Namespace} {
		s, resolved, err := p.res.String(m[field])
		switch {
		case m[field] == nil:
			p.fail(prefix+field, errors.New("missing"))
		case err != nil:
			p.fail(prefix+field, err)
		case !resolved:
			p.fail(prefix+field, fmt.Errorf("%s is not known before deployment", s))
		}
		*dst = s
	}
	dims, ok := m["Dimensions"]
	if !ok {
		return out
	}
	list, ok := dims.([]any)
	if !ok {
		p.fail(prefix+"Dimensions", fmt.Errorf("%T is not a list", dims))
		return out
	}
	for i, d := range list {
		field := fmt.Sprintf("%sDimensions[%d]", prefix, i)
		dm, ok := d.(map[string]any)
		if !ok {
			p.fail(field, fmt.Errorf("%T is not an object", d))
			continue
		}
		name, ok := dm["Name"].(string)
		if !ok || name == "" {
			p.fail(field+".Name", fmt.Errorf("%v is not a name", dm["Name"]))
			continue
		}
		val, _, err := p.res.String(dm["Value"])
		if err != nil {
			p.fail(field+".Value", err)
			continue
		}
		out.Dimensions = append(out.Dimensions, Dimension{Name: name, Value: val})
	}
	return out
}

// metricMath reads Metrics: MetricStat entries and Expression entries,
// exactly one of them returning the alarm's data.
func (p *alarmParser) metricMath(a *Alarm) {
	for _, field := range []string{"MetricName", "Namespace", "Dimensions", "Statistic", "ExtendedStatistic", "Period"} {
		if _, ok := p.props[field]; ok {
			p.fail(field, errors.New("set together with Metrics"))
		}
	}
	list, ok := p.props["Metrics"].([]any)
	if !ok || len(list) == 0 {
		p.fail("Metrics", fmt.Errorf("%T is not a non-empty list", p.props["Metrics"]))
		return
	}
	ids := map[string]int{}
	for i, item := range list {
		field := fmt.Sprintf("Metrics[%d]", i)
		m, ok := item.(map[string]any)
		if !ok {
			p.fail(field, fmt.Errorf("%T is not an object", item))
			continue
		}
		q := MetricDataQuery{ID: str(m["Id"]), Label: str(m["Label"]), ReturnData: true}
		if q.ID == "" {
			p.fail(field+".Id", errors.New("missing"))
			continue
		}
		field = fmt.Sprintf("Metrics[%s]", q.ID)
		if _, dup := ids[q.ID]; dup {
			p.fail(field+".Id", errors.New("used twice"))
			continue
		}
		if v, ok := m["ReturnData"]; ok {
			b, err := cfntemplate.Bool(v)
			if err != nil {
				p.fail(field+".ReturnData", err)
			}
			q.ReturnData = b
		}
		ms, hasStat := m["MetricStat"].(map[string]any)
		expr, hasExpr := m["Expression"].(string)
		switch {
		case hasStat && hasExpr:
			p.fail(field, errors.New("both MetricStat and Expression are set"))
			continue
		case hasStat:
			metric, _ := ms["Metric"].(map[string]any)
			if metric == nil {
				p.fail(field+".MetricStat.Metric", errors.New("missing"))
				continue
			}
			s := &MetricStat{
				Metric: p.metric(field+".MetricStat.Metric.", metric),
				Stat:   p.statistic(field+".MetricStat.Stat", str(ms["Stat"])),
				Period: p.period(field+".MetricStat.Period", ms["Period"]),
				Unit:   str(ms["Unit"]),
			}
			q.MetricStat = s
			switch {
			case a.Period == 0:
				a.Period = s.Period
			case s.Period != 0 && s.Period != a.Period:
				p.fail(field+".MetricStat.Period", fmt.Errorf("%s differs from the other metrics' %s", s.Period, a.Period))
			}
		case hasExpr:
			n, err := parseExpression(expr)
			if err != nil {
				p.fail(field+".Expression", fmt.Errorf("%q: %w", expr, err))
				continue
			}
			q.Expression, q.expr = expr, n
		default:
			p.fail(field, errors.New("neither MetricStat nor Expression is set"))
			continue
		}
		ids[q.ID] = len(a.Metrics)
		a.Metrics = append(a.Metrics, q)
	}

	var returning []string
	for _, q := range a.Metrics {
		if q.ReturnData {
			returning = append(returning, q.ID)
		}
		if q.expr == nil {
			continue
		}
		for _, ref := range q.expr.ids(nil) {
			if _, ok := ids[ref]; !ok {
				p.fail(fmt.Sprintf("Metrics[%s].Expression", q.ID), fmt.Errorf("refers to unknown id %q", ref))
			}
		}
	}
	if len(returning) != 1 {
		p.fail("Metrics", fmt.Errorf("%d entries return data (%v), want exactly one", len(returning), returning))
	} else {
		a.result = returning[0]
	}
	if cycle := findCycle(a.Metrics); cycle != "" {
		p.fail("Metrics", fmt.Errorf("expressions refer to each other in a cycle through %q", cycle))
	}
	if a.Period == 0 && len(p.errs) == 0 {
		p.fail("Metrics", errors.New("no MetricStat gives the alarm a period"))
	}
}

// findCycle returns an id on a cycle of expression references, or "".
func findCycle(queries []MetricDataQuery) string {
	deps := map[string][]string{}
	for _, q := range queries {
		if q.expr != nil {
			deps[q.ID] = q.expr.ids(nil)
		}
	}
	const (
		visiting = 1
		done     = 2
	)
	mark := map[string]int{}
	var visit func(id string) string
	visit = func(id string) string {
		switch mark[id] {
		case visiting:
			return id
		case done:
			return ""
		}
		mark[id] = visiting
		for _, d := range deps[id] {
			if c := visit(d); c != "" {
				return c
			}
		}
		mark[id] = done
		return ""
	}
	for _, q := range queries {
		if c := visit(q.ID); c != "" {
			return c
		}
	}
	return ""
}
