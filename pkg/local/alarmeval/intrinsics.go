package alarmeval

import (
	"fmt"
	"strconv"
	"strings"
)

// A synthesized template names other resources through intrinsic functions
// ({"Ref": id}, {"Fn::GetAtt": [id, attr]}) whose values exist only once
// CloudFormation deploys the stack. The evaluator keeps such a value as an
// opaque string, "Ref:<id>" or "GetAtt:<id>.<attr>", so the caller can map
// it to the name a local part uses (see Options.ResolveDimension).

// Reference is a parsed opaque reference.
type Reference struct {
	// Kind is "Ref" or "GetAtt".
	Kind      string
	LogicalID string
	// Attribute is set for GetAtt (e.g. "QueueName").
	Attribute string
}

// String returns the opaque form, e.g. "Ref:Predictor9CBB3B5A".
func (r Reference) String() string {
	if r.Kind == "GetAtt" {
		return "GetAtt:" + r.LogicalID + "." + r.Attribute
	}
	return "Ref:" + r.LogicalID
}

// ParseReference reports whether s is an opaque reference the template
// parser produced, and which.
func ParseReference(s string) (Reference, bool) {
	switch {
	case strings.HasPrefix(s, "Ref:") && len(s) > len("Ref:"):
		return Reference{Kind: "Ref", LogicalID: s[len("Ref:"):]}, true
	case strings.HasPrefix(s, "GetAtt:"):
		id, attr, ok := strings.Cut(s[len("GetAtt:"):], ".")
		if !ok || id == "" || attr == "" {
			return Reference{}, false
		}
		return Reference{Kind: "GetAtt", LogicalID: id, Attribute: attr}, true
	}
	return Reference{}, false
}

// resolveString turns a template value into a string. Plain strings are
// returned as they are; Ref is replaced from refs when it names one
// (pseudo parameters such as AWS::StackName, or template parameters),
// otherwise kept opaque, as is GetAtt; Fn::Join joins its parts. resolved
// is false when any part stayed opaque.
func resolveString(v any, refs map[string]string) (s string, resolved bool, err error) {
	switch v := v.(type) {
	case string:
		return v, true, nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true, nil
	case map[string]any:
		if len(v) != 1 {
			return "", false, fmt.Errorf("an object with %d keys is not an intrinsic function", len(v))
		}
		for fn, arg := range v {
			switch fn {
			case "Ref":
				id, ok := arg.(string)
				if !ok || id == "" {
					return "", false, fmt.Errorf("a Ref of %T, want a logical id", arg)
				}
				if val, ok := refs[id]; ok {
					return val, true, nil
				}
				return Reference{Kind: "Ref", LogicalID: id}.String(), false, nil
			case "Fn::GetAtt":
				id, attr, err := getAttArgs(arg)
				if err != nil {
					return "", false, err
				}
				return Reference{Kind: "GetAtt", LogicalID: id, Attribute: attr}.String(), false, nil
			case "Fn::Join":
				return resolveJoin(arg, refs)
			default:
				return "", false, fmt.Errorf("intrinsic function %s is not supported", fn)
			}
		}
	}
	return "", false, fmt.Errorf("value of type %T is not a string", v)
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
		return "", "", fmt.Errorf("Fn::GetAtt of %v, want [logicalId, attribute]", arg)
	}
	return id, attr, nil
}

func resolveJoin(arg any, refs map[string]string) (string, bool, error) {
	a, ok := arg.([]any)
	if !ok || len(a) != 2 {
		return "", false, fmt.Errorf("Fn::Join of %v, want [separator, [values]]", arg)
	}
	sep, ok := a[0].(string)
	parts, ok2 := a[1].([]any)
	if !ok || !ok2 {
		return "", false, fmt.Errorf("Fn::Join of %v, want [separator, [values]]", arg)
	}
	out := make([]string, len(parts))
	resolved := true
	for i, p := range parts {
		s, r, err := resolveString(p, refs)
		if err != nil {
			return "", false, fmt.Errorf("Fn::Join part %d: %w", i, err)
		}
		out[i] = s
		resolved = resolved && r
	}
	return strings.Join(out, sep), resolved, nil
}

// number reads a template number, which CloudFormation also accepts as a
// numeric string.
func number(v any) (float64, error) {
	switch v := v.(type) {
	case float64:
		return v, nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", v)
		}
		return f, nil
	}
	return 0, fmt.Errorf("value of type %T is not a number", v)
}

// integer reads a template number that must be a positive whole number.
func integer(v any) (int, error) {
	f, err := number(v)
	if err != nil {
		return 0, err
	}
	if f != float64(int(f)) || f < 1 {
		return 0, fmt.Errorf("%v is not a positive integer", f)
	}
	return int(f), nil
}

// boolean reads a template boolean, also accepted as "true"/"false".
func boolean(v any) (bool, error) {
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
