package main

import (
	"context"
	"fmt"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/pacesim"
	"github.com/geolocate-aws/geolocate/pkg/pacer"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
)

// scaleOptions shape the scale stage (issue 48): the model's full table,
// and one run of the throughput rig in real time at a high rate beside the
// model's row for the same R and N.
type scaleOptions struct {
	// Real is the real-time run; RatePerMinute 0 skips it.
	Real throughputConfig
}

// scaleResult is what the scale stage measured.
type scaleResult struct {
	Rows    []*pacesim.Row
	Elapsed time.Duration
	// Real is the real-time run and Model the model's row for it.
	Real  *throughputResult
	Model *pacesim.Result
}

// measureScale runs the model's table, then the real-time run and its
// model row.
func measureScale(ctx context.Context, e *localEnv, st stack, so scaleOptions, progress func(string, ...any)) (*scaleResult, error) {
	res := &scaleResult{}
	start := time.Now()
	rows, err := pacesim.RunPlan(pacesim.Plan(pacesim.Full), func(r *pacesim.Result) {
		c := r.Config
		progress("scale: model R=%.0f N=%d %s seed %d: %.2f%% of R, %d 429s, %.2f writes a slot (%s)",
			c.Rate, c.Instances, c.Limiter, c.Seed, 100*r.Share, r.Refused, r.WritesPerSlot, r.Elapsed.Round(time.Millisecond))
	})
	res.Rows, res.Elapsed = rows, time.Since(start)
	if err != nil || so.Real.RatePerMinute <= 0 || ctx.Err() != nil {
		return res, err
	}
	tc := so.Real
	tc.BatchSize = st.BatchSize
	progress("scale: the throughput rig in real time at %.0f/min, N=%d, for %v ...", tc.RatePerMinute, tc.Instances, tc.Duration)
	if res.Real, err = measureThroughput(ctx, e, st, tc, progress); err != nil {
		return res, err
	}
	res.Model, err = pacesim.Run(pacesim.Config{Rate: tc.RatePerMinute, Instances: tc.Instances, Load: pacesim.AtRate,
		Duration: tc.Duration, Seed: 1})
	return res, err
}

// realAccepted is the real-time run's achieved rate (succeeded records,
// first to last), its calls and its 429s.
func (s *scaleResult) realAccepted() (perMinute float64, calls, refused int) {
	t := s.Real
	return t.AchievedPerMinute, t.Calls, t.Status429
}

func (r *results) scaleHeadline() []row {
	s := r.Scale
	if s == nil || len(s.Rows) == 0 {
		return nil
	}
	worst, met, count, runs := 1.0, true, 0, 0 // worst: of the rows with instances enough for R
	var why string
	for _, x := range s.Rows {
		if !x.Judged() {
			continue
		}
		count++
		runs += len(x.Runs)
		if share := x.Worst().Share; share < worst && !x.CapacityLimited() {
			worst = share
		}
		if ok, w := x.Met(); !ok {
			met = false
			why += fmt.Sprintf("R=%.0f N=%d: %s; ", x.Config.Rate, x.Config.Instances, w)
		}
	}
	return []row{{
		figure:   "(48) Shared pacing modelled at every rate the settings accept (30 to 30,000/min) and N up to the stack's largest, against the sliding log, over several seeds a row",
		measured: fmt.Sprintf("%d rows (%d runs): %s; lowest share %.1f%% of R in any seed (of the rows with instances enough for R; the others no 429); largest rate met %s/min", count, runs, map[bool]string{true: "all meet it", false: "not all meet it"}[met], 100*worst, fmtRate(pacesim.Largest(s.Rows))),
		target:   ">= 99% of R, no 429, in every seed (rows with too few instances for R: no 429)",
		verdict:  verdict(met),
		why:      why,
	}}
}

func fmtRate(f float64) string { return fmt.Sprintf("%.0f", f) }

func (r *results) scaleSection(p func(string, ...any)) {
	s := r.Scale
	if s == nil {
		return
	}
	p("\n## Pacing at scale (issue 48)\n\n")
	p("A discrete-event model (`pkg/local/pacesim`) drives the real shared pacer (`pkg/pacer`: one schedule item up to %d calls a minute, a shard more per %d above) on a simulated clock: N instances of %d workers (the predictor's parallelism) each take, hold and call as `pkg/predictor` does, against a DynamoDB stand-in (minidyn's conditional writes, applied one at a time per item in arrival order, %v a write unit per item, a %v + log-normal(%v) round trip, %d write and %d read units a second for the schedule's partition, throttled beyond with the SDK's retries) and the service's limiter on its own clock (off by up to ±2 s, the instances' over ±5 ms). Uploads arrive faster than R (%.0f%% of it) after every worker has one; Lambda adds instances at 300 a minute, and the rate is measured for the window after the last has started (a minute and at least 500 calls). Each judged row runs %d seeds (%d for 1,000 instances above 600 a minute), the strict bucket's one; the share is the worst seed's (the median's in brackets), the 429s every seed's, the other figures the worst seed's. Model time: %s.\n\n",
		pacer.ItemRatePerMinute, pacer.ItemRatePerMinute, predictor.DefaultParallelism, pacesim.DefaultStoreLatency.PerWriteUnit,
		pacesim.DefaultStoreLatency.Base, pacesim.DefaultStoreLatency.Median, pacesim.PartitionWriteUnits, pacesim.PartitionReadUnits,
		100*1.25, pacesim.FullSeeds, pacesim.HeavySeeds, s.Elapsed.Round(time.Second))
	p("%s\n", pacesim.Markdown(s.Rows))
	p("Share is of R over the window; a row whose instances cannot make R calls a minute with their workers at most 90%% busy at the model's mean call time says so (capacity: what they make at most, as a share of R) and is held to no 429 only. Rows with one instance are the local rig's (the stack's maxConcurrency is at least 2). The strict bucket's rows are information: it refuses a call that lands less than 1/R after the one before, and the pacer keeps its guard only where it may (2.5%% of the spacing at most), so above a few hundred calls a minute the instances' clocks and timers alone draw 429s; the service's own limiter is the sliding log.\n")
	if s.Real == nil || s.Model == nil {
		return
	}
	perMinute, calls, refused := s.realAccepted()
	t, m := s.Real, s.Model
	c := t.Config
	p("\n**Real time beside the model.** The throughput rig (the real handlers, the local queue, gofakes3 and DynamoDB Local, the simulator's sliding log) at R = %.0f/min with N = %d, uploads at R for %v, and the model's row for the same R and N with uploads at R:\n\n", c.RatePerMinute, c.Instances, c.Duration)
	p("| | share of R | 429s | schedule writes / slot | conflicts / slot |\n|---|---|---|---|---|\n")
	p("| real time (DynamoDB Local) | %.1f%% (%.0f/min over %d calls) | %d | %.2f | %.2f |\n", 100*perMinute/c.RatePerMinute, perMinute, calls, refused,
		float64(t.PacerWrites)/float64(max(slots(t), 1)), float64(t.PacerConflicts)/float64(max(slots(t), 1)))
	p("| model | %.1f%% | %d | %.2f | %.2f |\n", 100*m.Share, m.Refused, m.WritesPerSlot, m.ConflictsPerSlot)
}

// slots is the slots the run's shared pacers granted.
func slots(t *throughputResult) int64 {
	var n int64
	for _, p := range t.Pacers {
		n += p.Slots
	}
	return n
}
