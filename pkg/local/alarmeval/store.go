package alarmeval

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/emf"
)

// Datapoint is one published value of a metric.
type Datapoint struct {
	Namespace  string
	MetricName string
	// Dimensions identify the metric together with its name: CloudWatch
	// treats each distinct dimension set as a separate metric, so a value
	// published with {Pipeline, Reason} is not seen by an alarm on
	// {Pipeline}.
	Dimensions map[string]string
	Timestamp  time.Time
	Value      float64
	// Unit is optional; an alarm with a Unit only sees values with it.
	Unit string
}

// Store holds the metrics a local run publishes, as CloudWatch would hold
// them: raw values by metric, aggregated only when an alarm asks. It is safe
// for concurrent use, so emitters can add while the evaluator reads.
type Store struct {
	mu      sync.RWMutex
	metrics map[metricKey][]*series
}

type metricKey struct{ namespace, name string }

// series is one metric: a name and one dimension set.
type series struct {
	dims    map[string]string
	samples []sample // by time
}

type sample struct {
	t    time.Time
	v    float64
	unit string
}

// NewStore returns an empty store.
func NewStore() *Store { return &Store{metrics: map[metricKey][]*series{}} }

// Add stores one datapoint. It refuses what CloudWatch would refuse: no
// namespace or name, an empty dimension name or value, a value that is not
// a finite number, no timestamp.
func (s *Store) Add(dp Datapoint) error {
	switch {
	case dp.Namespace == "" || dp.MetricName == "":
		return fmt.Errorf("alarmeval: datapoint %q/%q: namespace and metric name are required", dp.Namespace, dp.MetricName)
	case math.IsNaN(dp.Value) || math.IsInf(dp.Value, 0):
		return fmt.Errorf("alarmeval: datapoint %s/%s: value %v is not a finite number", dp.Namespace, dp.MetricName, dp.Value)
	case dp.Timestamp.IsZero():
		return fmt.Errorf("alarmeval: datapoint %s/%s: no timestamp", dp.Namespace, dp.MetricName)
	}
	for k, v := range dp.Dimensions {
		// CloudWatch drops a metric whose dimension breaks its rules: the
		// rig must not accept what AWS would not.
		if err := emf.CheckDimension(k, v); err != nil {
			return fmt.Errorf("alarmeval: datapoint %s/%s: %w", dp.Namespace, dp.MetricName, err)
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	key := metricKey{dp.Namespace, dp.MetricName}
	var ser *series
	for _, candidate := range s.metrics[key] {
		if maps.Equal(candidate.dims, dp.Dimensions) {
			ser = candidate
			break
		}
	}
	if ser == nil {
		ser = &series{dims: maps.Clone(dp.Dimensions)}
		s.metrics[key] = append(s.metrics[key], ser)
	}
	smp := sample{t: dp.Timestamp, v: dp.Value, unit: dp.Unit}
	// Values mostly arrive in time order; insert in place when not.
	i := len(ser.samples)
	if i > 0 && ser.samples[i-1].t.After(dp.Timestamp) {
		i = sort.Search(len(ser.samples), func(j int) bool { return ser.samples[j].t.After(dp.Timestamp) })
	}
	ser.samples = slices.Insert(ser.samples, i, smp)
	return nil
}

// AddAll stores several datapoints, stopping at the first refused one.
func (s *Store) AddAll(dps ...Datapoint) error {
	for _, dp := range dps {
		if err := s.Add(dp); err != nil {
			return err
		}
	}
	return nil
}

// Len returns the number of values stored.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, list := range s.metrics {
		for _, ser := range list {
			n += len(ser.samples)
		}
	}
	return n
}

// selector picks the series an alarm's metric reads.
type selector struct {
	key metricKey
	// dims are matched exactly; anyValue names dimensions matched by key.
	dims     map[string]string
	anyValue map[string]bool
	unit     string
}

func (sel selector) matches(dims map[string]string) bool {
	if len(dims) != len(sel.dims)+len(sel.anyValue) {
		return false
	}
	for k, v := range sel.dims {
		if dims[k] != v {
			return false
		}
	}
	for k := range sel.anyValue {
		if _, ok := dims[k]; !ok {
			return false
		}
	}
	return true
}

// values returns the values of every series sel matches with a timestamp in
// [start, end) and not after asOf.
func (s *Store) values(sel selector, start, end, asOf time.Time) []float64 {
	if asOf.Before(end) {
		end = asOf.Add(time.Nanosecond)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []float64
	for _, ser := range s.metrics[sel.key] {
		if !sel.matches(ser.dims) {
			continue
		}
		i := sort.Search(len(ser.samples), func(j int) bool { return !ser.samples[j].t.Before(start) })
		for ; i < len(ser.samples) && ser.samples[i].t.Before(end); i++ {
			if sel.unit == "" || ser.samples[i].unit == sel.unit {
				out = append(out, ser.samples[i].v)
			}
		}
	}
	return out
}
