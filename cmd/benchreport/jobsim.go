package main

import (
	"fmt"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/jobsim"
)

// jobsimResult is what the jobsim stage measured (issue 47): the job
// engine's proofs at a million objects on the simulated clock.
type jobsimResult struct {
	Rows    []*jobsim.Result
	Elapsed time.Duration
}

// measureJobsim runs jobsim.Proofs.
func measureJobsim(progress func(string, ...any)) (*jobsimResult, error) {
	start := time.Now()
	rows, err := jobsim.RunAll(jobsim.Proofs(), func(r *jobsim.Result) {
		ok, why := r.Met()
		progress("jobsim: %d objects at R=%.0f, concurrency %d: %s %s (%s)", r.Config.Objects, r.Config.Rate,
			r.Config.Concurrency, verdict(ok), why, r.Elapsed.Round(time.Second))
	})
	return &jobsimResult{Rows: rows, Elapsed: time.Since(start)}, err
}

func (r *results) jobsimRows() []row {
	s := r.Jobsim
	if s == nil {
		return nil
	}
	var rows []row
	for _, x := range s.Rows {
		c := x.Config
		ok, why := x.Met()
		rows = append(rows, row{
			figure: fmt.Sprintf("(47) A backfill of %d objects at %.0f/min, concurrency %d, live uploads at %.0f/min, on the simulated clock",
				c.Objects, c.Rate, c.Concurrency, c.LiveRate),
			measured: fmt.Sprintf("%d lost, %d expired, %d dead-lettered; %d credits for %d photos; finish %.4f x objects/job rate; ETA at 10%% %+.2f%%; queue %d / window %d; live p50 %.2f s (%.2f s without)",
				x.Lost, x.Expired, x.DeadLettered, x.Credits, x.Distinct, x.RatioJob(), 100*x.ETAError, x.MaxJobDepth, x.WindowMessages,
				x.LiveP50.Seconds(), x.LiveP50NoJob.Seconds()),
			target:  "0 lost/expired/DLQ, credits = photos, finish within 1%, ETA within 2%, queue <= window, live p50 within 1 s",
			verdict: verdict(ok),
			why:     why,
		})
	}
	return rows
}

func (r *results) jobsimSection(p func(string, ...any)) {
	s := r.Jobsim
	if s == nil {
		return
	}
	p("\n## Jobs at a million objects (issue 47)\n\n")
	p("`pkg/local/jobsim` runs the real job engine (`pkg/jobs`: the Store on minidyn, the Feeder every simulated minute) against a generated versioned bucket (ListObjectVersions pages of 1,000) and a simulated upload queue with the stack's retention, visibility timeout, DelaySeconds and redrive at dlqMaxReceiveCount; the predictor is the event source's instances taking their place in the shared schedule at the pacer's spacing, holding a slot beyond MaxSlotWait, and recording each object version once. Live uploads arrive at random at 5 a minute throughout; their p50 is set against a day of the same stack without the job. The job's rate is `jobs.Rate` (the pacer's rate's busy share, less the live uploads): the finish is judged against objects at that rate, and objects/R is shown beside it. Model time: %s.\n\n", s.Elapsed.Round(time.Second))
	p("%s\n", jobsim.Markdown(s.Rows))
}
