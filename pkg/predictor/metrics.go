package predictor

import (
	"io"
	"log/slog"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/emf"
	"github.com/geolocate-aws/geolocate/pkg/shared/metricnames"
)

// Metric names, shortened for readability at the call sites.
const (
	metricImagesSucceeded   = metricnames.ImagesSucceeded
	metricImagesRejected    = metricnames.ImagesRejected
	metricImagesFailed      = metricnames.ImagesFailed
	metricCreditsConsumed   = metricnames.CreditsConsumed
	metricServiceLatency    = metricnames.ServiceLatency
	metricRateLimited       = metricnames.RateLimited
	metricDuplicatesSkipped = metricnames.DuplicatesSkipped
	metricModelFallbacks    = metricnames.ModelFallbacks
	metricOutOfCredits      = metricnames.OutOfCredits
	metricBudgetDeferred    = metricnames.BudgetDeferred
	metricImagesRetried     = metricnames.ImagesRetried
	metricDeadLettered      = metricnames.ImagesDeadLettered
	metricCreditsInvalid    = metricnames.CreditFiguresInvalid
)

// metrics collects one invocation's figures in Embedded Metric Format,
// written once when the invocation ends.
type metrics struct {
	rec *emf.Recorder
}

func newMetrics(w io.Writer, namespace, pipeline string, logger *slog.Logger) *metrics {
	return &metrics{rec: emf.New(w, namespace, map[string]string{metricnames.DimPipeline: pipeline},
		func(o *emf.Options) { o.Logger = logger })}
}

func (m *metrics) count(name string) { m.add(name, 1) }

func (m *metrics) add(name string, n float64) { m.rec.Add(name, emf.Count, n) }

// countReason counts name both in total and by reason, so alarms watch the
// total and dashboards break it down.
func (m *metrics) countReason(name, reason string) {
	m.rec.Add(name, emf.Count, 1)
	m.rec.Add(name, emf.Count, 1, emf.Dim{Name: metricnames.DimReason, Value: reason})
}

// succeeded counts a recorded result in total and by the model that ran
// (ModelId, "default" when the service did not say): the dashboard's
// models in use over time. The model ids are the service's list, a
// handful, so the dimension's cardinality (and its cost: one custom
// metric per id) stays small.
func (m *metrics) succeeded(modelID string) {
	m.rec.Add(metricImagesSucceeded, emf.Count, 1)
	m.rec.Add(metricImagesSucceeded, emf.Count, 1, emf.Dim{Name: metricnames.DimModelID, Value: modelOrDefault(modelID)})
}

func (m *metrics) millis(name string, d time.Duration) {
	m.rec.Add(name, emf.Milliseconds, float64(d.Microseconds())/1000)
}

func (m *metrics) flush() error { return m.rec.Flush() }
