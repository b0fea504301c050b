package monitor

import (
	"context"
	"fmt"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
)

// JobLister is the part of *jobs.Store the monitor uses: the newest jobs,
// newest first (jobs.Store.List, bounded).
type JobLister interface {
	List(ctx context.Context) ([]jobs.Job, error)
}

// MaxJobsPublished bounds the jobs a run publishes one by one (the Job
// dimension): the newest running ones. Each job is a handful of custom
// metrics, billed per metric a month; ten cover any operator's parallel
// jobs, and JobsRunning and the pipeline's JobMinutesSinceProgress still
// count every job List returns.
const MaxJobsPublished = 10

// JobsReading is what a run saw of the jobs.
type JobsReading struct {
	// Running counts the jobs listing or feeding (not paused, held by the
	// budget or not).
	Running int `json:"running"`
	// MinutesSinceProgress is the longest any running job that is not
	// held (paused, budget) has gone without progress; 0 when there is
	// none. It is the series JobStalled alarms on.
	MinutesSinceProgress float64 `json:"minutes_since_progress"`
	// Jobs are the newest running jobs, at most MaxJobsPublished.
	Jobs []JobFigures `json:"jobs,omitempty"`
	// LeftOut counts the running jobs beyond MaxJobsPublished.
	LeftOut int `json:"left_out,omitempty"`
}

// JobFigures are one job's published figures.
type JobFigures struct {
	ID           string     `json:"id"`
	State        jobs.State `json:"state"`
	Held         string     `json:"held,omitempty"`
	Remaining    int64      `json:"remaining"`
	Done         int64      `json:"done"`
	CreditsSpent int64      `json:"credits_spent"`
	// ETAHours is absent when the job has no ETA (no rate yet).
	ETAHours *float64 `json:"eta_hours,omitempty"`
	// MinutesSinceProgress is absent for a held job: waiting for the
	// budget's next day is not a stall.
	MinutesSinceProgress *float64 `json:"minutes_since_progress,omitempty"`
}

// running reports whether the feeder is working on j: listing or feeding,
// not paused and not ended.
func running(j jobs.Job) bool {
	return j.State == jobs.StateListing || j.State == jobs.StateRunning
}

// readJobs sums up the jobs of list (newest first) at now.
func readJobs(list []jobs.Job, now time.Time) *JobsReading {
	r := &JobsReading{}
	for _, j := range list {
		if !running(j) {
			continue
		}
		r.Running++
		f := JobFigures{
			ID: j.ID, State: j.State, Held: j.Held,
			Remaining: j.Remaining(), Done: j.Ended(), CreditsSpent: j.CreditsSpent,
		}
		if eta := j.ETA(now); !eta.IsZero() {
			f.ETAHours = ptr(max(eta.Sub(now).Hours(), 0))
		}
		if j.Held == "" {
			stalled := now.Sub(lastProgress(j)).Minutes()
			stalled = max(stalled, 0) // a clock behind the job's writer
			f.MinutesSinceProgress = &stalled
			r.MinutesSinceProgress = max(r.MinutesSinceProgress, stalled)
		}
		if len(r.Jobs) < MaxJobsPublished {
			r.Jobs = append(r.Jobs, f)
		} else {
			r.LeftOut++
		}
	}
	return r
}

// lastProgress is when j last moved: LastProgress, or its creation before
// anything moved.
func lastProgress(j jobs.Job) time.Time {
	if j.LastProgress.After(j.Created) {
		return j.LastProgress
	}
	return j.Created
}

// checkJobs reads the jobs into the report. A failed read makes the run
// unhealthy, as a failed history read does: JobStalled would otherwise
// keep its last state on a monitor that cannot see the jobs.
func (m *Monitor) checkJobs(ctx context.Context, run *runState, now time.Time) {
	list, err := m.jobs.List(ctx)
	if err != nil {
		run.fail("jobs", fmt.Errorf("list jobs: %w", err))
		return
	}
	reading := readJobs(list, now)
	if reading.LeftOut > 0 {
		run.warn("jobs", fmt.Sprintf("%d jobs are running, more than the %d a run publishes one by one: the %d oldest are counted in %s only",
			reading.Running, MaxJobsPublished, reading.LeftOut, "JobsRunning and JobMinutesSinceProgress"))
	}
	run.setJobs(reading)
}
