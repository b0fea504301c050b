package geoapi

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// parseModels finds the model list in any of the layouts seen in practice:
// a bare array, {"data":[...]}, {"data":{"models":[...]}}, {"models":[...]},
// or an object keyed by model id at any of those places.
func parseModels(body []byte) ([]Model, error) {
	var root json.RawMessage
	if err := json.Unmarshal(body, &root); err != nil {
		return nil, err
	}
	list, keyed, ok := findModelList(root, 0)
	if !ok {
		return nil, &LayoutError{Missing: "model list", Keys: topLevelKeys(root)}
	}
	models := make([]Model, 0, len(list)+len(keyed))
	for i, raw := range list {
		m, err := parseModel(raw, "")
		if err != nil {
			return nil, &LayoutError{Missing: fmt.Sprintf("model id in entry %d (%v)", i, err), Keys: topLevelKeys(root)}
		}
		models = append(models, m)
	}
	ids := make([]string, 0, len(keyed))
	for id := range keyed {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		m, err := parseModel(keyed[id], id)
		if err != nil {
			return nil, &LayoutError{Missing: fmt.Sprintf("model record for %q (%v)", oneLine(id, 64), err), Keys: topLevelKeys(root)}
		}
		models = append(models, m)
	}
	return models, nil
}

// findModelList descends through "models" and "data" wrappers to an array,
// or to an object whose values are all objects (keyed by model id).
func findModelList(raw json.RawMessage, depth int) ([]json.RawMessage, map[string]json.RawMessage, bool) {
	if depth > 3 {
		return nil, nil, false
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil && list != nil {
		return list, nil, true
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return nil, nil, false
	}
	for _, wrapper := range []string{"models", "data"} {
		if inner, ok := obj[wrapper]; ok {
			if l, k, ok := findModelList(inner, depth+1); ok {
				return l, k, true
			}
		}
	}
	if depth > 0 && len(obj) > 0 && allObjects(obj) {
		return nil, obj, true
	}
	return nil, nil, false
}

func allObjects(obj map[string]json.RawMessage) bool {
	for _, v := range obj {
		var m map[string]json.RawMessage
		if json.Unmarshal(v, &m) != nil || m == nil {
			return false
		}
	}
	return true
}

// parseModel reads one record. A bare string is taken as an id. keyID is
// the object key the record was found under, used when it has no id field.
func parseModel(raw json.RawMessage, keyID string) (Model, error) {
	if s := rawString(raw); s != "" {
		return Model{ID: s, Status: StatusUnknown, Raw: raw}, nil
	}
	var rec map[string]json.RawMessage
	if err := json.Unmarshal(raw, &rec); err != nil || rec == nil {
		return Model{}, fmt.Errorf("not an object")
	}
	m := Model{Raw: raw}
	m.ID = firstString(rec, "id", "model_id", "name")
	if m.ID == "" {
		m.ID = keyID
	}
	if m.ID == "" {
		return Model{}, fmt.Errorf("no id, model_id or name")
	}
	m.StatusRaw = firstString(rec, "status", "state", "health")
	m.Status = normaliseStatus(m.StatusRaw)
	if m.StatusRaw == "" {
		// A layout with an enabled flag and no status (the backend's model
		// catalogue): a disabled model is not served, so down; an enabled
		// one is served, so ready. StatusRaw says it was derived.
		var enabled bool
		if json.Unmarshal(rec["enabled"], &enabled) == nil && rec["enabled"] != nil {
			m.Status, m.StatusRaw = StatusDown, "disabled"
			if enabled {
				m.Status, m.StatusRaw = StatusReady, "enabled"
			}
		}
	}
	m.AccessClass = firstString(rec, "access", "access_class", "access_level", "class", "visibility")
	m.Type = firstString(rec, "type", "model_type")
	if rawString(rec["id"]) != "" || rawString(rec["model_id"]) != "" {
		m.Name = rawString(rec["name"]) // otherwise the name is the id
	}
	m.Version = firstString(rec, "version")
	// A listed cost sets what a reprocess run reserves a call: one that
	// no call can be charged is left out, as a cost not listed.
	if n := rawInt(rec["credits_per_use"], rec["credits_per_call"], rec["credits"]); n != nil && *n >= 0 && *n <= MaxCreditsConsumed {
		m.CreditsPerUse = n
	}
	return m, nil
}

func firstString(rec map[string]json.RawMessage, keys ...string) string {
	for _, k := range keys {
		if s := rawString(rec[k]); s != "" {
			return s
		}
	}
	return ""
}

func normaliseStatus(raw string) ModelStatus {
	switch ModelStatus(strings.ToLower(strings.TrimSpace(raw))) {
	case StatusReady:
		return StatusReady
	case StatusDown:
		return StatusDown
	}
	return StatusUnknown
}

// topLevelKeys lists the keys of a JSON object, sorted; none for other values.
func topLevelKeys(raw json.RawMessage) []string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return nil
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, oneLine(k, 100))
	}
	sort.Strings(keys)
	if len(keys) > maxKeysListed {
		keys = append(keys[:maxKeysListed], "...")
	}
	return keys
}
