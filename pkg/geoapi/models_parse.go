package geoapi

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// MaxModelIDBytes bounds a model id: the predictor keeps a model id to the
// same length (MaxResultText), and real ids are a few dozen bytes. A longer
// id is refused: left out of the list and counted.
const MaxModelIDBytes = MaxResultText

// maxRefusedExamples bounds the refused entries a list names.
const maxRefusedExamples = 3

// modelList is a parsed model list: the models read, and the entries left
// out (an id over MaxModelIDBytes, a record without an id).
type modelList struct {
	models   []Model
	refused  int
	examples []string
}

func (l *modelList) refuse(what string) {
	l.refused++
	if len(l.examples) < maxRefusedExamples {
		l.examples = append(l.examples, what)
	}
}

// add reads one entry, refusing it when it has no usable id.
func (l *modelList) add(raw json.RawMessage, keyID, where string) error {
	m, err := parseModel(raw, keyID)
	if err != nil {
		l.refuse(fmt.Sprintf("%s: %v", where, err))
		return err
	}
	if len(m.ID) > MaxModelIDBytes {
		l.refuse(fmt.Sprintf("%s: id of %d bytes (%s…), more than %d", where, len(m.ID), oneLine(m.ID, 32), MaxModelIDBytes))
		return nil
	}
	l.models = append(l.models, m)
	return nil
}

// parseModels finds the model list in any of the layouts seen in practice:
// a bare array, {"data":[...]}, {"data":{"models":[...]}}, {"models":[...]},
// or an object keyed by model id at any of those places. An entry that
// cannot be read is left out and counted, so one strange entry does not
// hide the others; a list none of whose entries has an id is a
// *LayoutError.
func parseModels(body []byte) (*modelList, error) {
	var root json.RawMessage
	if err := json.Unmarshal(body, &root); err != nil {
		return nil, err
	}
	list, keyed, ok := findModelList(root, 0)
	if !ok {
		return nil, &LayoutError{Missing: "model list", Keys: topLevelKeys(root)}
	}
	out := &modelList{models: make([]Model, 0, len(list)+len(keyed))}
	var firstErr error
	for i, raw := range list {
		if err := out.add(raw, "", fmt.Sprintf("entry %d", i)); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("model id in entry %d (%v)", i, err)
		}
	}
	ids := make([]string, 0, len(keyed))
	for id := range keyed {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := out.add(keyed[id], id, fmt.Sprintf("record %q", oneLine(id, 32))); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("model record for %q (%v)", oneLine(id, 64), err)
		}
	}
	if firstErr != nil && len(out.models) == 0 {
		return nil, &LayoutError{Missing: firstErr.Error(), Keys: topLevelKeys(root)}
	}
	return out, nil
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
