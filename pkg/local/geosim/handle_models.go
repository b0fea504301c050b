package geosim

import (
	"net/http"
	"strings"
)

// ModelsLayout selects the body layout of the model list; the contract does
// not show one, so clients are tested against several.
type ModelsLayout int

// Model list layouts.
const (
	ModelsLayoutNested    ModelsLayout = iota // {"message_code":"success","data":{"models":[...]}} (default)
	ModelsLayoutDataArray                     // {"message_code":"success","data":[...]}
	ModelsLayoutBareArray                     // [...]
	// ModelsLayoutBackend is the public backend's listing (ProfileBackend's
	// default): {"message_code":"SUCCESS","message":...,"data":{"models":
	// [{"model_id","model_type","credits_per_use","access_level","status"}]}}.
	ModelsLayoutBackend
	// ModelsLayoutCatalog is the backend's model catalogue, with an enabled
	// flag and no status: {"message_code":"SUCCESS","data":[{"id","type",
	// "name","version","enabled"}]}.
	ModelsLayoutCatalog
)

// SetModelsLayout changes the model list layout.
func (s *Server) SetModelsLayout(l ModelsLayout) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.modelsLayout = l
}

type modelRecord struct {
	ID             string    `json:"id"`
	Status         string    `json:"status"`
	Access         Access    `json:"access"`
	Type           ModelType `json:"type"`
	CreditsPerCall int       `json:"credits_per_call"`
}

// handleModels serves GET /v1/prediction/models: public models without a
// key, plus the whitelist models granted to the key's organisation with one.
func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	call := Call{Time: s.cfg.Now(), Endpoint: PathModels}
	cw := s.trackCall(w, &call)
	defer cw.commit()
	w = cw
	plan := s.planFaults(PathModels)
	key, ok := s.admit(w, r, &call, plan, true)
	if !ok || !s.injectTransportFaults(w, r, &call, plan, 0) {
		return
	}
	org := ""
	if key != nil {
		org = key.org
	}
	s.mu.Lock()
	records := []modelRecord{}
	for _, m := range s.models {
		if s.visibleLocked(m, org) {
			records = append(records, modelRecord{ID: m.ID, Status: m.Status, Access: m.Access, Type: m.Type, CreditsPerCall: m.Type.Cost()})
		}
	}
	layout := s.modelsLayout
	s.mu.Unlock()

	call.Status = http.StatusOK
	switch layout {
	case ModelsLayoutBackend, ModelsLayoutCatalog:
		list := make([]map[string]any, 0, len(records))
		for _, m := range records {
			if layout == ModelsLayoutCatalog {
				list = append(list, map[string]any{"id": m.ID, "type": m.Type, "name": catalogueName(m.ID),
					"version": catalogueVersion(m.ID), "enabled": m.Status != StatusDown})
				continue
			}
			list = append(list, map[string]any{"model_id": m.ID, "model_type": m.Type, "credits_per_use": m.CreditsPerCall,
				"access_level": m.Access, "status": m.Status})
		}
		var data any = map[string]any{"models": list}
		if layout == ModelsLayoutCatalog {
			data = list
		}
		writeJSON(w, http.StatusOK, map[string]any{"message_code": CodeSuccessBackend, "message": "Operation completed successfully", "data": data})
	case ModelsLayoutDataArray:
		writeJSON(w, http.StatusOK, map[string]any{"message_code": CodeSuccess, "data": records})
	case ModelsLayoutBareArray:
		writeJSON(w, http.StatusOK, records)
	default:
		writeJSON(w, http.StatusOK, map[string]any{"message_code": CodeSuccess, "data": map[string]any{"models": records}})
	}
}

// catalogueName and catalogueVersion split a dotted id such as
// "global_v0.2" into the catalogue's name and version.
func catalogueName(id string) string {
	name, _, _ := strings.Cut(id, "_v")
	return name
}

func catalogueVersion(id string) string {
	_, version, _ := strings.Cut(id, "_v")
	return version
}
