package geosim

import (
	"fmt"
	"slices"
)

// ModelType is a model's kind, which sets its cost and result shape.
type ModelType string

// Model types of the contract, named as the public backend names them.
const (
	TypeGlobal       ModelType = "global"
	TypeHighAccuracy ModelType = "accuracy"
	TypeVehicleID    ModelType = "cars"
	TypeProperty     ModelType = "property"
)

// Cost is the credits one prediction with the type costs (contract table).
func (t ModelType) Cost() int {
	switch t {
	case TypeGlobal:
		return 1
	case TypeHighAccuracy, TypeProperty:
		return 3
	case TypeVehicleID:
		return 2
	}
	return 0
}

// Access is a model's access class.
type Access string

// Access classes of the contract.
const (
	AccessPublic    Access = "public"
	AccessWhitelist Access = "whitelist" // granted to specific organisations
)

// Model serving status values of the contract.
const (
	StatusReady   = "ready"
	StatusDown    = "down"
	StatusUnknown = "unknown"
)

// Model is one entry of the catalogue.
type Model struct {
	ID      string
	Type    ModelType
	Access  Access
	Status  string // StatusReady, StatusDown or StatusUnknown
	Retired bool   // absent from the list; predict answers 422 naming it
	// TruthPull, 0 to 1, is how far towards a file's true position
	// (SetTruth) the model moves its top answer: 0 answers from the file's
	// hash alone, 1 answers the true position (truth.go).
	TruthPull float64
}

// Ids of the default catalogue, dotted as the public backend's are.
const (
	ModelGlobalDefault = "global_v0.2"   // default global model, public
	ModelHighAccuracy  = "madrid_v0.1"   // high accuracy, public
	ModelPropertyWL    = "property_v0.1" // property, whitelist, granted to Config.Org
	ModelVehicle       = "cars_v0.1"     // vehicle id, public
	ModelRetired       = "global_v0.1"   // retired global model
)

func defaultCatalogue() []Model {
	return []Model{
		{ID: ModelGlobalDefault, Type: TypeGlobal, Access: AccessPublic, Status: StatusReady},
		{ID: ModelHighAccuracy, Type: TypeHighAccuracy, Access: AccessPublic, Status: StatusReady},
		{ID: ModelPropertyWL, Type: TypeProperty, Access: AccessWhitelist, Status: StatusReady},
		{ID: ModelVehicle, Type: TypeVehicleID, Access: AccessPublic, Status: StatusReady},
		{ID: ModelRetired, Type: TypeGlobal, Access: AccessPublic, Status: StatusReady, Retired: true},
	}
}

// AddModel adds m to the catalogue, or replaces the model with the same id.
func (s *Server) AddModel(m Model) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.Status == "" {
		m.Status = StatusReady
	}
	if m.Access == "" {
		m.Access = AccessPublic
	}
	if i := s.modelIndexLocked(m.ID); i >= 0 {
		s.models[i] = m
		return
	}
	s.models = append(s.models, m)
}

// Models returns the whole catalogue, retired models included.
func (s *Server) Models() []Model {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.models)
}

// SetModelStatus sets a model's serving status.
func (s *Server) SetModelStatus(id, status string) error {
	return s.editModel(id, func(m *Model) { m.Status = status })
}

// RetireModel removes id from the model list; predict with it answers 422.
func (s *Server) RetireModel(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id == s.defaultModel {
		return fmt.Errorf("retire model %s: it is the default model; SetDefaultModel first", id)
	}
	i := s.modelIndexLocked(id)
	if i < 0 {
		return fmt.Errorf("retire model %s: unknown model", id)
	}
	s.models[i].Retired = true
	return nil
}

// SetDefaultModel routes predictions without model_id to id, which must be a
// served global model (as a new default model version would be).
func (s *Server) SetDefaultModel(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.modelIndexLocked(id)
	if i < 0 || s.models[i].Retired || s.models[i].Type != TypeGlobal {
		return fmt.Errorf("set default model %s: not a served global model", id)
	}
	s.defaultModel = id
	return nil
}

// DefaultModelID is the model that runs when model_id is omitted.
func (s *Server) DefaultModelID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.defaultModel
}

// GrantModel gives org access to a whitelist model.
func (s *Server) GrantModel(org, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.modelIndexLocked(id) < 0 {
		return fmt.Errorf("grant model %s to %s: unknown model", id, org)
	}
	s.accountLocked(org).granted[id] = true
	return nil
}

func (s *Server) editModel(id string, edit func(*Model)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.modelIndexLocked(id)
	if i < 0 {
		return fmt.Errorf("edit model %s: unknown model", id)
	}
	edit(&s.models[i])
	return nil
}

func (s *Server) modelIndexLocked(id string) int {
	return slices.IndexFunc(s.models, func(m Model) bool { return m.ID == id })
}

// visibleLocked reports whether org (empty: no key) may see and use m.
func (s *Server) visibleLocked(m Model, org string) bool {
	if m.Retired {
		return false
	}
	if m.Access == AccessPublic {
		return true
	}
	a, ok := s.accounts[org]
	return ok && a.granted[m.ID]
}
