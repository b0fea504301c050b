package alarmeval

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/emf"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

func sel(namespace, name string, dims map[string]string) selector {
	return selector{key: metricKey{namespace, name}, dims: dims}
}

func valuesOf(s *Store, namespace, name string, dims map[string]string) []float64 {
	return s.values(sel(namespace, name, dims), time.Time{}, time.Unix(1<<40, 0), time.Unix(1<<40, 0))
}

// One record, two dimension sets: each set is its own metric, with every
// value of the list a sample.
func TestAddEMF(t *testing.T) {
	s := NewStore()
	line := `{"_aws":{"Timestamp":1736121600000,"CloudWatchMetrics":[{"Namespace":"Geo",
		"Dimensions":[["Pipeline"],["Pipeline","Reason"]],
		"Metrics":[{"Name":"ImagesFailed","Unit":"Count"},{"Name":"Latency","Unit":"Milliseconds"}]}]},
		"Pipeline":"prod","Reason":"service_error","ImagesFailed":[1,1],"Latency":12.5,"requestId":"abc"}`
	if err := s.AddEMF([]byte(line)); err != nil {
		t.Fatal(err)
	}
	prod := map[string]string{"Pipeline": "prod"}
	byReason := map[string]string{"Pipeline": "prod", "Reason": "service_error"}
	for _, tt := range []struct {
		name string
		dims map[string]string
		want []float64
	}{
		{"ImagesFailed", prod, []float64{1, 1}},
		{"ImagesFailed", byReason, []float64{1, 1}},
		{"Latency", prod, []float64{12.5}},
		{"ImagesFailed", map[string]string{"Pipeline": "other"}, nil},
		{"ImagesFailed", map[string]string{"Reason": "service_error"}, nil},
	} {
		if got := valuesOf(s, "Geo", tt.name, tt.dims); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %v = %v, want %v", tt.name, tt.dims, got, tt.want)
		}
	}
	if s.Len() != 6 {
		t.Errorf("%d values stored, want 6", s.Len())
	}
	// The timestamp is the record's, to the millisecond, and the unit kept.
	got := s.values(selector{key: metricKey{"Geo", "Latency"}, dims: prod, unit: "Milliseconds"},
		time.UnixMilli(1736121600000), time.UnixMilli(1736121600001), time.UnixMilli(1736121600000))
	if len(got) != 1 {
		t.Errorf("latency at its timestamp with its unit: %v", got)
	}
}

// The functions' own emitter: its lines parse into the metrics the
// alarms read, the per-reason copy apart from the total.
func TestAddEMFFromTheFunctionsRecorder(t *testing.T) {
	var out bytes.Buffer
	rec := emf.New(&out, metricnames.DefaultNamespace, map[string]string{metricnames.DimPipeline: "prod"})
	rec.Add(metricnames.ImagesFailed, emf.Count, 1)
	rec.Add(metricnames.ImagesFailed, emf.Count, 1, emf.Dim{Name: metricnames.DimReason, Value: "out_of_credits"})
	rec.Add(metricnames.OutOfCredits, emf.Count, 1)
	rec.Add(metricnames.ServiceLatency, emf.Milliseconds, 250)
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	out.WriteString("START RequestId: 1234 Version: $LATEST\nnot json at all\n{\"level\":\"info\",\"msg\":\"plain JSON log\"}\n")

	s := NewStore()
	n, err := s.AddEMFLog(&out)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("%d records, want 2 (one per dimension set)", n)
	}
	prod := map[string]string{metricnames.DimPipeline: "prod"}
	for name, want := range map[string][]float64{
		metricnames.ImagesFailed:   {1},
		metricnames.OutOfCredits:   {1},
		metricnames.ServiceLatency: {250},
	} {
		if got := valuesOf(s, metricnames.DefaultNamespace, name, prod); !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	withReason := map[string]string{metricnames.DimPipeline: "prod", metricnames.DimReason: "out_of_credits"}
	if got := valuesOf(s, metricnames.DefaultNamespace, metricnames.ImagesFailed, withReason); !reflect.DeepEqual(got, []float64{1}) {
		t.Errorf("by reason = %v", got)
	}
}

func TestAddEMFRefusesMalformedRecords(t *testing.T) {
	tests := map[string]string{
		`{"_aws":{"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[],"Metrics":[{"Name":"M"}]}]},"M":1}`:                          "Timestamp is missing",
		`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[]}}`:                                                                            "CloudWatchMetrics is empty",
		`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Dimensions":[],"Metrics":[{"Name":"M"}]}]},"M":1}`:                            "Namespace is missing",
		`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[],"Metrics":[{"Name":"M"}]}]}}`:                  "metric M: no value",
		`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[],"Metrics":[{"Name":"M"}]}]},"M":"x"}`:          "neither a number nor a list",
		`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["D"]],"Metrics":[{"Name":"M"}]}]},"M":1,"D":3}`: `member "D" is not a non-empty string`,
		`{"_aws":{"Timestamp":"soon","CloudWatchMetrics":[]}}`:                                                                       "EMF record",
		// CloudWatch drops a metric whose dimension value breaks its rules.
		`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["D"]],"Metrics":[{"Name":"M"}]}]},"M":1,"D":"glöbal"}`:                            "not ASCII",
		`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["D"]],"Metrics":[{"Name":"M"}]}]},"M":1,"D":"a\tb"}`:                              "control character",
		`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["D"]],"Metrics":[{"Name":"M"}]}]},"M":1,"D":"   "}`:                               "only whitespace",
		`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[":D"]],"Metrics":[{"Name":"M"}]}]},"M":1,":D":"x"}`:                               "starts with a colon",
		`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["D"]],"Metrics":[{"Name":"M"}]}]},"M":1,"D":"` + strings.Repeat("x", 1025) + `"}`: "longer than 1,024",
	}
	for line, want := range tests {
		s := NewStore()
		err := s.AddEMF([]byte(line))
		if err == nil || !strings.Contains(err.Error(), want) || errors.Is(err, ErrNotEMF) {
			t.Errorf("%s: %v, want %q", line, err, want)
		}
		if s.Len() != 0 {
			t.Errorf("%s: stored %d values of a refused record", line, s.Len())
		}
	}
	for _, line := range []string{"", "hello", `{"msg":"log"}`, `{broken`} {
		if err := NewStore().AddEMF([]byte(line)); !errors.Is(err, ErrNotEMF) {
			t.Errorf("%q: %v, want ErrNotEMF", line, err)
		}
	}
	if _, err := NewStore().AddEMFLog(strings.NewReader("log\n" + `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[]}}` + "\n")); err == nil {
		t.Error("AddEMFLog: a malformed record passed")
	}
}

func TestStoreAdd(t *testing.T) {
	s := NewStore()
	now := time.Unix(1000, 0)
	for _, bad := range []Datapoint{
		{MetricName: "M", Timestamp: now},
		{Namespace: "N", Timestamp: now},
		{Namespace: "N", MetricName: "M"},
		{Namespace: "N", MetricName: "M", Timestamp: now, Value: 1 / zero()},
		{Namespace: "N", MetricName: "M", Timestamp: now, Dimensions: map[string]string{"D": ""}},
	} {
		if err := s.Add(bad); err == nil {
			t.Errorf("Add(%+v) accepted", bad)
		}
	}
	// Out-of-order values are kept in time order.
	for _, sec := range []int64{30, 10, 20, 40, 5} {
		if err := s.Add(Datapoint{Namespace: "N", MetricName: "M", Timestamp: time.Unix(sec, 0), Value: float64(sec)}); err != nil {
			t.Fatal(err)
		}
	}
	got := s.values(sel("N", "M", map[string]string{}), time.Unix(10, 0), time.Unix(40, 0), time.Unix(30, 0))
	if !reflect.DeepEqual(got, []float64{10, 20, 30}) {
		t.Errorf("values in [10, 40) as of 30 = %v, want [10 20 30]", got)
	}
}

func zero() float64 { return 0 }
