package monitor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/geolocate-aws/geolocate/pkg/geoapi"
)

// readModels lists the models the key sees (public and whitelist ones
// granted to the organisation) and decides whether the configured model is
// available. The returned note explains an unavailable configured model;
// that is the pipeline's problem, not the monitor's, so it is not an error.
func (m *Monitor) readModels(ctx context.Context, key string) (*ModelsReading, string, error) {
	var out *geoapi.ModelsOutput
	err := m.withKey(ctx, key, func(k string) error {
		var err error
		out, err = m.service.Models(ctx, &geoapi.ModelsInput{APIKey: k})
		return err
	})
	publicOnly := geoapi.KeyNotAccepted(err)
	if publicOnly {
		// The service lists models only to callers without a key (its
		// public backend): the public list, which cannot show a whitelist
		// model granted to the account.
		out, err = m.service.Models(ctx, &geoapi.ModelsInput{Anonymous: true})
	}
	if err != nil {
		var layout *geoapi.LayoutError
		if errors.As(err, &layout) {
			return nil, "", fmt.Errorf("model list layout not recognised: no %s (keys seen: %s)",
				layout.Missing, strings.Join(layout.Keys, ", "))
		}
		return nil, "", fmt.Errorf("read model list: %w", err)
	}

	reading := &ModelsReading{ConfiguredModel: m.cfg.ModelID, PublicOnly: publicOnly, Models: make([]ModelState, 0, len(out.Models))}
	for _, model := range out.Models {
		switch model.Status {
		case geoapi.StatusReady:
			reading.Ready++
		case geoapi.StatusDown:
			reading.Down++
		default:
			reading.Unknown++
		}
		reading.Models = append(reading.Models, ModelState{ID: model.ID, Status: string(model.Status)})
	}

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
	return reading, note, nil
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
