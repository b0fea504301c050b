package main

import (
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/bench"
)

// 30% of the uploads are copies of an earlier photo, half of them sent at
// the same instant as the upload just before.
func TestPlanUploadsCopies(t *testing.T) {
	plan := planUploads(100, 0.3)
	seen := map[int]bool{}
	copies, same := 0, 0
	for i, u := range plan {
		if seen[u.content] {
			copies++
			if u.sameInstant {
				same++
				if plan[i-1].content != u.content {
					t.Errorf("upload %d is sent with %d but copies photo %d", i, i-1, u.content)
				}
			}
		} else if u.sameInstant {
			t.Errorf("upload %d is sent at the same instant but is no copy", i)
		}
		seen[u.content] = true
	}
	if copies != 30 || same != 15 || len(seen) != 70 {
		t.Errorf("copies %d (same instant %d), distinct %d; want 30 (15), 70", copies, same, len(seen))
	}
	for _, u := range planUploads(10, 0) {
		if u.sameInstant {
			t.Fatal("no copies asked, one planned")
		}
	}
}

// The headline judges credits against distinct photos, the ratio behind
// the service's latency against 1.05x only when measured at 200 ms, and
// upload to record against L + 500 ms.
func TestLatencyAndReuseRows(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	r := &results{
		OverheadAtLatency: &overheadResult{Config: overheadConfig{Latency: 200 * time.Millisecond},
			HandlerWall: bench.Stats{Median: ms(215)}, FloorWall: bench.Stats{Median: ms(205)}},
		Overhead: &overheadResult{HandlerWall: bench.Stats{Median: ms(14)}, FloorWall: bench.Stats{Median: ms(5)},
			ReuseOffWall: bench.Stats{N: 3, Median: ms(11)}},
		RealRate: &throughputResult{Config: throughputConfig{RatePerMinute: 30, Latency: 200 * time.Millisecond},
			Uploads: 10, UploadToRecord: bench.Stats{Median: ms(290), P99: ms(900)}},
		Reuse: &throughputResult{Config: throughputConfig{RatePerMinute: 30, Instances: 2, Copies: 0.3}, Uploads: 1000,
			Distinct: 700, Charged: 700, Reused: 300, SameInstantPairs: 150, PairsOnTwoInstances: 140,
			Usage: bench.Usage{Requests: map[string]int{"S3.GetObject": 1700},
				Items: map[string]bench.ItemUsage{contentPrefix: {Writes: 2000, TableUnits: 1400, Failed: 300}}}},
	}
	var b strings.Builder
	for _, x := range append(r.latencyRows(), r.reuseRows()...) {
		b.WriteString(x.figure + " | " + x.measured + " | " + x.target + " | " + x.verdict + "\n")
	}
	md := b.String()
	for _, want := range []string{
		"10.0 ms (215.0 ms / 205.0 ms) | none set | info",
		"measured: handler / floor, median wall time per image | 1.049x | <= 1.05x | PASS",
		"+3.0 ms (14.0 ms / 11.0 ms)",
		"290 ms / 900 ms | p50 <= 700 ms (L + 500ms) | PASS",
		"700 credits, 300 records reused | = 700 (one per distinct photo) | PASS",
		// 1,700 write units at $0.625 per million, 700 GETs at $0.0004 per thousand.
		"$0.00134 ($0.00106 content ledger, $0.00028 GETs)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("rows lack %q:\n%s", want, md)
		}
	}
	r.Reuse.Charged = 701
	r.OverheadAtLatency.HandlerWall.Median = ms(230)
	r.RealRate.UploadToRecord.Median = ms(701)
	b.Reset()
	for _, x := range append(r.latencyRows(), r.reuseRows()...) {
		b.WriteString(x.verdict + " " + x.figure + "\n")
	}
	if n := strings.Count(b.String(), "MISS"); n != 3 {
		t.Errorf("want 3 misses (ratio, upload to record, credits):\n%s", b.String())
	}
}
