package jobsim

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// The CI-sized proofs (Small): 30 a minute with the default concurrency
// and 600 a minute with the largest, through the real
// Feeder and Store, each held to the issue's bounds.
func TestTheSmallJobsMeetTheIssuesBounds(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates weeks of a job")
	}
	results, err := RunAll(Small(), func(r *Result) {
		t.Logf("%d objects at %v/min: %v wall, %d events", r.Config.Objects, r.Config.Rate, r.Elapsed.Round(time.Millisecond), r.Events)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", Markdown(results))
	for _, r := range results {
		if ok, why := r.Met(); !ok {
			t.Errorf("%d objects at R=%v, concurrency %d: %s", r.Config.Objects, r.Config.Rate, r.Config.Concurrency, why)
		}
	}
}

// The predictor model keeps the schedule: no 60 s ever holds more than R
// calls, and without a job a live upload is recorded within seconds.
func TestLiveUploadsAloneCallAtOnce(t *testing.T) {
	cfg := Config{Objects: 1, Rate: 30, Seed: 3, Baseline: 6 * time.Hour}.withDefaults()
	r := newRun(cfg, cfg.Seed)
	r.uploads(epoch.Add(cfg.Baseline))
	r.l.run(epoch.Add(cfg.Baseline+time.Hour), func() bool { return false })
	p50 := percentile(r.live, 0.5)
	if len(r.live) < 1500 || p50 > 2*time.Second || r.maxPerMinute > 30 {
		t.Errorf("%d uploads recorded, p50 %v, %d calls in a minute: want about 1,800, under 2 s, at most 30", len(r.live), p50, r.maxPerMinute)
	}
}

// A pause between two feeder runs stops the job's calls within a minute,
// its queued messages are dropped without a call, and after the resume the job still ends with
// every photo recorded once: what the pause dropped is fed again.
func TestAPausedJobStopsAndLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates a day of a job")
	}
	r, err := Run(Config{Objects: 3000, Rate: 30, Seed: 2, PauseAt: 30*time.Minute + 20*time.Second, PauseFor: 2 * time.Hour, Baseline: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", Markdown([]*Result{r}))
	if r.PausedCalls > 0 || r.Dropped == 0 {
		t.Errorf("%d calls while paused, %d messages dropped: want none and some", r.PausedCalls, r.Dropped)
	}
	if r.Lost > 0 || r.Expired > 0 || r.DeadLettered > 0 || r.Credits != r.Distinct || r.Wrong > 0 || r.DoneAt == 0 {
		t.Errorf("after the resume: %d lost, %d expired, %d dead-lettered, %d credits for %d photos, %d wrong, done at %v",
			r.Lost, r.Expired, r.DeadLettered, r.Credits, r.Distinct, r.Wrong, r.DoneAt)
	}
	// The pause's two hours are not made up for by a burst after it (the
	// feeder's carry is bounded by a minute's calls).
	if min := r.IdealJob + 2*time.Hour - 2*time.Minute; r.Finish < min {
		t.Errorf("finished in %v: less than the job's time at its rate plus the pause (%v)", r.Finish, min)
	}
}

// The issue's proofs at a million objects take tens of minutes: make
// bench runs them (cmd/benchreport's jobsim stage); JOBSIM_PROOF=1 here.
func TestTheProofs(t *testing.T) {
	if os.Getenv("JOBSIM_PROOF") == "" {
		t.Skip("JOBSIM_PROOF unset: make bench runs the proofs")
	}
	for _, c := range Proofs() {
		if n, err := strconv.Atoi(os.Getenv("JOBSIM_OBJECTS")); err == nil {
			c.Objects = n
		}
		if r, err := strconv.ParseFloat(os.Getenv("JOBSIM_RATE"), 64); err == nil && r != c.Rate {
			continue
		}
		r, err := Run(c)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("\n%s", Markdown([]*Result{r}))
		if ok, why := r.Met(); !ok {
			t.Errorf("%d objects at R=%v: %s", c.Objects, c.Rate, why)
		}
	}
}
