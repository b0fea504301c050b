package jobsim

import (
	"fmt"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/pacesim"

	"github.com/geolocate-aws/geolocate/pkg/local/bench"
)

// The bounds (47, Measured) a run is held to.
const (
	// FinishTolerance: the job finishes within 1% of its objects at its
	// rate.
	FinishTolerance = 0.01
	// ETATolerance: the ETA shown at 10% done is within 2% of the real
	// finish.
	ETATolerance = 0.02
	// LiveTolerance: a live upload's upload-to-record p50 stays within a
	// second of its no-job figure.
	LiveTolerance = time.Second
)

// ProofObjects is the job size.
const ProofObjects = 1_000_000

// Proofs are the two runs: a million objects at 30 a minute with
// the default concurrency, and at 600 a minute with the stack's largest
// concurrency at that rate (pacesim.MaxInstances: every instance can take
// its batch's slots within an invocation).
func Proofs() []Config {
	return []Config{
		{Objects: ProofObjects, Rate: 30, Seed: 1},
		{Objects: ProofObjects, Rate: 600, Concurrency: pacesim.MaxInstances(600), Seed: 1},
	}
}

// Small are the CI-sized runs make test asserts: the proofs' stacks at
// 5,000 objects at 30 a minute (five simulated hours) and 20,000 at 600
// (38 minutes: fewer and the first minute's spread weighs on the finish).
func Small() []Config {
	cs := Proofs()
	cs[0].Objects, cs[1].Objects = 5_000, 20_000
	return cs
}

// Met reports whether r meets the bounds, and why not.
func (r *Result) Met() (ok bool, why string) {
	var miss []string
	if r.Lost > 0 || r.Expired > 0 || r.DeadLettered > 0 {
		miss = append(miss, fmt.Sprintf("%d lost, %d expired, %d dead-lettered", r.Lost, r.Expired, r.DeadLettered))
	}
	if r.Credits != r.Distinct {
		miss = append(miss, fmt.Sprintf("%d credits for %d distinct photos", r.Credits, r.Distinct))
	}
	if r.Wrong > 0 {
		miss = append(miss, fmt.Sprintf("%d messages named a version the bucket does not hold", r.Wrong))
	}
	if d := r.RatioJob() - 1; d > FinishTolerance || d < -FinishTolerance {
		miss = append(miss, fmt.Sprintf("finished in %.3f x objects/job rate", r.RatioJob()))
	}
	if r.ETA10 == 0 || r.ETAError > ETATolerance || r.ETAError < -ETATolerance {
		miss = append(miss, fmt.Sprintf("ETA at 10%% off by %+.2f%%", 100*r.ETAError))
	}
	if r.MaxJobDepth > r.WindowMessages {
		miss = append(miss, fmt.Sprintf("queue held %d of the job's messages, window %d", r.MaxJobDepth, r.WindowMessages))
	}
	if r.LiveP50-r.LiveP50NoJob > LiveTolerance {
		miss = append(miss, fmt.Sprintf("live p50 %v against %v without the job", r.LiveP50, r.LiveP50NoJob))
	}
	if r.DoneAt == 0 {
		miss = append(miss, "the job never showed done")
	}
	if r.MaxCallsPerMinute > int(r.Config.Rate) {
		miss = append(miss, fmt.Sprintf("%d calls in 60 s at R=%v", r.MaxCallsPerMinute, r.Config.Rate))
	}
	return len(miss) == 0, strings.Join(miss, "; ")
}

// RunAll runs each config, calling progress after each.
func RunAll(cfgs []Config, progress func(*Result)) ([]*Result, error) {
	var out []*Result
	for _, c := range cfgs {
		r, err := Run(c)
		if err != nil {
			return out, fmt.Errorf("jobsim: %d objects at %v/min: %w", c.Objects, c.Rate, err)
		}
		if progress != nil {
			progress(r)
		}
		out = append(out, r)
	}
	return out, nil
}

// Markdown is the runs' table.
func Markdown(results []*Result) string {
	var b strings.Builder
	b.WriteString("| Objects | R | Concurrency | Job rate | Lost | Expired | Dead-lettered | Credits / distinct | Finish | x objects/R | x objects/job rate | Shown done | ETA at 10% | ETA error | Max job messages / window | Live p50 (no job) | Calls in any 60 s | Receives a message | Model time |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		c := r.Config
		fmt.Fprintf(&b, "| %s | %.0f | %d | %.2f/min | %d | %d | %d | %d / %d | %s | %.3f | %.4f | %s | %s | %+.2f%% | %d / %d | %s (%s) | %d | %.2f | %s |\n",
			bench.Thousands(c.Objects), c.Rate, c.Concurrency, r.JobRate, r.Lost, r.Expired, r.DeadLettered, r.Credits, r.Distinct,
			days(r.Finish), r.Ratio(), r.RatioJob(), days(r.DoneAt), days(r.ETA10), 100*r.ETAError, r.MaxJobDepth, r.WindowMessages,
			secs(r.LiveP50), secs(r.LiveP50NoJob), r.MaxCallsPerMinute, r.ReceivesPerMessage, r.Elapsed.Round(time.Second))
	}
	return b.String()
}

func days(d time.Duration) string {
	if d >= 48*time.Hour {
		return fmt.Sprintf("%.2f d", d.Hours()/24)
	}
	return fmt.Sprintf("%.2f h", d.Hours())
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
