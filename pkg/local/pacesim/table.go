package pacesim

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/shared/configrules"
	"github.com/geolocate-aws/geolocate/pkg/shared/settings"
)

// Goals of a row against the service's own limiter (issue 48): at least
// GoalShare of R in the window, and no 429.
const GoalShare = 0.99

// Rates are the table's rates: the service's public backend's, the bench's,
// and every tenfold up to the highest the settings accept with shared
// pacing (configrules.MaxRatePerMinute).
var Rates = []float64{30, 600, 6000, configrules.MaxRatePerMinute}

// MaxInstances is the largest concurrency the stack lets a user set at
// ratePerMinute: maxConcurrency's bound (Lambda's SQS event source allows
// 1,000), the account's (an account may raise its quota to the setting's
// maximum), and the pacing rule's with the smallest batch and the longest
// timeout and the shortest reserve the settings accept (a round of batches
// must get its slots within an invocation).
func MaxInstances(ratePerMinute float64) int {
	n := min(int(settings.MaxConcurrency.Max), configrules.MaxConcurrencyFor(int(settings.AccountConcurrencyLimit.Max)))
	usable := configrules.UsableWait(time.Duration(settings.PredictorTimeoutSeconds.Max)*time.Second,
		time.Duration(settings.FinishReserveSeconds.Min)*time.Second)
	perSlot := 60 / ratePerMinute
	return min(n, int(usable.Seconds()/(perSlot*settings.BatchSize.Min)))
}

// Instances are the table's N at a rate: 1, 2, 10, 100 and 1,000, those
// the stack accepts, and the largest it accepts.
func Instances(ratePerMinute float64) []int {
	top := MaxInstances(ratePerMinute)
	var ns []int
	for _, n := range []int{1, 2, 10, 100, 1000} {
		if n < top {
			ns = append(ns, n)
		}
	}
	return append(ns, top)
}

// Size is how much of the table to run.
type Size int

const (
	// Small is the CI-sized table `make test` runs: one row per rate at a
	// concurrency that reaches it, against the service's limiter, short
	// windows (seconds of wall time in all).
	Small Size = iota
	// Full is every rate, every N and both limiters (make bench).
	Full
)

// span is the span measured at a rate: a minute at least (a whole window
// of the service's limiter), five for the 150 calls of 30 a minute; in
// Small 1,500 calls or 30 s, whichever is longer (the rate over a
// shorter window varies by a few calls).
func span(ratePerMinute float64, size Size) time.Duration {
	w := time.Minute
	if ratePerMinute <= 60 {
		w = 5 * time.Minute
	}
	if size == Small {
		w = min(w, max(time.Duration(1500/ratePerMinute*float64(time.Minute)), 30*time.Second))
	}
	return w
}

// Plan lists the runs of a table of size.
func Plan(size Size) []Config {
	var plan []Config
	if size == Small {
		for _, r := range Rates {
			// Enough instances to call at R: each worker makes about two
			// calls a second.
			n := max(2, int(math.Ceil(r/60/2/4*1.5)))
			plan = append(plan, Config{Rate: r, Instances: n, Duration: span(r, size), Seed: 1})
		}
		return plan
	}
	for _, r := range Rates {
		for _, lim := range []geosim.Limiter{geosim.LimiterSlidingLog, geosim.LimiterTokenBucket} {
			for _, n := range Instances(r) {
				plan = append(plan, Config{Rate: r, Instances: n, Limiter: lim, Duration: span(r, size), Seed: 1})
			}
		}
	}
	return plan
}

// Capacity is how many calls a minute n instances of workers can make at
// most, whatever the pacing: each worker holds one call at a time for the
// model's call time (receive, the work before the slot, the network, the
// upload and the service's answer, at their means).
func Capacity(n, workers int) float64 {
	mean := func(r [2]time.Duration) time.Duration { return (r[0] + r[1]) / 2 }
	call := mean(receiveTime) + mean(preworkTime) + 2*mean(networkLeg) + mean(uploadTime) + serviceLatency
	return float64(n*workers) * float64(time.Minute) / float64(call)
}

// Judged reports whether a row is held to the goal: against the service's
// own limiter, at a concurrency the stack accepts (maxConcurrency is at
// least 2; one instance is the local rig's).
func (r *Result) Judged() bool {
	return r.Config.Limiter != geosim.LimiterTokenBucket && float64(r.Config.Instances) >= settings.MaxConcurrency.Min
}

// maxBusy is the share of the time the instances' workers can be busy at
// R and still keep every slot taken: above it, random call times leave
// slots no worker was free to take, and the row is limited by its
// instances, not by the pacer.
const maxBusy = 0.9

// CapacityLimited reports whether a row's instances are too few to call at
// R (more than maxBusy of their capacity).
func (r *Result) CapacityLimited() bool {
	return Capacity(r.Config.Instances, r.Config.Workers)*maxBusy < r.Config.Rate
}

// Met reports whether a row meets the goal against the service's limiter:
// no 429, and at least GoalShare of R unless its instances are too few to
// call at R (CapacityLimited); why says what it misses.
func (r *Result) Met() (ok bool, why string) {
	switch {
	case r.Refused > 0:
		return false, fmt.Sprintf("%d 429s", r.Refused)
	case r.Share < GoalShare && !r.CapacityLimited():
		return false, fmt.Sprintf("%.1f%% of R", 100*r.Share)
	}
	return true, ""
}

// Markdown writes results as the table of docs/benchmarks.md.
func Markdown(results []*Result) string {
	var b strings.Builder
	b.WriteString("| R /min | N | limiter | share of R | 429s | writes / slot | conflicts / slot | reads / slot | write units /s (peak) | throttled | p99 take | holds | verdict |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		cfg := r.Config
		verdict := "meets"
		if ok, why := r.Met(); !ok {
			verdict = "misses: " + why
		} else if r.CapacityLimited() {
			verdict = "too few instances for R; no 429"
		}
		if !r.Judged() {
			verdict = "info"
		}
		share := fmt.Sprintf("%.1f%%", 100*r.Share)
		if r.CapacityLimited() {
			share += fmt.Sprintf(" (capacity %.0f%%)", 100*Capacity(cfg.Instances, cfg.Workers)/cfg.Rate)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %d | %.2f | %.2f | %.2f | %.0f (%.0f) | %d | %s | %d | %s |\n",
			thousands(cfg.Rate), cfg.Instances, limiterName(cfg.Limiter), share, r.Refused,
			r.WritesPerSlot, r.ConflictsPerSlot, r.ReadsPerSlot, r.WriteUnitsPerSecond, r.Store.PeakWriteUS,
			r.Store.Throttled, ms(r.TakeP99), r.Holds, verdict)
	}
	return b.String()
}

func limiterName(l geosim.Limiter) string {
	if l == geosim.LimiterTokenBucket {
		return "strict bucket"
	}
	return "sliding log"
}

func ms(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

func thousands(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// RunPlan runs every config of plan, in order, calling progress after each.
func RunPlan(plan []Config, progress func(*Result)) ([]*Result, error) {
	out := make([]*Result, 0, len(plan))
	for _, cfg := range plan {
		res, err := Run(cfg)
		if err != nil {
			return out, fmt.Errorf("pacesim: R=%v N=%d %s: %w", cfg.Rate, cfg.Instances, cfg.Limiter, err)
		}
		out = append(out, res)
		if progress != nil {
			progress(res)
		}
	}
	return out, nil
}

// Largest is, of the judged results, the highest rate every row of which
// met the goal (0: none).
func Largest(results []*Result) float64 {
	failed := map[float64]bool{}
	var rates []float64
	for _, r := range results {
		if !r.Judged() {
			continue
		}
		if !slices.Contains(rates, r.Config.Rate) {
			rates = append(rates, r.Config.Rate)
		}
		if ok, _ := r.Met(); !ok {
			failed[r.Config.Rate] = true
		}
	}
	best := 0.0
	for _, rate := range rates {
		if !failed[rate] {
			best = max(best, rate)
		}
	}
	return best
}
