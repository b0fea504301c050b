package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// Records are the records of the run's uploads that have one, in upload
// order.
func (s *Summary) Records() []ledger.Record {
	var out []ledger.Record
	for _, r := range s.Results {
		if r.Record != nil {
			out = append(out, *r.Record)
		}
	}
	return out
}

// RecordSet answers ledger queries from records in memory, as the table's
// by-status index would: the records of a status (every indexed one when
// none is named) updated within the range,
// keys under a prefix, newest first, at most Limit. The local dashboard
// draws the map widget from a run's records through it, after the run's
// table is gone.
type RecordSet []ledger.Record

// Query implements the map widget's record source.
func (rs RecordSet) Query(_ context.Context, in ledger.QueryInput) ([]ledger.Record, error) {
	if in.Status != "" && !slices.Contains(ledger.Statuses, in.Status) {
		return nil, fmt.Errorf("query: unknown status %q", in.Status)
	}
	var out []ledger.Record
	for _, r := range rs {
		switch {
		case in.Status != "" && r.Status != in.Status,
			in.Status == "" && !ledger.Indexed(r.Status),
			!in.Since.IsZero() && r.UpdatedAt.Before(in.Since),
			!in.Until.IsZero() && r.UpdatedAt.After(in.Until),
			!strings.HasPrefix(r.Key, in.KeyPrefix):
			continue
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b ledger.Record) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	if in.Limit > 0 && len(out) > in.Limit {
		out = out[:in.Limit]
	}
	return out, nil
}
