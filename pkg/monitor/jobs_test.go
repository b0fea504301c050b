package monitor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/jobs"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// jobList is a JobLister over fixed jobs (newest first) or an error.
type jobList struct {
	jobs []jobs.Job
	err  error
}

func (l *jobList) List(context.Context) ([]jobs.Job, error) { return l.jobs, l.err }

// jobsHarness is the harness with a job lister.
func jobsHarness(t *testing.T, l JobLister) *harness {
	t.Helper()
	_, url := newSim(t)
	h := newHarness(t, url, testConfig(), nil)
	h.mon.jobs = l
	return h
}

func TestJobFigures(t *testing.T) {
	at := func(d time.Duration) time.Time { return t0.Add(-d) }
	list := &jobList{jobs: []jobs.Job{
		// Newest first, as jobs.Store.List returns them.
		{ID: "j-20261122-done01", State: jobs.StateDone, Created: at(time.Hour), Updated: at(time.Minute), Listed: 5, Done: 5},
		{ID: "j-20261122-paused", State: jobs.StatePaused, Held: jobs.HeldPaused, Created: at(2 * time.Hour), LastProgress: at(2 * time.Hour), Listed: 50},
		// Listing for 45 minutes without anything ending: the stalled one.
		{ID: "j-20261122-listng", State: jobs.StateListing, Created: at(45 * time.Minute), Listed: 20,
			Spec: jobs.Spec{Kind: jobs.KindBackfill, RatePerMinute: 20}},
		// Waiting for the budget's next day: not a stall, however long.
		{ID: "j-20261122-budget", State: jobs.StateRunning, Held: jobs.HeldBudget, Created: at(5 * time.Hour), LastProgress: at(3 * time.Hour),
			Listed: 100, Done: 40, ListingDone: true, Spec: jobs.Spec{Kind: jobs.KindBackfill, RatePerMinute: 10}},
		{ID: "j-20261122-runnin", State: jobs.StateRunning, Created: at(2 * time.Hour), LastProgress: at(10 * time.Minute),
			Listed: 1000, Done: 300, Failed: 10, Skipped: 5, CreditsSpent: 300, ListingDone: true, FeedRate: 26.6,
			Spec: jobs.Spec{Kind: jobs.KindReprocess, RatePerMinute: 30}},
	}}
	h := jobsHarness(t, list)
	rep, pts := h.run(t)
	if !rep.Healthy {
		t.Fatalf("unhealthy: %v", rep.Reasons)
	}

	// Listing and running jobs count, held ones included; paused and done
	// ones do not.
	pts.want(t, metricnames.JobsRunning, 3)
	// The slowest unheld running job: 45 minutes, not the budget's 3 hours.
	pts.want(t, metricnames.JobMinutesSinceProgress, 45)

	job := func(id string) []string { return []string{metricnames.DimJob, id} }
	pts.want(t, metricnames.JobObjectsRemaining, 685, job("j-20261122-runnin")...)
	pts.want(t, metricnames.JobObjectsDone, 315, job("j-20261122-runnin")...)
	pts.want(t, metricnames.JobCreditsSpent, 300, job("j-20261122-runnin")...)
	pts.want(t, metricnames.JobMinutesSinceProgress, 10, job("j-20261122-runnin")...)
	// 685 objects at the 26.6 a minute the feeder last fed it at, as
	// jobs.Job.ETA computes it.
	wantETA := list.jobs[4].ETA(t0).Sub(t0).Hours()
	if math.Abs(wantETA-685/26.6/60) > 0.001 {
		t.Fatalf("the job's own ETA is %v h, want about %v", wantETA, 685/26.6/60)
	}
	pts.want(t, metricnames.JobEtaHours, wantETA, job("j-20261122-runnin")...)

	pts.want(t, metricnames.JobMinutesSinceProgress, 45, job("j-20261122-listng")...)
	pts.want(t, metricnames.JobObjectsRemaining, 20, job("j-20261122-listng")...)
	pts.want(t, metricnames.JobObjectsRemaining, 60, job("j-20261122-budget")...)
	if _, ok := pts.find(metricnames.JobMinutesSinceProgress, pipelineDims(job("j-20261122-budget")...)); ok {
		t.Error("a job held by the budget published its minutes since progress")
	}
	for _, id := range []string{"j-20261122-done01", "j-20261122-paused"} {
		for _, pt := range pts {
			if pt.Dims[metricnames.DimJob] == id {
				t.Errorf("job %s (not running) published %s", id, pt.Name)
			}
		}
	}
	if rep.Jobs == nil || len(rep.Jobs.Jobs) != 3 || rep.Jobs.Jobs[0].ID != "j-20261122-listng" {
		t.Errorf("report's jobs = %+v, want the three running ones, newest first", rep.Jobs)
	}
}

// TestJobFiguresWithoutRunningJobs: with no running job the pipeline's
// figures are 0, not missing, so JobStalled clears when the last job ends.
func TestJobFiguresWithoutRunningJobs(t *testing.T) {
	h := jobsHarness(t, &jobList{jobs: []jobs.Job{
		{ID: "j-20261122-cancel", State: jobs.StateCancelled, Created: t0.Add(-3 * time.Hour)},
	}})
	rep, pts := h.run(t)
	if !rep.Healthy {
		t.Fatalf("unhealthy: %v", rep.Reasons)
	}
	pts.want(t, metricnames.JobsRunning, 0)
	pts.want(t, metricnames.JobMinutesSinceProgress, 0)
	pts.wantAbsent(t, metricnames.JobObjectsRemaining, metricnames.JobObjectsDone, metricnames.JobCreditsSpent, metricnames.JobEtaHours)
}

// TestJobFiguresAtMostTheNewestTen: every running job counts, and only the
// newest MaxJobsPublished are published one by one.
func TestJobFiguresAtMostTheNewestTen(t *testing.T) {
	var list []jobs.Job
	for i := range MaxJobsPublished + 3 {
		list = append(list, jobs.Job{ID: fmt.Sprintf("j-20261122-job%03d", i), State: jobs.StateRunning,
			// Newest first; the oldest has gone longest without progress.
			Created: t0.Add(-time.Duration(i+1) * time.Minute), Listed: 10})
	}
	h := jobsHarness(t, &jobList{jobs: list})
	rep, pts := h.run(t)
	pts.want(t, metricnames.JobsRunning, float64(len(list)))
	// The pipeline's figure covers the jobs left out too.
	pts.want(t, metricnames.JobMinutesSinceProgress, float64(len(list)))
	published := map[string]bool{}
	for _, pt := range pts {
		if id := pt.Dims[metricnames.DimJob]; id != "" {
			published[id] = true
		}
	}
	if len(published) != MaxJobsPublished || !published[list[0].ID] || published[list[MaxJobsPublished].ID] {
		t.Errorf("published jobs %v, want the %d newest", published, MaxJobsPublished)
	}
	if !rep.Healthy || !strings.Contains(strings.Join(rep.Warnings, "\n"), "jobs: 13 jobs are running") {
		t.Errorf("healthy %v, warnings %v: want healthy, with a warning naming the 13 jobs", rep.Healthy, rep.Warnings)
	}
}

// TestJobFiguresUnreadable: a failed listing makes the run unhealthy
// (MonitorHeartbeat) and publishes no job figure, not a made-up 0 that
// would clear JobStalled.
func TestJobFiguresUnreadable(t *testing.T) {
	h := jobsHarness(t, &jobList{err: errors.New("throttled")})
	rep, pts := h.run(t)
	if rep.Healthy || !strings.Contains(strings.Join(rep.Reasons, "\n"), "jobs: list jobs: throttled") {
		t.Errorf("healthy %v, reasons %v: want unhealthy for the jobs", rep.Healthy, rep.Reasons)
	}
	pts.wantAbsent(t, metricnames.JobsRunning, metricnames.JobMinutesSinceProgress)
	pts.want(t, metricnames.MonitorHealthy, 0)
}

// TestJobFiguresWithoutTheKey: the jobs are the table's, so their figures
// are published when the key cannot be read.
func TestJobFiguresWithoutTheKey(t *testing.T) {
	h := jobsHarness(t, &jobList{jobs: []jobs.Job{
		{ID: "j-20261122-runnin", State: jobs.StateRunning, Created: t0.Add(-40 * time.Minute), Listed: 3},
	}})
	h.keys.err = errSecretsDown
	rep, pts := h.run(t)
	if rep.Healthy {
		t.Error("healthy without the key")
	}
	pts.want(t, metricnames.JobsRunning, 1)
	pts.want(t, metricnames.JobMinutesSinceProgress, 40)
}
