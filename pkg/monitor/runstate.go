package monitor

import (
	"log/slog"
	"slices"
	"sync"
)

// runState collects what the concurrent checks of one run found. Each
// problem is logged once, where it is found, with the step that failed.
type runState struct {
	log *slog.Logger

	mu  sync.Mutex
	rep Report
}

func (r *runState) fail(step string, err error) {
	r.log.Error("monitor check failed", "step", step, "reason", err.Error())
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.Reasons = append(r.rep.Reasons, step+": "+err.Error())
}

func (r *runState) warn(step, msg string) {
	r.log.Warn("monitor check", "step", step, "note", msg)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.Warnings = append(r.rep.Warnings, step+": "+msg)
}

func (r *runState) setCreditNote(note string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.CreditNote = note
}

func (r *runState) setSummaryReadable(ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.SummaryReadable = &ok
}

func (r *runState) setCredits(c *CreditsReading) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.Credits = c
}

func (r *runState) setForecast(f *ForecastResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.Forecast = f
}

func (r *runState) setModels(m *ModelsReading) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.Models = m
}

func (r *runState) setJobs(j *JobsReading) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.Jobs = j
}

// report returns the run's Report once every check has finished.
func (r *runState) report() Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := r.rep
	// The checks run concurrently; sort so the same problems read the same.
	rep.Reasons = slices.Sorted(slices.Values(rep.Reasons))
	rep.Warnings = slices.Sorted(slices.Values(rep.Warnings))
	rep.Healthy = len(rep.Reasons) == 0
	return rep
}
