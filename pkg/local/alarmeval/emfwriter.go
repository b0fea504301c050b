package alarmeval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// EMFWriter is an io.Writer for a function's output that stores its
// Embedded Metric Format records, as CloudWatch Logs extracts metrics from
// a log stream: every complete line that is an EMF record goes to Store;
// other lines are logs and are skipped. It is safe for concurrent writes.
type EMFWriter struct {
	Store *Store
	// Now, if set, restamps every record with its time: a run on a
	// simulated clock publishes at the simulated time, while the functions
	// stamp records with the wall clock.
	Now func() time.Time
	// OnError, if set, receives each malformed record's error (a metric
	// the alarms expect would silently be missing otherwise).
	OnError func(error)

	mu      sync.Mutex
	partial []byte
}

// Write stores the complete lines of p; a partial last line waits for the
// rest. It never fails, as a log stream does not.
func (w *EMFWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := bytes.TrimSpace(w.partial[:i])
		w.partial = w.partial[i+1:]
		if len(line) == 0 {
			continue
		}
		if err := w.add(line); err != nil && w.OnError != nil {
			w.OnError(err)
		}
	}
}

func (w *EMFWriter) add(line []byte) error {
	if w.Now != nil {
		restamped, ok, err := restamp(line, w.Now())
		if err != nil || !ok {
			return err
		}
		line = restamped
	}
	if err := w.Store.AddEMF(line); err != nil && !errors.Is(err, ErrNotEMF) {
		return err
	}
	return nil
}

// restamp sets an EMF record's _aws.Timestamp to at; ok is false for a line
// that is not an EMF record.
func restamp(line []byte, at time.Time) (out []byte, ok bool, err error) {
	var record map[string]json.RawMessage
	if json.Unmarshal(line, &record) != nil || record["_aws"] == nil {
		return nil, false, nil
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(record["_aws"], &meta); err != nil {
		return nil, false, fmt.Errorf("EMF record: _aws: %w", err)
	}
	meta["Timestamp"], _ = json.Marshal(at.UnixMilli())
	record["_aws"], _ = json.Marshal(meta)
	out, err = json.Marshal(record)
	return out, err == nil, err
}
