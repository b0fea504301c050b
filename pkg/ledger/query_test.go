package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
)

func TestQueryByStatusAndSince(t *testing.T) {
	s, clk, _, _ := newStore(t)
	ctx := context.Background()
	succeed := func(key string) {
		c := mustClaim(t, s, ref(key), ledger.ClaimAcquired)
		if err := s.Complete(ctx, c, ledger.Record{}); err != nil {
			t.Fatal(err)
		}
	}
	// Three days of activity, a few records each, at distinct times.
	succeed("day1-a.jpg") // 2026-03-14 09:26
	clk.Advance(time.Hour)
	if err := s.Reject(ctx, ref("day1-rejected.jpg"), "empty", "", ledger.ObjectInfo{}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(24 * time.Hour) // 2026-03-15 10:26
	succeed("day2-a.jpg")
	clk.Advance(time.Minute)
	succeed("day2-b.jpg")
	clk.Advance(24 * time.Hour) // 2026-03-16 10:27
	mustClaim(t, s, ref("day3-running.jpg"), ledger.ClaimAcquired)
	clk.Advance(time.Second)
	succeed("day3-a.jpg")

	tests := []struct {
		name string
		in   ledger.QueryInput
		want []string
	}{
		{"succeeded over three days", ledger.QueryInput{Status: ledger.StatusSucceeded, Since: start},
			[]string{"day3-a.jpg", "day2-b.jpg", "day2-a.jpg", "day1-a.jpg"}},
		{"since cuts within a day", ledger.QueryInput{Status: ledger.StatusSucceeded, Since: start.Add(25*time.Hour + 30*time.Second)},
			[]string{"day3-a.jpg", "day2-b.jpg"}},
		{"limit", ledger.QueryInput{Status: ledger.StatusSucceeded, Since: start, Limit: 3},
			[]string{"day3-a.jpg", "day2-b.jpg", "day2-a.jpg"}},
		{"all indexed statuses, merged newest first", ledger.QueryInput{Since: start},
			[]string{"day3-a.jpg", "day2-b.jpg", "day2-a.jpg", "day1-rejected.jpg", "day1-a.jpg"}},
		{"in progress: by a scan", ledger.QueryInput{Status: ledger.StatusInProgress, Since: start}, []string{"day3-running.jpg"}},
		{"in progress, since after it", ledger.QueryInput{Status: ledger.StatusInProgress, Since: start.Add(49*time.Hour + time.Minute + 500*time.Millisecond)}, nil},
		{"rejected", ledger.QueryInput{Status: ledger.StatusRejected, Since: start}, []string{"day1-rejected.jpg"}},
		{"zero since is today", ledger.QueryInput{}, []string{"day3-a.jpg"}},
		{"failed: none", ledger.QueryInput{Status: ledger.StatusFailed, Since: start}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, err := s.Query(ctx, tt.in)
			if err != nil {
				t.Fatalf("Query: %v", err)
			}
			var got []string
			for _, r := range recs {
				got = append(got, r.Key)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Query(%+v) = %q, want %q", tt.in, got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("Query(%+v) = %q, want %q", tt.in, got, tt.want)
				}
			}
		})
	}

	if _, err := s.Query(ctx, ledger.QueryInput{Status: "done"}); err == nil {
		t.Error("Query accepted an unknown status")
	}
	if _, err := s.Query(ctx, ledger.QueryInput{Since: start.AddDate(-2, 0, 0)}); err == nil {
		t.Error("Query accepted a Since beyond MaxQueryDays")
	}
}
