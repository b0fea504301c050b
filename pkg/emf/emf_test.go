package emf_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/emf"
)

// document is one decoded EMF line, checked against the format's rules.
type document struct {
	timestamp  int64
	namespace  string
	dimensions []string
	units      map[string]string
	members    map[string]json.RawMessage
}

func decode(t *testing.T, out []byte) []document {
	t.Helper()
	var docs []document
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var members map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &members); err != nil {
			t.Fatalf("line is not a JSON object: %v\n%s", err, sc.Text())
		}
		var meta struct {
			Timestamp         *int64
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		}
		if err := json.Unmarshal(members["_aws"], &meta); err != nil || meta.Timestamp == nil || len(meta.CloudWatchMetrics) != 1 {
			t.Fatalf("bad _aws member (%v): %s", err, members["_aws"])
		}
		directive := meta.CloudWatchMetrics[0]
		if len(directive.Dimensions) != 1 {
			t.Fatalf("want one dimension set, got %v", directive.Dimensions)
		}
		if n := len(directive.Metrics); n == 0 || n > emf.MaxMetricsPerDocument {
			t.Fatalf("%d metrics in one document", n)
		}
		doc := document{timestamp: *meta.Timestamp, namespace: directive.Namespace, dimensions: directive.Dimensions[0],
			units: map[string]string{}, members: members}
		for _, d := range doc.dimensions {
			var v string
			if err := json.Unmarshal(members[d], &v); err != nil {
				t.Fatalf("dimension %s is not a top-level string member: %s", d, members[d])
			}
		}
		for _, m := range directive.Metrics {
			doc.units[m.Name] = m.Unit
			if n := len(doc.values(t, m.Name)); n == 0 || n > emf.MaxValuesPerMetric {
				t.Fatalf("metric %s has %d values", m.Name, n)
			}
		}
		docs = append(docs, doc)
	}
	return docs
}

func (d document) values(t *testing.T, name string) []float64 {
	t.Helper()
	var vs []float64
	if err := json.Unmarshal(d.members[name], &vs); err != nil {
		t.Fatalf("metric %s is not a top-level array of numbers: %s", name, d.members[name])
	}
	return vs
}

func (d document) dim(name string) string {
	var v string
	_ = json.Unmarshal(d.members[name], &v)
	return v
}

func TestFlushWritesOneLinePerDimensionSet(t *testing.T) {
	var out bytes.Buffer
	r := emf.New(&out, "Geolocation", map[string]string{"Pipeline": "prod"})
	before := time.Now().UnixMilli()
	r.Add("ImagesSucceeded", emf.Count, 1)
	r.Add("ImagesSucceeded", emf.Count, 1)
	r.Add("ServiceLatency", emf.Milliseconds, 812.5)
	r.Add("ImagesRejected", emf.Count, 1, emf.Dim{Name: "Reason", Value: "too_large"})
	r.Add("ImagesRejected", emf.Count, 2, emf.Dim{Name: "Reason", Value: "not_image"})
	r.Add("ModelReady", emf.None, 0, emf.Dim{Name: "Pipeline", Value: "override"})
	if err := r.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	after := time.Now().UnixMilli()

	docs := decode(t, out.Bytes())
	if len(docs) != 4 {
		t.Fatalf("%d lines, want 4 (base, two reasons, overridden pipeline):\n%s", len(docs), out.String())
	}
	base := docs[0]
	if base.namespace != "Geolocation" || strings.Join(base.dimensions, ",") != "Pipeline" || base.dim("Pipeline") != "prod" {
		t.Errorf("base document: namespace %q dimensions %v pipeline %q", base.namespace, base.dimensions, base.dim("Pipeline"))
	}
	if base.timestamp < before || base.timestamp > after {
		t.Errorf("timestamp %d outside [%d, %d]", base.timestamp, before, after)
	}
	if got := base.values(t, "ImagesSucceeded"); len(got) != 2 || got[0] != 1 || got[1] != 1 {
		t.Errorf("ImagesSucceeded = %v, want [1 1]", got)
	}
	if base.units["ImagesSucceeded"] != "Count" || base.units["ServiceLatency"] != "Milliseconds" {
		t.Errorf("units = %v", base.units)
	}
	if got := base.values(t, "ServiceLatency"); len(got) != 1 || got[0] != 812.5 {
		t.Errorf("ServiceLatency = %v", got)
	}
	for i, reason := range []string{"too_large", "not_image"} {
		d := docs[1+i]
		if strings.Join(d.dimensions, ",") != "Pipeline,Reason" || d.dim("Reason") != reason || d.dim("Pipeline") != "prod" {
			t.Errorf("reason document %d: dimensions %v reason %q", i, d.dimensions, d.dim("Reason"))
		}
		if _, ok := d.members["ImagesSucceeded"]; ok {
			t.Errorf("reason document %d carries metrics of another dimension set", i)
		}
	}
	if docs[3].dim("Pipeline") != "override" || docs[3].values(t, "ModelReady")[0] != 0 {
		t.Errorf("extra dimension did not override the base one: %s", docs[3].members["Pipeline"])
	}

	out.Reset()
	if err := r.Flush(); err != nil || out.Len() != 0 {
		t.Errorf("second Flush wrote %q (err %v), want nothing", out.String(), err)
	}
}

func TestFlushSplitsAtFormatLimits(t *testing.T) {
	var out bytes.Buffer
	r := emf.New(&out, "NS", nil)
	for i := range 250 {
		r.Add("Latency", emf.Milliseconds, float64(i))
	}
	for i := range 150 {
		r.Add("M"+string(rune('A'+i/26))+string(rune('a'+i%26)), emf.Count, 1)
	}
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	docs := decode(t, out.Bytes()) // decode enforces the per-document limits
	var latency []float64
	metrics := 0
	for _, d := range docs {
		if _, ok := d.members["Latency"]; ok {
			latency = append(latency, d.values(t, "Latency")...)
		}
		metrics += len(d.units)
	}
	if len(latency) != 250 {
		t.Fatalf("%d latency values across documents, want 250", len(latency))
	}
	for i, v := range latency {
		if v != float64(i) {
			t.Fatalf("latency value %d = %v, want %d (order kept)", i, v, i)
		}
	}
	if metrics != 151+2 { // 151 names, Latency again in its 2nd and 3rd rounds
		t.Errorf("%d metric definitions across documents, want 153", metrics)
	}
}

func TestAddDropsUnpublishableValues(t *testing.T) {
	var out bytes.Buffer
	r := emf.New(&out, "NS", map[string]string{"Pipeline": "p"})
	r.Add("Good", emf.Count, 1)
	r.Add("Bad", emf.Count, math.NaN())
	r.Add("Pipeline", emf.Count, 1)
	r.Add("", emf.Count, 1)
	err := r.Flush()
	if err == nil || !strings.Contains(err.Error(), "Bad") || !strings.Contains(err.Error(), "name of a dimension") {
		t.Errorf("Flush error = %v, want the dropped values reported", err)
	}
	docs := decode(t, out.Bytes())
	if len(docs) != 1 || len(docs[0].units) != 1 || docs[0].units["Good"] != "Count" {
		t.Errorf("documents = %+v, want only Good", docs)
	}
}

func TestConcurrentAdd(t *testing.T) {
	var out bytes.Buffer
	r := emf.New(&out, "NS", nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				r.Add("Hits", emf.Count, 1)
			}
		}()
	}
	wg.Wait()
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, d := range decode(t, out.Bytes()) {
		total += len(d.values(t, "Hits"))
	}
	if total != 400 {
		t.Errorf("%d values flushed, want 400", total)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestFlushReportsWriteErrors(t *testing.T) {
	r := emf.New(failingWriter{}, "NS", nil)
	r.Add("X", emf.Count, 1)
	if err := r.Flush(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Flush error = %v, want the write error", err)
	}
}
