package monitor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
)

// MaxModelsPublished bounds the model ids one run publishes as ModelId
// dimensions (ModelReady) and compares one by one with the last run's
// (Model Available events). Each distinct ModelId value is a custom metric
// CloudWatch bills on its own (docs/models.md cites the rule), and each new
// id an event: a list of 30,000 ids published whole was 30,001 metrics
// (about $5,000 a month at the tiered prices) and 5,000 ids changing on
// every listing 5,000 events (500 PutEvents calls) a run. 100 is 25 times the largest list seen (4 models
// in the simulator's and the public backend's). A list over it is an
// anomaly: it is still counted (ModelsReady, ...) and its configured model
// judged, but only the ids the pipeline uses are published.
const MaxModelsPublished = 100

// modelList is the whole list a run read: every id, sorted, and each one's
// status, for the counts, the configured model and the model watch.
type modelList struct {
	ids    []string
	status map[string]string
}

// readModels lists the models the key sees (public and whitelist ones
// granted to the organisation) and decides whether the configured model is
// available. The returned note explains an unavailable configured model;
// that is the pipeline's problem, not the monitor's, so it is not an error.
// The reading's Models are left to publish.
func (m *Monitor) readModels(ctx context.Context, key string, log *slog.Logger) (*ModelsReading, *modelList, string, error) {
	withLog := func(o *geoapi.Options) { o.Logger = log }
	var out *geoapi.ModelsOutput
	err := m.withKey(ctx, key, func(k string) error {
		var err error
		out, err = m.service.Models(ctx, &geoapi.ModelsInput{APIKey: k}, withLog)
		return err
	})
	publicOnly := geoapi.KeyNotAccepted(err)
	if publicOnly {
		// The service lists models only to callers without a key (its
		// public backend): the public list, which cannot show a whitelist
		// model granted to the account.
		out, err = m.service.Models(ctx, &geoapi.ModelsInput{Anonymous: true}, withLog)
	}
	if err != nil {
		var layout *geoapi.LayoutError
		if errors.As(err, &layout) {
			return nil, nil, "", fmt.Errorf("model list layout not recognised: no %s (keys seen: %s)",
				layout.Missing, strings.Join(layout.Keys, ", "))
		}
		return nil, nil, "", fmt.Errorf("read model list: %w", err)
	}

	reading := &ModelsReading{ConfiguredModel: m.cfg.ModelID, PublicOnly: publicOnly, Refused: out.Refused}
	list := &modelList{ids: make([]string, 0, len(out.Models)), status: make(map[string]string, len(out.Models))}
	for _, model := range out.Models {
		switch model.Status {
		case geoapi.StatusReady:
			reading.Ready++
		case geoapi.StatusDown:
			reading.Down++
		default:
			reading.Unknown++
		}
		if _, dup := list.status[model.ID]; !dup {
			list.ids = append(list.ids, model.ID)
		}
		list.status[model.ID] = string(model.Status)
	}
	slices.Sort(list.ids)
	reading.Listed = len(list.ids)

	available, note := configuredAvailable(out, m.cfg.ModelID, reading.Ready)
	reading.ConfiguredAvailable = available
	if _, listed := out.Find(m.cfg.ModelID); publicOnly && m.cfg.ModelID != "" && !listed {
		// Absent from the public list: retired, or a whitelist model; the
		// predictor's own 422 tells, and falls back. No figure is better
		// than a wrong one (the alarm keeps its state on missing data).
		reading.ConfiguredUnknown = true
		note = fmt.Sprintf("configured model %s is not in the public model list, the only one the service shows without a key: "+
			"a whitelist model, or retired (the predictor's calls tell; ConfiguredModelAvailable is not published)", m.cfg.ModelID)
	}
	return reading, list, note, nil
}

// publish sets the models the run publishes (reading.Models): every listed
// id when the list holds at most MaxModelsPublished, else only the listed
// ids of used (the configured model, the default model, the models recent
// records ran), at most MaxModelsPublished of them. LeftOut counts the
// rest, with the entries the client refused.
func (r *ModelsReading) publish(list *modelList, used []string) {
	ids := list.ids
	if len(ids) > MaxModelsPublished {
		ids = nil
		for _, id := range used {
			if _, listed := list.status[id]; listed && id != "" && !slices.Contains(ids, id) && len(ids) < MaxModelsPublished {
				ids = append(ids, id)
			}
		}
	}
	r.Models = make([]ModelState, 0, len(ids))
	for _, id := range ids {
		r.Models = append(r.Models, ModelState{ID: id, Status: list.status[id]})
	}
	r.LeftOut = len(list.ids) - len(ids) + r.Refused
}

// configuredAvailable implements ConfiguredModelAvailable. With a configured
// model id: available when it is listed and ready; an absent id is retired
// (the list is the source of truth for ids) or not granted to this key.
// Without one, predictions go to the service's default global model, which
// the list does not mark, so the default path counts as available when at
// least one listed model is ready.
func configuredAvailable(out *geoapi.ModelsOutput, modelID string, ready int) (bool, string) {
	if modelID == "" {
		if ready == 0 {
			return false, "no model is ready, so the default model path is unavailable"
		}
		return true, ""
	}
	model, ok := out.Find(modelID)
	switch {
	case !ok:
		return false, fmt.Sprintf("configured model %s is not in the model list: retired (or not granted to this key)", modelID)
	case model.Status != geoapi.StatusReady:
		return false, fmt.Sprintf("configured model %s is %s, not ready", modelID, model.Status)
	}
	return true, ""
}
