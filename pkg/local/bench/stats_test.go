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

// TestCPUTimeGrowsWithWork spins until CPUTime reports 10 ms more. A
// broken CPUTime never does; a loaded machine only makes it take longer
// (a wall-clock budget of busy work would be flaky there).
func TestCPUTimeGrowsWithWork(t *testing.T) {
	before := CPUTime()
	giveUp := time.Now().Add(20 * time.Second)
	x := 0
	for CPUTime()-before < 10*time.Millisecond {
		for range 100_000 {
			x++
		}
		if time.Now().After(giveUp) {
			t.Fatalf("20 s of busy work moved CPUTime by %v (x=%d)", CPUTime()-before, x)
		}
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -48860: "-48,860"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
