package cfntemplate

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Reference is a value known only once CloudFormation deploys the stack,
// kept opaque: {"Ref": id} or {"Fn::GetAtt": [id, attr]}.
type Reference struct {
	// Kind is "Ref" or "GetAtt".
	Kind      string
	LogicalID string
	// Attribute is set for GetAtt (e.g. "QueueName").
	Attribute string
}

// Ref and GetAtt build references.
func Ref(id string) Reference { return Reference{Kind: "Ref", LogicalID: id} }

// GetAtt is the reference to attribute attr of resource id.
func GetAtt(id, attr string) Reference {
	return Reference{Kind: "GetAtt", LogicalID: id, Attribute: attr}
}

// String returns the opaque form, "Ref:<id>" or "GetAtt:<id>.<attr>"; the
// rig maps it to a local name (see ParseReference).
func (r Reference) String() string {
	if r.Kind == "GetAtt" {
		return "GetAtt:" + r.LogicalID + "." + r.Attribute
	}
	return "Ref:" + r.LogicalID
}

// ParseReference reports whether s is an opaque reference (Reference.String)
// and which.
func ParseReference(s string) (Reference, bool) {
	switch {
	case strings.HasPrefix(s, "Ref:") && len(s) > len("Ref:"):
		return Ref(s[len("Ref:"):]), true
	case strings.HasPrefix(s, "GetAtt:"):
		id, attr, ok := strings.Cut(s[len("GetAtt:"):], ".")
		if !ok || id == "" || attr == "" {
			return Reference{}, false
		}
		return GetAtt(id, attr), true
	}
	return Reference{}, false
}

// Partial is a string built around references (an Fn::Join or Fn::Sub
// with a Ref inside), each written in its opaque form.
type Partial string

// Values says what Ref and Fn::GetAtt give. A value may be a Reference,
// which the resolver then carries as opaque.
type Values interface {
	Ref(name string) (any, error)
	GetAtt(id, attr string) (any, error)
}

// KeepReferences gives Known[name] for a Ref it knows (pseudo parameters
// such as AWS::StackName, template parameters) and keeps every other Ref
// and every GetAtt as a Reference.
type KeepReferences struct {
	Known map[string]string
}

// Ref implements Values.
func (k KeepReferences) Ref(name string) (any, error) {
	if v, ok := k.Known[name]; ok {
		return v, nil
	}
	return Ref(name), nil
}

// GetAtt implements Values.
func (k KeepReferences) GetAtt(id, attr string) (any, error) { return GetAtt(id, attr), nil }

// Resolver replaces a template value's intrinsic functions by their values.
type Resolver struct {
	values Values
}

// NewResolver returns a resolver that takes Ref and Fn::GetAtt from values.
func NewResolver(values Values) *Resolver { return &Resolver{values: values} }

// Keeping is the resolver of the local rig: known Refs replaced, other
// references kept opaque (see KeepReferences).
func Keeping(known map[string]string) *Resolver {
	return NewResolver(KeepReferences{Known: known})
}

// Resolve returns v with every intrinsic function replaced by its value,
// in lists and objects too. A value known only once deployed is a
// Reference, a string around one a Partial. Fn::If is refused: the
// project's templates have no Conditions, and a reader that guessed one
// would be wrong silently.
func (r *Resolver) Resolve(v any) (any, error) {
	switch v := v.(type) {
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			rv, err := r.Resolve(e)
			if err != nil {
				return nil, err
			}
			out[i] = rv
		}
		return out, nil
	case map[string]any:
		if len(v) == 1 {
			for fn, arg := range v {
				if fn == "Ref" || strings.HasPrefix(fn, "Fn::") {
					return r.intrinsic(fn, arg)
				}
			}
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			rv, err := r.Resolve(e)
			if err != nil {
				return nil, err
			}
			out[k] = rv
		}
		return out, nil
	}
	return v, nil
}

// String resolves v to a string: a number is written as CloudFormation
// reads it, a reference in its opaque form. resolved is false when any
// part stayed opaque.
func (r *Resolver) String(v any) (s string, resolved bool, err error) {
	rv, err := r.Resolve(v)
	if err != nil {
		return "", false, err
	}
	s, resolved, ok := text(rv)
	if !ok {
		return "", false, fmt.Errorf("%s is %s, not a string", asJSON(v), kind(rv))
	}
	return s, resolved, nil
}

// text is a resolved scalar as a string; ok is false for a list, an
// object, a boolean or null.
func text(v any) (s string, resolved, ok bool) {
	switch v := v.(type) {
	case string:
		return v, true, true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true, true
	case json.Number:
		return v.String(), true, true
	case Reference:
		return v.String(), false, true
	case Partial:
		return string(v), false, true
	}
	return "", false, false
}

func kind(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	case nil:
		return "null"
	}
	return fmt.Sprintf("a %T", v)
}

func (r *Resolver) intrinsic(fn string, arg any) (any, error) {
	switch fn {
	case "Ref":
		name, ok := arg.(string)
		if !ok || name == "" {
			return nil, fmt.Errorf("Ref of %s, want a logical id", asJSON(arg))
		}
		return r.values.Ref(name)
	case "Fn::GetAtt":
		id, attr, err := getAttArgs(arg)
		if err != nil {
			return nil, err
		}
		return r.values.GetAtt(id, attr)
	case "Fn::Join":
		return r.join(arg)
	case "Fn::Select":
		return r.selectOne(arg)
	case "Fn::Split":
		return r.split(arg)
	case "Fn::Sub":
		return r.sub(arg)
	}
	return nil, fmt.Errorf("intrinsic function %s is not supported", fn)
}

// getAttArgs accepts both forms of GetAtt: [id, attr] and "id.attr".
func getAttArgs(arg any) (id, attr string, err error) {
	switch a := arg.(type) {
	case []any:
		if len(a) == 2 {
			id, _ = a[0].(string)
			attr, _ = a[1].(string)
		}
	case string:
		id, attr, _ = strings.Cut(a, ".")
	}
	if id == "" || attr == "" {
		return "", "", fmt.Errorf("Fn::GetAtt of %s, want [logicalId, attribute]", asJSON(arg))
	}
	return id, attr, nil
}

// pair reads the two-element argument of fn.
func pair(fn string, arg any, want string) (any, any, error) {
	a, ok := arg.([]any)
	if !ok || len(a) != 2 {
		return nil, nil, fmt.Errorf("%s of %s, want %s", fn, asJSON(arg), want)
	}
	return a[0], a[1], nil
}

// joined returns s as a string, or a Partial when a part stayed opaque.
func joined(s string, resolved bool) any {
	if resolved {
		return s
	}
	return Partial(s)
}

func (r *Resolver) join(arg any) (any, error) {
	sepArg, listArg, err := pair("Fn::Join", arg, "[separator, [values]]")
	if err != nil {
		return nil, err
	}
	sep, ok := sepArg.(string)
	if !ok {
		return nil, fmt.Errorf("Fn::Join separator %s is not a string", asJSON(sepArg))
	}
	items, err := r.Resolve(listArg)
	if err != nil {
		return nil, err
	}
	list, ok := items.([]any)
	if !ok {
		return nil, fmt.Errorf("Fn::Join of %s, want [separator, [values]]", asJSON(arg))
	}
	parts := make([]string, len(list))
	all := true
	for i, e := range list {
		s, resolved, ok := text(e)
		if !ok {
			return nil, fmt.Errorf("Fn::Join part %d is %s, not a string", i, kind(e))
		}
		parts[i], all = s, all && resolved
	}
	return joined(strings.Join(parts, sep), all), nil
}

func (r *Resolver) selectOne(arg any) (any, error) {
	idxArg, listArg, err := pair("Fn::Select", arg, "[index, [values]]")
	if err != nil {
		return nil, err
	}
	idx, err := r.Resolve(idxArg)
	if err != nil {
		return nil, err
	}
	n, err := Number(idx)
	if err != nil || n != float64(int(n)) {
		return nil, fmt.Errorf("Fn::Select index %s is not a whole number", asJSON(idx))
	}
	items, err := r.Resolve(listArg)
	if err != nil {
		return nil, err
	}
	list, ok := items.([]any)
	if i := int(n); ok && i >= 0 && i < len(list) {
		return list[i], nil
	}
	return nil, fmt.Errorf("Fn::Select %v of %s: no such item", n, asJSON(items))
}

func (r *Resolver) split(arg any) (any, error) {
	sepArg, strArg, err := pair("Fn::Split", arg, "[separator, string]")
	if err != nil {
		return nil, err
	}
	sep, ok := sepArg.(string)
	if !ok || sep == "" {
		return nil, fmt.Errorf("Fn::Split separator %s is not a non-empty string", asJSON(sepArg))
	}
	s, resolved, err := r.String(strArg)
	if err != nil {
		return nil, fmt.Errorf("Fn::Split: %w", err)
	}
	// Splitting an opaque form would cut the reference's text, not the
	// value CloudFormation would split.
	if !resolved {
		return nil, fmt.Errorf("Fn::Split of %s, known only once deployed", s)
	}
	var out []any
	for _, p := range strings.Split(s, sep) {
		out = append(out, p)
	}
	return out, nil
}

var subVariable = regexp.MustCompile(`\$\{([^}]*)\}`)

// sub plays Fn::Sub: ${name} is a variable of the map, else a Ref;
// ${id.attr} a GetAtt; ${!text} the literal ${text}.
func (r *Resolver) sub(arg any) (any, error) {
	var tmpl string
	vars := map[string]any{}
	switch a := arg.(type) {
	case string:
		tmpl = a
	case []any:
		if len(a) != 2 {
			return nil, fmt.Errorf("Fn::Sub of %s, want a string or [string, {variables}]", asJSON(arg))
		}
		tmpl, _ = a[0].(string)
		m, ok := a[1].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("Fn::Sub variables %s are not an object", asJSON(a[1]))
		}
		vars = m
	default:
		return nil, fmt.Errorf("Fn::Sub of %s, want a string or [string, {variables}]", asJSON(arg))
	}
	var firstErr error
	all := true
	out := subVariable.ReplaceAllStringFunc(tmpl, func(m string) string {
		name := m[2 : len(m)-1]
		if strings.HasPrefix(name, "!") {
			return "${" + name[1:] + "}"
		}
		var v any
		var err error
		if e, ok := vars[name]; ok {
			v, err = r.Resolve(e)
		} else if id, attr, ok := strings.Cut(name, "."); ok {
			v, err = r.values.GetAtt(id, attr)
		} else {
			v, err = r.values.Ref(name)
		}
		if err == nil {
			s, resolved, ok := text(v)
			if ok {
				all = all && resolved
				return s
			}
			err = fmt.Errorf("Fn::Sub variable %s is %s, not a string", name, kind(v))
		}
		if firstErr == nil {
			firstErr = err
		}
		return m
	})
	if firstErr != nil {
		return nil, firstErr
	}
	return joined(out, all), nil
}

// Opaque renders a value as the rig keeps it: a string as itself, a Ref or
// Fn::GetAtt in its opaque form, a string built around references with
// them in their opaque form, anything else (a number, a list) as its JSON.
func Opaque(v any) string {
	if rv, err := Keeping(nil).Resolve(v); err == nil {
		if s, _, ok := text(rv); ok {
			if _, isNum := rv.(float64); !isNum {
				return s
			}
		}
	}
	return asJSON(v)
}

// RefID is the logical id a Ref or Fn::GetAtt points at, "" for any other
// value.
func RefID(v any) string {
	m, _ := v.(map[string]any)
	if len(m) != 1 {
		return ""
	}
	if id, ok := m["Ref"].(string); ok {
		return id
	}
	if att, ok := m["Fn::GetAtt"]; ok {
		id, _, _ := getAttArgs(att)
		return id
	}
	return ""
}

func asJSON(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(raw)
}
