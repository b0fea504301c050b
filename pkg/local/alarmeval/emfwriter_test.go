package alarmeval

import (
	"strings"
	"testing"
	"time"
)

// A function's output, written in pieces that split lines: EMF records are
// stored (restamped when Now is set), log lines skipped, a malformed record
// reported and the rest kept.
func TestEMFWriterStoresRecordsOfAStream(t *testing.T) {
	record := `{"_aws":{"Timestamp":1736121600000,"CloudWatchMetrics":[{"Namespace":"Geo","Dimensions":[["Pipeline"]],"Metrics":[{"Name":"ImagesFailed"}]}]},"Pipeline":"prod","ImagesFailed":1}`
	malformed := `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[]}}`
	stream := record + "\n" + `{"level":"INFO","msg":"batch done"}` + "\nnot json at all\n" + malformed + "\n" + record + "\n" + record

	simulated := time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		now  func() time.Time
		at   time.Time
	}{
		{"as stamped", nil, time.UnixMilli(1736121600000)},
		{"restamped", func() time.Time { return simulated }, simulated},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStore()
			var errs []error
			w := &EMFWriter{Store: s, Now: tt.now, OnError: func(err error) { errs = append(errs, err) }}
			for i := 0; i < len(stream); i += 7 {
				if n, err := w.Write([]byte(stream[i:min(i+7, len(stream))])); err != nil || n == 0 {
					t.Fatalf("write: %d, %v", n, err)
				}
			}
			// The last record has no newline yet: not stored.
			prod := map[string]string{"Pipeline": "prod"}
			if got := s.values(sel("Geo", "ImagesFailed", prod), tt.at, tt.at.Add(time.Millisecond), tt.at); len(got) != 2 {
				t.Errorf("%d values at %s, want the 2 complete records", len(got), tt.at)
			}
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), "CloudWatchMetrics") {
				t.Errorf("errors %v, want the malformed record's", errs)
			}
			w.Write([]byte("\n"))
			if s.Len() != 3 {
				t.Errorf("%d values after the last newline, want 3", s.Len())
			}
		})
	}
}
