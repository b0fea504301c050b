// Package cfntemplate reads a synthesized CloudFormation template (JSON)
// and resolves its intrinsic functions, once for every local reader: the
// alarm evaluator, the pipes stand-in, the dashboard page, the scenario rig
// and infra's policy tests. It is test tooling and never ships in a Lambda.
//
// The readers differ only in what Ref and Fn::GetAtt give (see Values):
// the rig keeps a resource's reference opaque ("Ref:<id>",
// "GetAtt:<id>.<attr>") and maps it to a local name later, the policy tests
// give the value CloudFormation would give in a fake account. Everything
// else (Fn::Join, Fn::Sub, Fn::Select, Fn::Split, the two forms of
// Fn::GetAtt) is resolved here, the same way for all.
package cfntemplate

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Resource is one entry of a template's Resources.
type Resource struct {
	Type       string         `json:"Type"`
	Properties map[string]any `json:"Properties"`
}

// Template is a synthesized template's resources by logical id.
type Template struct {
	Resources map[string]Resource
}

// Parse reads a template. A resource that is not an object with a Type and
// an object of Properties is an error naming it; every such error is
// reported, not only the first.
func Parse(data []byte) (*Template, error) {
	var doc struct {
		Resources map[string]json.RawMessage `json:"Resources"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse template: %w", err)
	}
	t := &Template{Resources: make(map[string]Resource, len(doc.Resources))}
	var errs []error
	for _, id := range slices.Sorted(maps.Keys(doc.Resources)) {
		var r Resource
		if err := json.Unmarshal(doc.Resources[id], &r); err != nil {
			errs = append(errs, fmt.Errorf("resource %s: %w", id, err))
			continue
		}
		t.Resources[id] = r
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("parse template: %w", err)
	}
	return t, nil
}

// IDs returns the logical ids of the resources of type typ, sorted, so
// every reader walks a template in the same order.
func (t *Template) IDs(typ string) []string {
	var ids []string
	for id, r := range t.Resources {
		if r.Type == typ {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// Lookup returns the resource id when it exists and has type typ.
func (t *Template) Lookup(id, typ string) (Resource, bool) {
	r, ok := t.Resources[id]
	return r, ok && r.Type == typ
}

// Number reads a template number, which CloudFormation also accepts as a
// numeric string.
func Number(v any) (float64, error) {
	switch v := v.(type) {
	case float64:
		return v, nil
	case json.Number:
		return v.Float64()
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", v)
		}
		return f, nil
	}
	return 0, fmt.Errorf("value of type %T is not a number", v)
}

// PositiveInt reads a template number that must be a positive whole number.
func PositiveInt(v any) (int, error) {
	f, err := Number(v)
	if err != nil {
		return 0, err
	}
	if f != float64(int(f)) || f < 1 {
		return 0, fmt.Errorf("%v is not a positive integer", f)
	}
	return int(f), nil
}

// IntOr reads props[name] as a whole number, def when it is absent or not
// a number (the service's default for an unset property).
func IntOr(props map[string]any, name string, def int) int {
	f, err := Number(props[name])
	if err != nil {
		return def
	}
	return int(f)
}

// Bool reads a template boolean, also accepted as "true"/"false".
func Bool(v any) (bool, error) {
	switch v := v.(type) {
	case bool:
		return v, nil
	case string:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("%q is not a boolean", v)
		}
		return b, nil
	}
	return false, fmt.Errorf("value of type %T is not a boolean", v)
}
