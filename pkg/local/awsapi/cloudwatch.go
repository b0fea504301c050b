package awsapi

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/smithy-go/encoding/cbor"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
)

// The alarm states of SetAlarmState and DescribeAlarms.
const (
	StateOK               = "OK"
	StateAlarm            = "ALARM"
	StateInsufficientData = "INSUFFICIENT_DATA"
)

// Alarm is one of the stack's alarms as the CloudWatch stand-in holds it.
type Alarm struct {
	Name                  string
	Namespace, MetricName string
	// Actions are the ALARM actions (the alarm topic's ARN): SetAlarmState
	// into ALARM notifies them, as CloudWatch does on a state change.
	Actions   []string
	OKActions []string
}

// AlarmNotice is what an alarm action receives on a state change.
type AlarmNotice struct {
	Alarm, OldState, NewState, Reason string
	At                                time.Time
}

// CloudWatch serves PutMetricData and GetMetricStatistics over an
// alarmeval.Store (the store the rig's alarms and dashboard read), and
// DescribeAlarms / SetAlarmState of the alarms added, over RPC v2 CBOR.
type CloudWatch struct {
	store *alarmeval.Store
	opts  CloudWatchOptions

	mu     sync.Mutex
	alarms map[string]*alarmState
}

// CloudWatchOptions configure the CloudWatch stand-in.
type CloudWatchOptions struct {
	Region, AccountID string
	// Notify runs an alarm's actions on a state change (the SNS stand-in's
	// Publish to the alarm topic); nil: none.
	Notify func(ctx context.Context, action string, n AlarmNotice) error
	Now    func() time.Time
}

type alarmState struct {
	Alarm
	state, reason string
	updated       time.Time
}

// NewCloudWatch returns a CloudWatch stand-in over store.
func NewCloudWatch(store *alarmeval.Store, optFns ...func(*CloudWatchOptions)) *CloudWatch {
	o := CloudWatchOptions{Region: sqsqueue.DefaultRegion, AccountID: sqsqueue.DefaultAccountID, Now: time.Now}
	for _, fn := range optFns {
		fn(&o)
	}
	return &CloudWatch{store: store, opts: o, alarms: map[string]*alarmState{}}
}

// AddAlarm adds an alarm in INSUFFICIENT_DATA, as a new alarm starts.
func (c *CloudWatch) AddAlarm(a Alarm) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.alarms[a.Name] = &alarmState{Alarm: a, state: StateInsufficientData, reason: "Unchecked: Initial alarm creation", updated: c.opts.Now()}
}

// States are the alarms' states by name.
func (c *CloudWatch) States() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]string{}
	for name, a := range c.alarms {
		out[name] = a.state
	}
	return out
}

// Handler is the HTTP handler of the CloudWatch API.
func (c *CloudWatch) Handler() http.Handler {
	return rpcv2CBOR{service: "GraniteServiceVersion20100801", ops: map[string]cborOp{
		"PutMetricData":       c.putMetricData,
		"GetMetricStatistics": c.getMetricStatistics,
		"DescribeAlarms":      c.describeAlarms,
		"SetAlarmState":       c.setAlarmState,
	}}
}

type cwDimension struct{ Name, Value string }

func dimensionMap(dims []cwDimension) map[string]string {
	out := make(map[string]string, len(dims))
	for _, d := range dims {
		out[d.Name] = d.Value
	}
	return out
}

func invalidParameter(format string, args ...any) *apiError {
	return senderError("InvalidParameterValue", format, args...)
}

func (c *CloudWatch) putMetricData(_ context.Context, input []byte) (cbor.Value, error) {
	var in struct {
		Namespace  string
		MetricData []struct {
			MetricName      string
			Dimensions      []cwDimension
			Timestamp       *float64
			Value           *float64
			Values, Counts  []float64
			StatisticValues *struct{ SampleCount, Sum, Minimum, Maximum float64 }
			Unit            string
		}
	}
	if err := decodeJSON(input, &in); err != nil {
		return nil, err
	}
	if in.Namespace == "" || strings.HasPrefix(in.Namespace, "AWS/") {
		return nil, invalidParameter("The value %q for parameter Namespace is invalid: required, and AWS/ is reserved", in.Namespace)
	}
	var points []alarmeval.Datapoint
	for _, d := range in.MetricData {
		at := c.opts.Now()
		if d.Timestamp != nil {
			at = epochTime(*d.Timestamp)
		}
		dp := alarmeval.Datapoint{Namespace: in.Namespace, MetricName: d.MetricName, Dimensions: dimensionMap(d.Dimensions), Timestamp: at, Unit: d.Unit}
		switch {
		case d.Value != nil:
			dp.Value = *d.Value
			points = append(points, dp)
		case len(d.Values) > 0:
			for i, v := range d.Values {
				n := 1
				if i < len(d.Counts) {
					n = int(d.Counts[i])
				}
				for range n {
					dp.Value = v
					points = append(points, dp)
				}
			}
		case d.StatisticValues != nil:
			// The store keeps raw values: a statistic set stands as its
			// mean, SampleCount times, which keeps Sum, SampleCount and
			// Average (not Minimum and Maximum) as published.
			if n := int(d.StatisticValues.SampleCount); n > 0 {
				dp.Value = d.StatisticValues.Sum / float64(n)
				for range n {
					points = append(points, dp)
				}
			}
		default:
			return nil, senderError("MissingParameter", "The parameter MetricData.member.Value is required for %s.", d.MetricName)
		}
	}
	if err := c.store.AddAll(points...); err != nil {
		return nil, invalidParameter("%v", err)
	}
	return nil, nil
}

func (c *CloudWatch) getMetricStatistics(_ context.Context, input []byte) (cbor.Value, error) {
	var in struct {
		Namespace, MetricName, Unit    string
		Dimensions                     []cwDimension
		StartTime, EndTime             float64
		Period                         int
		Statistics, ExtendedStatistics []string
	}
	if err := decodeJSON(input, &in); err != nil {
		return nil, err
	}
	if in.Period <= 0 || len(in.Statistics)+len(in.ExtendedStatistics) == 0 {
		return nil, invalidParameter("GetMetricStatistics needs a Period and at least one statistic")
	}
	metric := alarmeval.Metric{Namespace: in.Namespace, MetricName: in.MetricName}
	for _, d := range in.Dimensions {
		metric.Dimensions = append(metric.Dimensions, alarmeval.Dimension{Name: d.Name, Value: d.Value})
	}
	type point struct {
		values   cbor.Map
		extended cbor.Map
	}
	byTime := map[time.Time]*point{}
	for _, name := range slices.Concat(in.Statistics, in.ExtendedStatistics) {
		stat, err := alarmeval.ParseStatistic(name)
		if err != nil {
			return nil, invalidParameter("%v", err)
		}
		series, err := c.store.StatSeries(alarmeval.MetricStat{Metric: metric, Stat: stat, Period: time.Duration(in.Period) * time.Second, Unit: in.Unit},
			epochTime(in.StartTime), epochTime(in.EndTime), alarmeval.Options{})
		if err != nil {
			return nil, invalidParameter("%v", err)
		}
		extended := slices.Contains(in.ExtendedStatistics, name)
		for _, p := range series {
			pt := byTime[p.Time]
			if pt == nil {
				pt = &point{values: cbor.Map{"Timestamp": cborTime(p.Time)}, extended: cbor.Map{}}
				byTime[p.Time] = pt
			}
			if extended {
				pt.extended[name] = cbor.Float64(p.Value)
			} else {
				pt.values[name] = cbor.Float64(p.Value)
			}
		}
	}
	times := slices.Collect(maps.Keys(byTime))
	slices.SortFunc(times, time.Time.Compare)
	datapoints := cbor.List{}
	for _, t := range times {
		pt := byTime[t]
		if len(pt.extended) > 0 {
			pt.values["ExtendedStatistics"] = pt.extended
		}
		if in.Unit != "" {
			pt.values["Unit"] = cbor.String(in.Unit)
		}
		datapoints = append(datapoints, pt.values)
	}
	return cbor.Map{"Label": cbor.String(in.MetricName), "Datapoints": datapoints}, nil
}

func (c *CloudWatch) alarmARN(name string) string {
	return "arn:aws:cloudwatch:" + c.opts.Region + ":" + c.opts.AccountID + ":alarm:" + name
}

func (c *CloudWatch) describeAlarms(_ context.Context, input []byte) (cbor.Value, error) {
	var in struct {
		AlarmNames                  []string
		AlarmNamePrefix, StateValue string
	}
	if err := decodeJSON(input, &in); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	names := slices.Collect(maps.Keys(c.alarms))
	sort.Strings(names)
	alarms := cbor.List{}
	for _, name := range names {
		a := c.alarms[name]
		if (len(in.AlarmNames) > 0 && !slices.Contains(in.AlarmNames, name)) || !strings.HasPrefix(name, in.AlarmNamePrefix) || (in.StateValue != "" && in.StateValue != a.state) {
			continue
		}
		alarms = append(alarms, cbor.Map{
			"AlarmName":             cbor.String(a.Name),
			"AlarmArn":              cbor.String(c.alarmARN(a.Name)),
			"ActionsEnabled":        cbor.Bool(true),
			"AlarmActions":          cborStrings(a.Actions),
			"OKActions":             cborStrings(a.OKActions),
			"Namespace":             cbor.String(a.Namespace),
			"MetricName":            cbor.String(a.MetricName),
			"StateValue":            cbor.String(a.state),
			"StateReason":           cbor.String(a.reason),
			"StateUpdatedTimestamp": cborTime(a.updated),
		})
	}
	return cbor.Map{"MetricAlarms": alarms, "CompositeAlarms": cbor.List{}}, nil
}

func (c *CloudWatch) setAlarmState(ctx context.Context, input []byte) (cbor.Value, error) {
	var in struct{ AlarmName, StateValue, StateReason, StateReasonData string }
	if err := decodeJSON(input, &in); err != nil {
		return nil, err
	}
	if in.StateReasonData != "" && !json.Valid([]byte(in.StateReasonData)) {
		return nil, senderError("InvalidFormat", "StateReasonData is not valid JSON")
	}
	if in.StateValue != StateOK && in.StateValue != StateAlarm && in.StateValue != StateInsufficientData {
		return nil, invalidParameter("StateValue %q: want OK, ALARM or INSUFFICIENT_DATA", in.StateValue)
	}
	c.mu.Lock()
	a := c.alarms[in.AlarmName]
	if a == nil {
		c.mu.Unlock()
		return nil, senderError("ResourceNotFound", "Alarm %s does not exist", in.AlarmName)
	}
	notice := AlarmNotice{Alarm: a.Name, OldState: a.state, NewState: in.StateValue, Reason: in.StateReason, At: c.opts.Now()}
	a.state, a.reason, a.updated = in.StateValue, in.StateReason, notice.At
	var actions []string
	if notice.OldState != notice.NewState {
		switch in.StateValue {
		case StateAlarm:
			actions = a.Actions
		case StateOK:
			actions = a.OKActions
		}
	}
	c.mu.Unlock()
	if c.opts.Notify != nil {
		for _, action := range actions {
			if err := c.opts.Notify(ctx, action, notice); err != nil {
				return nil, fmt.Errorf("alarm action %s: %w", action, err)
			}
		}
	}
	return nil, nil
}
