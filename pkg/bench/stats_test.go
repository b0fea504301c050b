package bench

import (
	"testing"
	"time"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestSummarize(t *testing.T) {
	// 1..100 ms, shuffled: the order of the input must not matter.
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, ms((i*37)%100+1))
	}
	s := Summarize(ds)
	want := Stats{N: 100, Min: ms(1), Median: ms(50), Mean: 50*ms(1) + 500*time.Microsecond,
		P90: ms(90), P99: ms(99), Max: ms(100), Total: ms(5050)}
	if s != want {
		t.Errorf("Summarize = %+v\nwant        %+v", s, want)
	}
	if ds[1] != ms(64) {
		t.Errorf("Summarize modified its input: second element %v, want 64ms", ds[1])
	}
}

func TestPercentile(t *testing.T) {
	sorted := []time.Duration{ms(10), ms(20), ms(30), ms(40)}
	tests := []struct {
		p    float64
		want time.Duration
	}{
		{1, ms(10)}, {25, ms(10)}, {26, ms(20)}, {50, ms(20)}, {75, ms(30)}, {99, ms(40)}, {100, ms(40)},
	}
	for _, tt := range tests {
		if got := Percentile(sorted, tt.p); got != tt.want {
			t.Errorf("Percentile(%v) = %v, want %v", tt.p, got, tt.want)
		}
	}
	if got := Percentile(nil, 50); got != 0 {
		t.Errorf("Percentile(nil) = %v, want 0", got)
	}
	if got := Summarize(nil); got != (Stats{}) {
		t.Errorf("Summarize(nil) = %+v, want zero", got)
	}
}

func TestCPUTimeGrowsWithWork(t *testing.T) {
	before := CPUTime()
	deadline := time.Now().Add(30 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	if used := CPUTime() - before; used < 5*time.Millisecond {
		t.Errorf("30 ms of busy work used %v of CPU (x=%d)", used, x)
	}
}
