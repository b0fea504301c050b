package monitor

import (
	"log/slog"

	"github.com/geolocate-aws/geolocate/pkg/emf"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// metric is one value to emit. ModelID, when set, adds the ModelId
// dimension, JobID the Job dimension; every metric carries Pipeline.
type metric struct {
	Name    string
	Count   bool // unit Count, else None
	Value   float64
	ModelID string
	JobID   string
}

// metricsFor turns a Report into metrics. A figure absent from the Report
// is absent here: a missing metric lets an alarm treat it as missing data
// instead of a made-up zero.
func metricsFor(rep Report) []metric {
	var out []metric
	if r := rep.SummaryReadable; r != nil {
		out = append(out, metric{Name: metricnames.CreditSummaryReadable, Value: boolValue(*r)})
	}
	if c := rep.Credits; c != nil && c.Source == SourceEstimate {
		// Its own name: an alarm or a graph always says which source a
		// figure rests on.
		out = append(out, metric{Name: metricnames.CreditsEstimated, Count: true, Value: c.Remaining})
	} else if c != nil {
		out = append(out, metric{Name: metricnames.CreditsRemaining, Count: true, Value: c.Remaining})
		if c.Subscription != nil {
			out = append(out, metric{Name: metricnames.SubscriptionCredits, Count: true, Value: *c.Subscription})
		}
		if c.TopUp != nil {
			out = append(out, metric{Name: metricnames.TopUpCredits, Count: true, Value: *c.TopUp})
		}
	}
	if f := rep.Forecast; f != nil {
		// A figure the readings do not give is not emitted at all, never as
		// 0: a CreditDaysRemaining of 0 would breach CreditsRunningOut, which
		// treats missing data as "keep the last state".
		if f.BurnPerDay != nil {
			out = append(out, metric{Name: metricnames.CreditBurnPerDay, Count: true, Value: *f.BurnPerDay})
		}
		if f.DaysRemaining != nil {
			out = append(out, metric{Name: metricnames.CreditDaysRemaining, Value: *f.DaysRemaining})
		}
	}
	if mr := rep.Models; mr != nil {
		out = append(out,
			metric{Name: metricnames.ModelsReady, Count: true, Value: float64(mr.Ready)},
			metric{Name: metricnames.ModelsDown, Count: true, Value: float64(mr.Down)},
			metric{Name: metricnames.ModelsUnknown, Count: true, Value: float64(mr.Unknown)},
		)
		if !mr.ConfiguredUnknown {
			out = append(out, metric{Name: metricnames.ConfiguredModelAvailable, Value: boolValue(mr.ConfiguredAvailable)})
		}
		if mr.Watched {
			out = append(out, metric{Name: metricnames.NewModelsAvailable, Count: true, Value: float64(len(mr.New))})
		}
		out = append(out, metric{Name: metricnames.ModelIdsLeftOut, Count: true, Value: float64(mr.LeftOut)})
		for _, model := range mr.Models {
			out = append(out, metric{Name: metricnames.ModelReady, Value: boolValue(model.Status == "ready"), ModelID: model.ID})
		}
	}
	out = append(out, jobMetrics(rep.Jobs)...)
	return append(out, metric{Name: metricnames.MonitorHealthy, Value: boolValue(rep.Healthy)})
}

// jobMetrics are the job figures: JobsRunning and the pipeline's
// JobMinutesSinceProgress on every run that read the jobs (0 without a
// running job, so JobStalled clears when a job ends), and each published
// job's own. A job without an ETA, or held, leaves that figure out.
func jobMetrics(r *JobsReading) []metric {
	if r == nil {
		return nil
	}
	out := []metric{
		{Name: metricnames.JobsRunning, Count: true, Value: float64(r.Running)},
		{Name: metricnames.JobMinutesSinceProgress, Value: r.MinutesSinceProgress},
	}
	for _, j := range r.Jobs {
		out = append(out,
			metric{Name: metricnames.JobObjectsRemaining, Count: true, Value: float64(j.Remaining), JobID: j.ID},
			metric{Name: metricnames.JobObjectsDone, Count: true, Value: float64(j.Done), JobID: j.ID},
			metric{Name: metricnames.JobCreditsSpent, Count: true, Value: float64(j.CreditsSpent), JobID: j.ID},
		)
		if j.ETAHours != nil {
			out = append(out, metric{Name: metricnames.JobEtaHours, Value: *j.ETAHours, JobID: j.ID})
		}
		if j.MinutesSinceProgress != nil {
			out = append(out, metric{Name: metricnames.JobMinutesSinceProgress, Value: *j.MinutesSinceProgress, JobID: j.ID})
		}
	}
	return out
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// emit writes the Report's metrics as Embedded Metric Format lines, every
// one with the Pipeline dimension.
func (m *Monitor) emit(rep Report, log *slog.Logger) error {
	rec := emf.New(m.metrics, m.cfg.Namespace, map[string]string{metricnames.DimPipeline: m.cfg.PipelineName},
		func(o *emf.Options) { o.Logger = log })
	for _, mt := range metricsFor(rep) {
		unit := emf.None
		if mt.Count {
			unit = emf.Count
		}
		switch {
		case mt.ModelID != "":
			rec.Add(mt.Name, unit, mt.Value, emf.Dim{Name: metricnames.DimModelID, Value: mt.ModelID})
			continue
		case mt.JobID != "":
			rec.Add(mt.Name, unit, mt.Value, emf.Dim{Name: metricnames.DimJob, Value: mt.JobID})
			continue
		}
		rec.Add(mt.Name, unit, mt.Value)
	}
	return rec.Flush()
}
