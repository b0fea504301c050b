package alarmeval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// ErrNotEMF reports a line that is not an Embedded Metric Format record (an
// ordinary log line, or JSON without the "_aws" metadata). CloudWatch Logs
// keeps such lines as logs and extracts no metric from them.
var ErrNotEMF = errors.New("alarmeval: not an Embedded Metric Format record")

// emfRecord is the part of an EMF document that says what to extract.
type emfRecord struct {
	AWS *struct {
		Timestamp         *float64
		CloudWatchMetrics []struct {
			Namespace  string
			Dimensions [][]string
			Metrics    []struct {
				Name string
				Unit string
			}
		}
	} `json:"_aws"`
}

// AddEMF stores the metrics of one Embedded Metric Format record, as
// CloudWatch Logs extracts them: for every metric directive, every metric,
// and every dimension set, one metric whose dimensions are that set's
// members with their values from the record's root; a value may be a number
// or a list of numbers (each a sample). It returns ErrNotEMF (wrapped) for
// a line that is not an EMF record, and an error naming the field for a
// malformed one, in which case nothing of the record is stored.
func (s *Store) AddEMF(line []byte) error {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return ErrNotEMF
	}
	var root map[string]json.RawMessage
	if err := json.Unmarshal(line, &root); err != nil {
		return fmt.Errorf("%w: %v", ErrNotEMF, err)
	}
	if _, ok := root["_aws"]; !ok {
		return ErrNotEMF
	}
	var rec emfRecord
	if err := json.Unmarshal(line, &rec); err != nil {
		return fmt.Errorf("alarmeval: EMF record: %w", err)
	}
	if rec.AWS.Timestamp == nil {
		return errors.New("alarmeval: EMF record: _aws.Timestamp is missing")
	}
	ts := time.UnixMilli(int64(*rec.AWS.Timestamp)).UTC()
	if len(rec.AWS.CloudWatchMetrics) == 0 {
		return errors.New("alarmeval: EMF record: _aws.CloudWatchMetrics is empty")
	}

	var dps []Datapoint
	for i, dir := range rec.AWS.CloudWatchMetrics {
		where := fmt.Sprintf("_aws.CloudWatchMetrics[%d]", i)
		if dir.Namespace == "" {
			return fmt.Errorf("alarmeval: EMF record: %s.Namespace is missing", where)
		}
		sets := dir.Dimensions
		if len(sets) == 0 {
			sets = [][]string{{}} // no dimensions: one metric without any
		}
		for _, m := range dir.Metrics {
			values, err := emfValues(root[m.Name])
			if err != nil {
				return fmt.Errorf("alarmeval: EMF record: metric %s: %w", m.Name, err)
			}
			for j, set := range sets {
				dims := make(map[string]string, len(set))
				for _, name := range set {
					var v string
					if err := json.Unmarshal(root[name], &v); err != nil || v == "" {
						return fmt.Errorf("alarmeval: EMF record: %s.Dimensions[%d]: member %q is not a non-empty string", where, j, name)
					}
					dims[name] = v
				}
				for _, v := range values {
					dps = append(dps, Datapoint{Namespace: dir.Namespace, MetricName: m.Name, Dimensions: dims, Timestamp: ts, Value: v, Unit: m.Unit})
				}
			}
		}
	}
	return s.AddAll(dps...)
}

func emfValues(raw json.RawMessage) ([]float64, error) {
	if raw == nil {
		return nil, errors.New("no value in the record")
	}
	var one float64
	if err := json.Unmarshal(raw, &one); err == nil {
		return []float64{one}, nil
	}
	var many []float64
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, fmt.Errorf("value %s is neither a number nor a list of numbers", raw)
	}
	return many, nil
}

// AddEMFLog stores the EMF records of a function's output, one per line,
// skipping the lines that are not EMF (ordinary logs). It returns how many
// records it stored and the first malformed record's error.
func (s *Store) AddEMFLog(r io.Reader) (records int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024) // EMF records reach 100 metrics x 100 values
	for sc.Scan() {
		switch err := s.AddEMF(sc.Bytes()); {
		case err == nil:
			records++
		case errors.Is(err, ErrNotEMF):
		default:
			return records, err
		}
	}
	if err := sc.Err(); err != nil {
		return records, fmt.Errorf("alarmeval: read EMF log: %w", err)
	}
	return records, nil
}
