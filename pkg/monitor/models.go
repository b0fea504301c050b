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
	if err != nil {
		var layout *geoapi.LayoutError
		if errors.As(err, &layout) {
			return nil, "", fmt.Errorf("model list layout not recognised: no %s (keys seen: %s)",
				layout.Missing, strings.Join(layout.Keys, ", "))
		}
		return nil, "", fmt.Errorf("read model list: %w", err)
	}

	reading := &ModelsReading{ConfiguredModel: m.cfg.ModelID, Models: make([]ModelState, 0, len(out.Models))}
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
