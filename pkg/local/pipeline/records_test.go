package pipeline

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// RecordSet answers as the table's index would: status, range, prefix,
// newest first, limit.
func TestRecordSetQueriesLikeTheIndex(t *testing.T) {
	at := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	rec := func(key, status string, minutes int) ledger.Record {
		return ledger.Record{Key: key, Status: status, UpdatedAt: at.Add(time.Duration(minutes) * time.Minute)}
	}
	set := RecordSet{
		rec("a/1.jpg", ledger.StatusSucceeded, 0), rec("b/1.jpg", ledger.StatusSucceeded, 10),
		rec("a/2.jpg", ledger.StatusRejected, 20), rec("a/3.jpg", ledger.StatusSucceeded, 30),
		rec("c/1.jpg", ledger.StatusInProgress, 40), // a claim: not in the index
	}
	for _, tt := range []struct {
		name string
		in   ledger.QueryInput
		want []string
	}{
		{"everything, newest first", ledger.QueryInput{}, []string{"a/3.jpg", "a/2.jpg", "b/1.jpg", "a/1.jpg"}},
		{"a status", ledger.QueryInput{Status: ledger.StatusSucceeded}, []string{"a/3.jpg", "b/1.jpg", "a/1.jpg"}},
		{"a range, ends included", ledger.QueryInput{Since: at.Add(10 * time.Minute), Until: at.Add(20 * time.Minute)}, []string{"a/2.jpg", "b/1.jpg"}},
		{"a prefix and a limit", ledger.QueryInput{KeyPrefix: "a/", Limit: 2}, []string{"a/3.jpg", "a/2.jpg"}},
		{"in progress, named", ledger.QueryInput{Status: ledger.StatusInProgress}, []string{"c/1.jpg"}},
	} {
		got, err := set.Query(context.Background(), tt.in)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, r := range got {
			keys = append(keys, r.Key)
		}
		if !slices.Equal(keys, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, keys, tt.want)
		}
	}
	if _, err := set.Query(context.Background(), ledger.QueryInput{Status: "lost"}); err == nil {
		t.Errorf("an unknown status: no error")
	}
	if n := len((&Summary{Results: []Result{{Record: &set[0]}, {}}}).Records()); n != 1 {
		t.Errorf("Summary.Records: %d, want the one result with a record", n)
	}
}
