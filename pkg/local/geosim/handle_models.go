package geosim

import "net/http"

// ModelsLayout selects the body layout of the model list; the contract does
// not show one, so clients are tested against several.
type ModelsLayout int

// Model list layouts.
const (
	ModelsLayoutNested    ModelsLayout = iota // {"message_code":"success","data":{"models":[...]}} (default)
	ModelsLayoutDataArray                     // {"message_code":"success","data":[...]}
	ModelsLayoutBareArray                     // [...]
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
	case ModelsLayoutDataArray:
		writeJSON(w, http.StatusOK, map[string]any{"message_code": CodeSuccess, "data": records})
	case ModelsLayoutBareArray:
		writeJSON(w, http.StatusOK, records)
	default:
		writeJSON(w, http.StatusOK, map[string]any{"message_code": CodeSuccess, "data": map[string]any{"models": records}})
	}
}
