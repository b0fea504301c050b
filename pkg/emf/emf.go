// Package emf writes CloudWatch metrics in the Embedded Metric Format: JSON
// log lines that CloudWatch Logs turns into metrics, so a Lambda publishes
// metrics by printing to stdout, without PutMetricData calls.
//
// A Recorder collects values with Add and writes them with Flush, one line
// per distinct dimension set, within the format's limits (at most 100
// metrics per line and 100 values per metric; more are split over lines).
// Dimension values are valid by construction: one that breaks CloudWatch's
// rules (1 to 1,024 ASCII characters, no control character, not blank),
// which CloudWatch would drop with its metric, is published as a safe
// stand-in and logged once.
package emf

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
)

// Unit is a CloudWatch metric unit.
type Unit string

// Units the pipeline uses.
const (
	Count        Unit = "Count"
	Milliseconds Unit = "Milliseconds"
	Seconds      Unit = "Seconds"
	None         Unit = "None"
)

// Limits of the Embedded Metric Format.
const (
	MaxMetricsPerDocument = 100
	MaxValuesPerMetric    = 100
	MaxDimensions         = 30
)

// Dim is one dimension added to a single Add.
type Dim struct {
	Name  string
	Value string
}

// Recorder accumulates metric values until Flush. It is safe for
// concurrent use.
type Recorder struct {
	w         io.Writer
	namespace string
	dims      map[string]string
	now       func() time.Time
	logger    *slog.Logger

	mu      sync.Mutex
	sets    map[string]*dimensionSet // by canonical key
	order   []string                 // set keys in first-use order
	invalid []error                  // values Add refused since the last Flush
}

// dimensionSet holds the metrics of one combination of dimension values.
type dimensionSet struct {
	dims    []Dim     // sorted by name
	metrics []*metric // in first-use order
}

type metric struct {
	name   string
	unit   Unit
	values []float64
}

// Options configure a Recorder.
type Options struct {
	// Logger receives the line about a dimension value published as a
	// stand-in. Default slog.Default().
	Logger *slog.Logger
}

// New returns a Recorder writing to w in namespace, with dims on every
// metric (e.g. {"Pipeline": "prod"}).
func New(w io.Writer, namespace string, dims map[string]string, optFns ...func(*Options)) *Recorder {
	var o Options
	for _, fn := range optFns {
		fn(&o)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Recorder{w: w, namespace: namespace, dims: dims, now: time.Now, logger: o.Logger, sets: map[string]*dimensionSet{}}
}

// Add records one value of metric name. extraDims apply to this value only
// (overriding a base dimension of the same name); values with different
// dimensions go to different lines. A dimension value CloudWatch would
// refuse is replaced by a stand-in (see standIn). A value that cannot be
// published (empty name, NaN or infinite value, a name equal to a
// dimension's, a dimension name CloudWatch refuses, too many dimensions) is
// dropped and reported by the next Flush.
func (r *Recorder) Add(name string, unit Unit, value float64, extraDims ...Dim) {
	dims := r.mergeDims(extraDims)
	err := validate(name, value, dims)

	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.invalid = append(r.invalid, err)
		return
	}
	key := setKey(dims)
	set, ok := r.sets[key]
	if !ok {
		set = &dimensionSet{dims: dims}
		r.sets[key] = set
		r.order = append(r.order, key)
	}
	for _, m := range set.metrics {
		if m.name == name {
			m.values = append(m.values, value)
			return
		}
	}
	set.metrics = append(set.metrics, &metric{name: name, unit: unit, values: []float64{value}})
}

func (r *Recorder) mergeDims(extra []Dim) []Dim {
	merged := make(map[string]string, len(r.dims)+len(extra))
	for k, v := range r.dims {
		merged[k] = v
	}
	for _, d := range extra {
		merged[d.Name] = d.Value
	}
	dims := make([]Dim, 0, len(merged))
	for k, v := range merged {
		dims = append(dims, Dim{Name: k, Value: safeDimensionValue(r.logger, k, v)})
	}
	slices.SortFunc(dims, func(a, b Dim) int { return strings.Compare(a.Name, b.Name) })
	return dims
}

func validate(name string, value float64, dims []Dim) error {
	switch {
	case name == "" || name == "_aws":
		return fmt.Errorf("metric name %q is not allowed", name)
	case math.IsNaN(value) || math.IsInf(value, 0):
		return fmt.Errorf("metric %s: value %v cannot be published", name, value)
	case len(dims) > MaxDimensions:
		return fmt.Errorf("metric %s: %d dimensions, at most %d", name, len(dims), MaxDimensions)
	}
	for _, d := range dims {
		if d.Name == name {
			return fmt.Errorf("metric %s has the name of a dimension", name)
		}
		if why := checkDimensionName(d.Name); why != "" {
			return fmt.Errorf("metric %s: dimension name %q %s", name, d.Name, why)
		}
	}
	return nil
}

// setKey identifies a dimension set; names and values are JSON-quoted so no
// two different sets share a key.
func setKey(dims []Dim) string {
	var b strings.Builder
	for _, d := range dims {
		fmt.Fprintf(&b, "%q=%q;", d.Name, d.Value)
	}
	return b.String()
}

// Flush writes everything added since the last Flush, one JSON line per
// document, and clears it. It returns the write error, joined with the
// reasons values were dropped by Add.
func (r *Recorder) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	timestamp := r.now().UnixMilli()
	var errs []error
	for _, key := range r.order {
		for _, doc := range documents(r.namespace, timestamp, r.sets[key]) {
			line, err := json.Marshal(doc)
			if err != nil {
				errs = append(errs, fmt.Errorf("encode metrics: %w", err))
				continue
			}
			if _, err := r.w.Write(append(line, '\n')); err != nil {
				errs = append(errs, fmt.Errorf("write metrics: %w", err))
				break
			}
		}
	}
	errs = append(errs, r.invalid...)
	r.sets, r.order, r.invalid = map[string]*dimensionSet{}, nil, nil
	return errors.Join(errs...)
}

// documents splits one dimension set into EMF documents that respect the
// per-document metric limit and the per-metric value limit.
func documents(namespace string, timestamp int64, set *dimensionSet) []map[string]any {
	dimNames := make([]string, len(set.dims))
	for i, d := range set.dims {
		dimNames[i] = d.Name
	}
	var docs []map[string]any
	for batch := range slices.Chunk(set.metrics, MaxMetricsPerDocument) {
		for round := 0; ; round++ {
			doc := map[string]any{}
			for _, d := range set.dims {
				doc[d.Name] = d.Value
			}
			var defs []map[string]string
			for _, m := range batch {
				lo := round * MaxValuesPerMetric
				if lo >= len(m.values) {
					continue
				}
				doc[m.name] = m.values[lo:min(lo+MaxValuesPerMetric, len(m.values))]
				defs = append(defs, map[string]string{"Name": m.name, "Unit": string(m.unit)})
			}
			if len(defs) == 0 {
				break
			}
			doc["_aws"] = map[string]any{
				"Timestamp": timestamp,
				"CloudWatchMetrics": []map[string]any{{
					"Namespace":  namespace,
					"Dimensions": [][]string{dimNames},
					"Metrics":    defs,
				}},
			}
			docs = append(docs, doc)
		}
	}
	return docs
}
