package ledger_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

// Until bounds a query from above (a dashboard's time range that ended in
// the past), and KeyPrefix keeps one folder of uploads; Limit then counts
// only what they keep.
func TestQueryUntilAndKeyPrefix(t *testing.T) {
	s, clk, _, _ := newStore(t)
	ctx := context.Background()
	succeed := func(key string) {
		c := mustClaim(t, s, ref(key), ledger.ClaimAcquired)
		if err := s.Complete(ctx, c, ledger.Record{}); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Hour)
	}
	succeed("a/1.jpg") // start
	succeed("b/1.jpg") // +1h
	succeed("a/2.jpg") // +2h
	clk.Advance(24 * time.Hour)
	succeed("a/3.jpg") // +27h, the next day
	succeed("b/2.jpg") // +28h

	keys := func(in ledger.QueryInput) []string {
		t.Helper()
		recs, err := s.Query(ctx, in)
		if err != nil {
			t.Fatalf("Query(%+v): %v", in, err)
		}
		var out []string
		for _, r := range recs {
			out = append(out, r.Key)
		}
		return out
	}
	for _, tt := range []struct {
		name string
		in   ledger.QueryInput
		want []string
	}{
		{"until the first day's end", ledger.QueryInput{Since: start, Until: start.Add(2 * time.Hour)}, []string{"a/2.jpg", "b/1.jpg", "a/1.jpg"}},
		{"a range inside a day", ledger.QueryInput{Since: start.Add(time.Minute), Until: start.Add(90 * time.Minute)}, []string{"b/1.jpg"}},
		{"until in the past, with a limit", ledger.QueryInput{Since: start, Until: start.Add(2 * time.Hour), Limit: 1}, []string{"a/2.jpg"}},
		{"a prefix", ledger.QueryInput{Since: start, KeyPrefix: "a/"}, []string{"a/3.jpg", "a/2.jpg", "a/1.jpg"}},
		{"a prefix and a limit: the limit counts matches", ledger.QueryInput{Since: start, KeyPrefix: "b/", Limit: 2}, []string{"b/2.jpg", "b/1.jpg"}},
		{"a prefix nothing has", ledger.QueryInput{Since: start, KeyPrefix: "c/"}, nil},
		{"until after now is now", ledger.QueryInput{Since: start, Until: start.Add(1000 * time.Hour), Status: ledger.StatusSucceeded}, []string{"b/2.jpg", "a/3.jpg", "a/2.jpg", "b/1.jpg", "a/1.jpg"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := keys(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if _, err := s.Query(ctx, ledger.QueryInput{Since: start.Add(time.Hour), Until: start}); err == nil {
		t.Errorf("until before since: no error")
	}
	if _, err := s.Query(ctx, ledger.QueryInput{Since: start.Add(-500 * 24 * time.Hour), Until: start}); err == nil {
		t.Errorf("a range of 500 days: no error")
	}
}
