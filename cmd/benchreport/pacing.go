package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/bench"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
)

// Goals of the pacing comparison (issue 13), and against the service's own
// limiter (issue 30).
const (
	goalPacedShare      = 0.97 // of R, against a strict limiter and against burst N
	goalPaced429        = 0.01 // of calls, against a strict limiter
	goalSettledShare    = 0.90 // of the real rate, configured at twice it
	goalSettled429      = 0.05
	misconfiguredFactor = 2.0
	// Against the sliding log of whole seconds, with the service's clock
	// off the instances' (issue 38): the margin is kept only while the
	// pacer does not know where the service's seconds begin.
	goalSlidingShare = 0.995 // of R
	goalSliding429   = 0.005 // of calls: each costs every instance the rest of a window
	// maxServiceOffset bounds the random offset of the service's clock
	// from the instances' in each sliding-log run.
	maxServiceOffset = 2 * time.Second
	// lambdaSkew spreads the instances' clocks over ±5 ms, so that any two
	// are within 10 ms of each other, as Lambda's are (the headline's skew
	// runs, issue 38); the -pacing-skew runs are information.
	lambdaSkew = 5 * time.Millisecond
)

// pacingOptions shape the comparison: the same load, side by side, for
// per-instance and shared pacing; then shared pacing against the service's
// sliding log.
type pacingOptions struct {
	Rate      float64 // R, requests per minute
	Instances []int
	Duration  time.Duration
	Skew      time.Duration

	// The runs against the sliding log of whole seconds, at the service's
	// real numbers (30 per 60 s): one per N, all at once (each is light at
	// 30 a minute, and together they take one Duration of wall time).
	SlidingRate      float64
	SlidingInstances []int
	SlidingDuration  time.Duration
}

// limiter is the simulator's rate limit for the run, on its clock (set
// ServiceOffset from the instances').
func (c throughputConfig) limiter() func(*geosim.Config) {
	limit := geosim.WithRateLimit(c.RatePerMinute, c.SimBurst)
	if c.SlidingLog {
		limit = geosim.WithSlidingLog(c.RatePerMinute)
	}
	return func(sc *geosim.Config) {
		limit(sc)
		geosim.WithClockOffset(c.ServiceOffset)(sc)
	}
}

// pacerOptions tune the shared pacers for the run's limiter: against a
// token bucket, which does not count whole seconds, they do not aim at the
// service's seconds (pacer.Options.IgnoreServiceClock).
func (c throughputConfig) pacerOptions() []func(*pacer.Options) {
	if c.SlidingLog {
		return nil
	}
	return []func(*pacer.Options){func(o *pacer.Options) { o.IgnoreServiceClock = true }}
}

// pacingRun is one run of the comparison.
type pacingRun struct {
	Kind   string // "compare", "misconfigured", "skew"
	Result *throughputResult
}

func parseInstances(s string) ([]int, error) {
	var ns []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("instances %q: want a comma-separated list of positive integers", s)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// measurePacing runs shared pacing against the service's sliding log, one
// run per N at once; then, for each N, both pacings against a strict
// limiter (burst 1) and against burst N; then both with the rate configured
// at twice the real one; then shared pacing with skewed clocks.
func measurePacing(ctx context.Context, e *localEnv, st stack, base throughputConfig, po pacingOptions, progress func(string, ...any)) ([]pacingRun, error) {
	runs, err := measureSliding(ctx, e, st, base, po, progress)
	if err != nil {
		return runs, err
	}
	run := func(kind string, tc throughputConfig) error {
		progress("pacing: %s, N=%d, burst %d, %s pacing, configured %.0f/min, skew ±%v",
			kind, tc.Instances, tc.SimBurst, tc.Pacing, tc.configuredRate(), tc.Skew)
		res, err := measureThroughput(ctx, e, st, tc, progress)
		if err != nil {
			return err
		}
		runs = append(runs, pacingRun{Kind: kind, Result: res})
		return ctx.Err()
	}
	tc := base
	tc.RatePerMinute, tc.Duration = po.Rate, po.Duration
	pacings := []string{predictor.PacingInstance, predictor.PacingShared}
	for _, n := range po.Instances {
		for _, burst := range []int{1, n} {
			for _, pacing := range pacings {
				c := tc
				c.Instances, c.SimBurst, c.Pacing = n, burst, pacing
				if err := run("compare", c); err != nil {
					return runs, err
				}
			}
		}
	}
	mid := po.Instances[len(po.Instances)/2]
	for _, pacing := range pacings {
		c := tc
		c.Instances, c.SimBurst, c.Pacing, c.ConfiguredRate = mid, 1, pacing, misconfiguredFactor*tc.RatePerMinute
		if err := run("misconfigured", c); err != nil {
			return runs, err
		}
	}
	skews := []struct {
		kind string
		skew time.Duration
	}{{"skew", lambdaSkew}, {"skew-info", po.Skew}}
	for _, sk := range skews {
		if sk.skew <= 0 || (sk.kind == "skew-info" && sk.skew == lambdaSkew) {
			continue
		}
		for _, n := range po.Instances {
			c := tc
			c.Instances, c.SimBurst, c.Pacing, c.Skew = n, 1, predictor.PacingShared, sk.skew
			if err := run(sk.kind, c); err != nil {
				return runs, err
			}
		}
	}
	return runs, nil
}

// measureSliding runs shared pacing against the sliding log of whole
// seconds for every N at the same time, in real time: DynamoDB Local takes
// the pacers' conditional writes as it would one run's, and at 30 a minute
// the runs barely share the machine.
func measureSliding(ctx context.Context, e *localEnv, st stack, base throughputConfig, po pacingOptions, progress func(string, ...any)) ([]pacingRun, error) {
	if len(po.SlidingInstances) == 0 || po.SlidingDuration <= 0 {
		return nil, nil
	}
	results := make([]*throughputResult, len(po.SlidingInstances))
	errs := make([]error, len(po.SlidingInstances))
	var wg sync.WaitGroup
	for i, n := range po.SlidingInstances {
		c := base
		c.RatePerMinute, c.Duration, c.Instances, c.Pacing, c.SlidingLog = po.SlidingRate, po.SlidingDuration, n, predictor.PacingShared, true
		c.ServiceOffset = time.Duration(rand.Int64N(int64(2*maxServiceOffset)+1)) - maxServiceOffset
		progress("pacing: sliding log of whole seconds, %.0f per 60 s, N=%d, shared pacing, for %v, the service's clock %+v off",
			c.RatePerMinute, n, c.Duration, c.ServiceOffset.Round(time.Millisecond))
		wg.Go(func() { results[i], errs[i] = measureThroughput(ctx, e, st, c, progress) })
		// Runs are told apart by their start time (keys, schedule).
		time.Sleep(10 * time.Millisecond)
	}
	wg.Wait()
	var runs []pacingRun
	for i, res := range results {
		if errs[i] != nil {
			return runs, errs[i]
		}
		runs = append(runs, pacingRun{Kind: "sliding", Result: res})
	}
	return runs, ctx.Err()
}

func share429(t *throughputResult) float64 { return float64(t.Status429) / float64(max(t.Calls, 1)) }

func rateShare(t *throughputResult) float64 { return t.AchievedPerMinute / t.Config.RatePerMinute }

// pacedGoal reports whether a shared-pacing run meets its goal.
func pacedGoal(t *throughputResult) bool {
	ok := rateShare(t) >= goalPacedShare && t.Lost == 0
	if t.Config.SimBurst == 1 {
		ok = ok && share429(t) <= goalPaced429
	}
	return ok
}

// slidingGoal: against the service's own limiter, at least 99.5% of R and
// at most 0.5% of calls refused.
func slidingGoal(t *throughputResult) bool {
	return rateShare(t) >= goalSlidingShare && share429(t) <= goalSliding429 && t.Lost == 0
}

func settledGoal(t *throughputResult) bool {
	s := t.Settled
	return s.OK && s.PerMinute >= goalSettledShare*t.Config.RatePerMinute && s.Share429 <= goalSettled429 && t.Lost == 0
}

func limiterName(c throughputConfig) string {
	if c.SlidingLog {
		return "sliding log of whole seconds"
	}
	if c.SimBurst == 1 {
		return "strict (burst 1)"
	}
	return fmt.Sprintf("burst %d", c.SimBurst)
}

func (r *results) pacingSection(p func(string, ...any)) {
	if len(r.Pacing) == 0 {
		return
	}
	r.slidingSection(p)
	compared := r.pacingRuns("compare")
	if len(compared) == 0 || compared[0].Config.RatePerMinute == 0 {
		return
	}
	first := compared[0].Config
	p("\n## Pacing: one shared schedule against per-instance limiters\n\n")
	p("The same load, side by side: uploads arrive at R = %.0f/min for %v while N instances (each its own handler, as Lambda runs them) drain the queue against the simulator's limiter, answering after L = %v. ", first.RatePerMinute, first.Duration, first.Latency)
	p("*Instance* is the previous design: each instance paces itself at R/N. *Shared* is `pkg/pacer`: one schedule item in the results table, one conditional write per slot, moved by every 429. 1/R + L = %.0f ms is the least upload-to-record time without a backlog.\n\n", bench.Ms(time.Duration(float64(time.Minute)/first.RatePerMinute)+first.Latency))
	p("| N | Service limiter | Pacing | Achieved (of R) | 429s (of calls) | Upload to record p50 / p99 | Pacer writes per image | Lost | Goal |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, t := range compared {
		goal := "-"
		if t.Config.Pacing == predictor.PacingShared {
			goal = verdict(pacedGoal(t))
		}
		p("| %d | %s | %s | %.1f/min (%.1f%%) | %d of %d (%.1f%%) | %.0f / %.0f ms | %.2f | %d | %s |\n",
			t.Config.Instances, limiterName(t.Config), t.Config.Pacing, t.AchievedPerMinute, 100*rateShare(t),
			t.Status429, t.Calls, 100*share429(t), bench.Ms(t.UploadToRecord.Median), bench.Ms(t.UploadToRecord.P99),
			float64(t.PacerWrites)/float64(max(t.Succeeded, 1)), t.Lost, goal)
	}
	p("\nGoal for shared pacing: at least %.0f%% of R against both limiters, and at most %.0f%% of calls answered 429 against the strict one.\n", 100*goalPacedShare, 100*goalPaced429)

	p("\n### Rate configured at twice the real one\n\n")
	p("GEO_RATE_PER_MINUTE is %.0fx the simulator's limit (strict). *Settled* is the first call after which every window of %d calls has at most %.0f%% of 429s.\n\n", misconfiguredFactor, settleWindow, 100*settleMax429)
	p("| N | Pacing | Settled after | Calls before settling | Accepted rate once settled (of the real R) | 429s once settled | Lost | Goal |\n|---|---|---|---|---|---|---|---|\n")
	for _, t := range r.pacingRuns("misconfigured") {
		s := t.Settled
		goal := "-"
		if t.Config.Pacing == predictor.PacingShared {
			goal = verdict(settledGoal(t))
		}
		if !s.OK {
			p("| %d | %s | never | - | - | %d of %d calls (%.1f%%) overall | %d | %s |\n", t.Config.Instances, t.Config.Pacing, t.Status429, t.Calls, 100*share429(t), t.Lost, goal)
			continue
		}
		p("| %d | %s | %s | %d | %.1f/min (%.1f%%) | %.1f%% | %d | %s |\n", t.Config.Instances, t.Config.Pacing,
			s.After.Round(100*time.Millisecond), s.CallsTo, s.PerMinute, 100*s.PerMinute/t.Config.RatePerMinute, 100*s.Share429, t.Lost, goal)
	}
	p("\nGoal for shared pacing: at least %.0f%% of the real rate, at most %.0f%% of 429s once settled.\n", 100*goalSettledShare, 100*goalSettled429)

	skewed := append(r.pacingRuns("skew"), r.pacingRuns("skew-info")...)
	if len(skewed) == 0 {
		return
	}
	p("\n### Clocks skewed\n\n")
	p("Each instance's pacer reads its own clock, spread evenly over ±skew; strict limiter, shared pacing. ±%v puts any two clocks within %v of each other, as Lambda's instances' are (the goal); wider skews are information, not a target: a slot read on a clock late by the skew and the next on one early by it are 2 x skew closer than the spacing, and a strict limiter refuses the second unless the spacing's guard (`pacer.DefaultGuard`, %v) covers it.\n\n", lambdaSkew, 2*lambdaSkew, pacer.DefaultGuard)
	p("| N | Skew | Achieved (of R) | 429s (of calls) | Upload to record p50 / p99 | Lost | Goal |\n|---|---|---|---|---|---|---|\n")
	for _, t := range skewed {
		goal := "info"
		if t.Config.Skew == lambdaSkew {
			goal = verdict(pacedGoal(t))
		}
		p("| %d | ±%v | %.1f/min (%.1f%%) | %d of %d (%.1f%%) | %.0f / %.0f ms | %d | %s |\n", t.Config.Instances, t.Config.Skew, t.AchievedPerMinute, 100*rateShare(t),
			t.Status429, t.Calls, 100*share429(t), bench.Ms(t.UploadToRecord.Median), bench.Ms(t.UploadToRecord.P99), t.Lost, goal)
	}
}

// aimedFrom is when a run's shared pacers first aimed a slot at the
// service's seconds, dropping the window margin, counted from the run's
// first upload, and how many slots were granted with the margin in all
// (ok false: none was aimed).
func aimedFrom(t *throughputResult) (after time.Duration, marginSlots int64, ok bool) {
	var first time.Time
	for _, st := range t.Pacers {
		marginSlots += st.Slots - st.AimedSlots
		if !st.FirstAimed.IsZero() && (first.IsZero() || st.FirstAimed.Before(first)) {
			first = st.FirstAimed
		}
	}
	if first.IsZero() {
		return 0, marginSlots, false
	}
	return first.Sub(t.Started), marginSlots, true
}

// pacingRuns is the results of the pacing runs of kind, in run order.
func (r *results) pacingRuns(kind string) []*throughputResult {
	var runs []*throughputResult
	for _, run := range r.Pacing {
		if run.Kind == kind {
			runs = append(runs, run.Result)
		}
	}
	return runs
}

// slidingSection reports shared pacing against the service's own limiter.
func (r *results) slidingSection(p func(string, ...any)) {
	runs := r.pacingRuns("sliding")
	if len(runs) == 0 {
		return
	}
	c := runs[0].Config
	p("\n## Pacing against the service's limiter: a sliding log of whole seconds\n\n")
	p("The service's public backend limits each key to %.0f predictions per 60 s with a log of whole-second timestamps: entries at or below now - 60 are dropped, a call is counted, a refused one is removed again, and its 429 asks to wait the rest of the window (`pkg/local/geosim`, `LimiterSlidingLog`). ", c.RatePerMinute)
	p("Uploads arrive at R = %.0f/min for %v; N instances, each its own handler, share one schedule (`pkg/pacer`). The service's clock is off the instances' by a random amount up to ±%v, drawn per run; its Date header and its whole seconds follow its clock. ", c.RatePerMinute, c.Duration, maxServiceOffset)
	p("While the pacer does not know where the service's seconds begin, it spreads R slots over 61 s rather than 60 (`DefaultWindowMargin`: the truncation to whole seconds makes the window up to a second longer seen from the caller; %.1f%% of R). ", 100*60.0/61)
	p("It learns it from the Date of the answers: each bounds the service's clock minus its own to [Date - received, Date + 1 s - sent]; the intersection of the bounds, shared in the schedule item, is the estimate, and while it is wider than %v slots are delayed (by at most 0.4 s) so that the next answer's Date halves it. Once it is narrower, each call is placed in a safe window of one of the service's seconds (from half the estimate's width plus 150 ms after its tick to half the width plus 200 ms before the next, less the held-slot lateness for a slot that may be held): a slot inside it goes at once, one before it waits for its start, one past it goes at the next tick; the next slot follows the latest second the call can be counted in, and R slots fill exactly 60 s (`pkg/pacer`, phase.go's placing). *Margin dropped after* is when the first aimed slot was taken, from the run's first upload, and how many slots were granted with the margin. The service answers after L = %v. All runs go at once, in real time.\n\n",
		pacer.DefaultPhaseTolerance, c.Latency)
	p("| N | Service clock offset | Achieved (of R) | 429s (of calls) | Margin dropped after | Upload to record p50 / p99 | Pacer writes per image | Lost | Goal |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, t := range runs {
		dropped := "never"
		if after, margin, ok := aimedFrom(t); ok {
			dropped = fmt.Sprintf("%.1f s, %d slots", after.Seconds(), margin)
		}
		p("| %d | %+.3f s | %.2f/min (%.1f%%) | %d of %d (%.1f%%) | %s | %.0f / %.0f ms | %.2f | %d | %s |\n", t.Config.Instances, t.Config.ServiceOffset.Seconds(),
			t.AchievedPerMinute, 100*rateShare(t), t.Status429, t.Calls, 100*share429(t), dropped,
			bench.Ms(t.UploadToRecord.Median), bench.Ms(t.UploadToRecord.P99),
			float64(t.PacerWrites)/float64(max(t.Succeeded, 1)), t.Lost, verdict(slidingGoal(t)))
	}
	p("\nGoal: at least %.1f%% of R and at most %.1f%% of calls answered 429 (a 429 against this limiter costs the rest of a window for every instance).\n", 100*goalSlidingShare, 100*goalSliding429)
}

// pacingRows summarise the shared runs in the headline.
func (r *results) pacingRows() []row {
	var rows []row
	for _, kind := range []string{"sliding", "compare", "misconfigured", "skew"} {
		runs := slices.DeleteFunc(r.pacingRuns(kind), func(t *throughputResult) bool {
			return t.Config.Pacing != predictor.PacingShared
		})
		if len(runs) == 0 {
			continue
		}
		ok, worst, oneThrottle := true, "", true
		for _, t := range runs {
			good := pacedGoal(t)
			switch kind {
			case "misconfigured":
				good = settledGoal(t)
			case "sliding":
				good = slidingGoal(t)
			}
			if !good {
				ok = false
				worst += fmt.Sprintf("N=%d %s: %.1f%% of R, %.1f%% 429; ", t.Config.Instances, limiterName(t.Config), 100*rateShare(t), 100*share429(t))
				oneThrottle = oneThrottle && t.Status429 == 1
			}
		}
		why := "see the pacing section"
		if !ok && oneThrottle && (kind == "compare" || kind == "skew") {
			why = fmt.Sprintf("each run that misses drew a single 429, within the 1%% allowed, and that one 429 cost the rate: it pauses every instance for the delay the service asks and widens the spacing by that delay's share of it, within %.0f%% and %.0f%% (`pacer.Throttled`), won back at %.2f%% per slot, so in a one-minute run of 120 calls it costs 1 to 2.5%% of R; the runs without one reach %.1f%%, the guard's ceiling; see the pacing section",
				100*pacer.DefaultMinWiden, 100*pacer.DefaultMaxWiden, 100*pacer.DefaultProbeStep, 100*guardCeiling(runs[0].Config.RatePerMinute))
		}
		figure := map[string]string{
			"sliding":       fmt.Sprintf("Shared pacing against the service's sliding log of whole seconds, %.0f/60 s, its clock up to ±%v off, N = %s, %v each", runs[0].Config.RatePerMinute, maxServiceOffset, instancesList(runs), runs[0].Config.Duration),
			"compare":       "Shared pacing, N = 2, 4, 10, strict and burst-N limiters",
			"misconfigured": "Shared pacing, rate configured at twice the real one",
			"skew":          fmt.Sprintf("Shared pacing, clocks within %v of each other (Lambda's; spread over ±%v), strict limiter", 2*lambdaSkew, lambdaSkew),
		}[kind]
		target := map[string]string{
			"sliding":       ">= 99.5% of R; <= 0.5% 429",
			"compare":       ">= 97% of R; <= 1% 429 (strict)",
			"misconfigured": ">= 90% of R and <= 5% 429 once settled",
			"skew":          ">= 97% of R; <= 1% 429",
		}[kind]
		measured := "all runs meet it (see the pacing section)"
		if !ok {
			measured = strings.TrimSuffix(worst, "; ")
		}
		rows = append(rows, row{figure, measured, target, verdict(ok), why})
	}
	return rows
}

// guardCeiling is the share of R the shared pacer reaches at most against a
// strict limiter, where it never aims: 1/R over its spacing with
// IgnoreServiceClock (pacer.Spacing: the guard's above 60 calls a minute).
func guardCeiling(ratePerMinute float64) float64 {
	strict := func(o *pacer.Options) { o.IgnoreServiceClock = true }
	return float64(time.Minute) / ratePerMinute / float64(pacer.Spacing(ratePerMinute, strict))
}

// instancesList is "1, 2, 4, 10" for the runs' N.
func instancesList(runs []*throughputResult) string {
	parts := make([]string, 0, len(runs))
	for _, t := range runs {
		parts = append(parts, strconv.Itoa(t.Config.Instances))
	}
	return strings.Join(parts, ", ")
}
