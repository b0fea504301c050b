// Package eventpattern matches JSON events against EventBridge event
// patterns, as EventBridge rules and Pipes filters do. No matcher library
// is served to this project (quamina, the one Go implementation, is not on
// the module proxy here), so this is a small one, enough for the patterns
// the stack synthesizes (the results pipe's filters) and for the rules the
// README shows consumers. A pattern using anything it does not know is
// refused by Compile, never matched approximately: the local rig must not
// pass what AWS would filter out, or the reverse.
//
// Supported: nested objects; lists of exact values (strings, numbers
// compared as numbers, booleans, null); prefix and suffix (also with
// equals-ignore-case), equals-ignore-case, anything-but (a value, a list,
// or a prefix or suffix), exists, numeric ranges, wildcard and $or.
//
// Matching follows EventBridge: every field of the pattern must match; a
// field's list matches when any of its conditions matches the event's
// value, or, for an array value, any of its elements; a field absent from
// the event matches only exists:false (anything-but needs the field).
// It is test tooling and never ships in a Lambda.
package eventpattern

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Pattern is a compiled event pattern.
type Pattern struct {
	root object
}

// object is the pattern of a JSON object: each field matches, and any of
// the $or alternatives (when present) does.
type object struct {
	fields []field
	or     [][]field
}

type field struct {
	name   string
	nested *object     // the field's value is an object pattern
	conds  []condition // or the field's value is a list of conditions
}

// condition matches one leaf value of the event; present is false for a
// field the event does not have.
type condition interface {
	match(v any, present bool) bool
}

// Compile parses an event pattern.
func Compile(pattern []byte) (*Pattern, error) {
	dec := json.NewDecoder(bytes.NewReader(pattern))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("event pattern: not a JSON object: %w", err)
	}
	root, err := compileObject(raw, "")
	if err != nil {
		return nil, fmt.Errorf("event pattern: %w", err)
	}
	return &Pattern{root: root}, nil
}

// PollerFields are the fields of a record that a pipe's poller adds, which
// a pipe's filter cannot use. EventBridge Pipes, event filtering
// (docs.aws.amazon.com/eventbridge/latest/userguide/eb-pipes-event-filtering.html):
// "you can filter based on the fields sent by the source API, and not on
// fields added by the polling operation. The following fields can't be
// used in event patterns: awsRegion, eventSource, eventSourceARN,
// eventVersion, eventID, eventName, invokeIdentityArn, eventSourceKey".
var PollerFields = []string{
	"awsRegion", "eventSource", "eventSourceARN", "eventVersion",
	"eventID", "eventName", "invokeIdentityArn", "eventSourceKey",
}

// DynamoDBStreamField is the one top-level field of a DynamoDB stream
// record a filter may use. Lambda, event filtering with a DynamoDB source
// (docs.aws.amazon.com/lambda/latest/dg/with-ddb-filtering.html):
// "DynamoDB event source mappings only support filtering on the dynamodb
// key"; Pipes says its filtering "works in the same way as filtering on ...
// Lambda event source mapping", so the stricter of the two readings holds.
const DynamoDBStreamField = "dynamodb"

// CompilePipeFilter compiles the filter of a pipe reading a DynamoDB
// stream, as strictly as AWS documents it: a pattern using any top-level
// field but DynamoDBStreamField (PollerFields among them, directly or in a
// top-level $or) is refused, since AWS would refuse it or let nothing pass.
func CompilePipeFilter(pattern []byte) (*Pattern, error) {
	p, err := Compile(pattern)
	if err != nil {
		return nil, err
	}
	names := fieldNames(p.root.fields)
	for _, alt := range p.root.or {
		names = append(names, fieldNames(alt)...)
	}
	for _, name := range names {
		if name == DynamoDBStreamField {
			continue
		}
		if slices.Contains(PollerFields, name) {
			return nil, fmt.Errorf("pipe filter: %q is added by the polling operation and can't be used in a pipe's event pattern", name)
		}
		return nil, fmt.Errorf("pipe filter: %q: a DynamoDB stream's filter may use only the %q key", name, DynamoDBStreamField)
	}
	return p, nil
}

func fieldNames(fields []field) []string {
	out := make([]string, 0, len(fields))
	for _, f := range fields {
		out = append(out, f.name)
	}
	return out
}

// MustCompile is Compile for patterns known to be valid.
func MustCompile(pattern string) *Pattern {
	p, err := Compile([]byte(pattern))
	if err != nil {
		panic(err)
	}
	return p
}

func compileObject(raw map[string]any, path string) (object, error) {
	var o object
	if len(raw) == 0 {
		return o, fmt.Errorf("%s: empty object", orRoot(path))
	}
	for _, name := range sortedKeys(raw) {
		v := raw[name]
		at := path + "." + name
		if name == "$or" {
			alts, ok := v.([]any)
			if !ok || len(alts) < 2 {
				return o, fmt.Errorf("%s: want a list of at least two patterns", at)
			}
			var or [][]field
			for i, alt := range alts {
				m, ok := alt.(map[string]any)
				if !ok {
					return o, fmt.Errorf("%s[%d]: want an object", at, i)
				}
				sub, err := compileObject(m, fmt.Sprintf("%s[%d]", at, i))
				if err != nil {
					return o, err
				}
				if len(sub.or) > 0 {
					return o, fmt.Errorf("%s[%d]: nested $or is not supported", at, i)
				}
				or = append(or, sub.fields)
			}
			o.or = or
			continue
		}
		switch v := v.(type) {
		case map[string]any:
			sub, err := compileObject(v, at)
			if err != nil {
				return o, err
			}
			o.fields = append(o.fields, field{name: name, nested: &sub})
		case []any:
			if len(v) == 0 {
				return o, fmt.Errorf("%s: empty list matches nothing", at)
			}
			conds := make([]condition, 0, len(v))
			for _, c := range v {
				cond, err := compileCondition(c, at)
				if err != nil {
					return o, err
				}
				conds = append(conds, cond)
			}
			o.fields = append(o.fields, field{name: name, conds: conds})
		default:
			return o, fmt.Errorf("%s: want an object or a list, got %v", at, v)
		}
	}
	return o, nil
}

func orRoot(path string) string {
	if path == "" {
		return "pattern"
	}
	return path
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func compileCondition(c any, at string) (condition, error) {
	switch c := c.(type) {
	case nil, string, bool, json.Number:
		return exact{c}, nil
	case map[string]any:
		if len(c) != 1 {
			return nil, fmt.Errorf("%s: a condition object has exactly one operator, got %d", at, len(c))
		}
		for op, arg := range c {
			return compileOperator(op, arg, at)
		}
	}
	return nil, fmt.Errorf("%s: %v is not a condition", at, c)
}

func compileOperator(op string, arg any, at string) (condition, error) {
	at = at + " " + op
	switch op {
	case "prefix", "suffix":
		s, fold, err := affixArg(arg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		return affix{suffix: op == "suffix", s: s, fold: fold}, nil
	case "equals-ignore-case":
		s, ok := arg.(string)
		if !ok {
			return nil, fmt.Errorf("%s: want a string", at)
		}
		return equalFold{s}, nil
	case "exists":
		b, ok := arg.(bool)
		if !ok {
			return nil, fmt.Errorf("%s: want true or false", at)
		}
		return exists{b}, nil
	case "anything-but":
		return compileAnythingBut(arg, at)
	case "numeric":
		return compileNumeric(arg, at)
	case "wildcard":
		s, ok := arg.(string)
		if !ok {
			return nil, fmt.Errorf("%s: want a string", at)
		}
		return compileWildcard(s), nil
	}
	return nil, fmt.Errorf("%s: operator not supported by the local matcher", at)
}

// affixArg reads "x" or {"equals-ignore-case": "x"}.
func affixArg(arg any) (string, bool, error) {
	switch a := arg.(type) {
	case string:
		return a, false, nil
	case map[string]any:
		if s, ok := a["equals-ignore-case"].(string); ok && len(a) == 1 {
			return s, true, nil
		}
	}
	return "", false, errors.New(`want a string or {"equals-ignore-case": string}`)
}

func compileAnythingBut(arg any, at string) (condition, error) {
	switch a := arg.(type) {
	case string, json.Number:
		return anythingBut{not: exact{a}}, nil
	case []any:
		if len(a) == 0 {
			return nil, fmt.Errorf("%s: empty list", at)
		}
		var values anyOf
		for _, v := range a {
			switch v.(type) {
			case string, json.Number:
				values = append(values, exact{v})
			default:
				return nil, fmt.Errorf("%s: want strings or numbers, got %v", at, v)
			}
		}
		return anythingBut{not: values}, nil
	case map[string]any:
		if len(a) != 1 {
			return nil, fmt.Errorf("%s: want one of prefix, suffix or equals-ignore-case", at)
		}
		for op, v := range a {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("%s %s: want a string", at, op)
			}
			switch op {
			case "prefix", "suffix":
				return anythingBut{not: affix{suffix: op == "suffix", s: s}}, nil
			case "equals-ignore-case":
				return anythingBut{not: equalFold{s}}, nil
			}
			return nil, fmt.Errorf("%s %s: not supported", at, op)
		}
	}
	return nil, fmt.Errorf("%s: want a string, a number, a list or an operator", at)
}

func compileNumeric(arg any, at string) (condition, error) {
	list, ok := arg.([]any)
	if !ok || len(list) == 0 || len(list)%2 != 0 || len(list) > 4 {
		return nil, fmt.Errorf("%s: want [op, number] or [op, number, op, number]", at)
	}
	var n numeric
	for i := 0; i < len(list); i += 2 {
		op, ok := list[i].(string)
		num, okNum := list[i+1].(json.Number)
		if !ok || !okNum {
			return nil, fmt.Errorf("%s: want an operator and a number at %d", at, i)
		}
		f, err := num.Float64()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		switch op {
		case "=", "<", "<=", ">", ">=":
		default:
			return nil, fmt.Errorf("%s: operator %q", at, op)
		}
		n = append(n, bound{op: op, v: f})
	}
	return n, nil
}

// Match reports whether event (as decoded by encoding/json, numbers as
// float64 or json.Number) matches the pattern.
func (p *Pattern) Match(event any) bool {
	return p.root.match(event)
}

// MatchJSON decodes event and matches it.
func (p *Pattern) MatchJSON(event []byte) (bool, error) {
	dec := json.NewDecoder(bytes.NewReader(event))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return false, fmt.Errorf("event: %w", err)
	}
	return p.Match(v), nil
}

func (o *object) match(v any) bool {
	m, _ := v.(map[string]any)
	if !matchFields(o.fields, m) {
		return false
	}
	if len(o.or) == 0 {
		return true
	}
	return slices.ContainsFunc(o.or, func(alt []field) bool { return matchFields(alt, m) })
}

// matchFields matches every field against m (nil for an absent object).
func matchFields(fields []field, m map[string]any) bool {
	for _, f := range fields {
		v, present := m[f.name]
		if f.nested != nil {
			if !f.nested.match(v) {
				return false
			}
			continue
		}
		if !matchLeaf(f.conds, v, present) {
			return false
		}
	}
	return true
}

// matchLeaf: any condition matches the value, or any element of an array
// value.
func matchLeaf(conds []condition, v any, present bool) bool {
	values := []any{v}
	if arr, ok := v.([]any); ok && present {
		values = arr
		if len(arr) == 0 {
			// An empty array has no element to match; only exists sees it.
			return slices.ContainsFunc(conds, func(c condition) bool {
				e, ok := c.(exists)
				return ok && e.want
			})
		}
	}
	for _, c := range conds {
		for _, val := range values {
			if c.match(val, present) {
				return true
			}
		}
	}
	return false
}

type exact struct{ v any }

func (e exact) match(v any, present bool) bool {
	if !present {
		return false
	}
	switch want := e.v.(type) {
	case nil:
		return v == nil
	case string:
		s, ok := v.(string)
		return ok && s == want
	case bool:
		b, ok := v.(bool)
		return ok && b == want
	case json.Number:
		f, ok := number(v)
		w, err := want.Float64()
		return ok && err == nil && f == w
	}
	return false
}

// number reads a JSON number of the event.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	case int:
		return float64(n), true
	}
	return 0, false
}

type anyOf []condition

func (a anyOf) match(v any, present bool) bool {
	return slices.ContainsFunc(a, func(c condition) bool { return c.match(v, present) })
}

type affix struct {
	suffix bool
	s      string
	fold   bool
}

func (a affix) match(v any, present bool) bool {
	s, ok := v.(string)
	if !present || !ok {
		return false
	}
	want := a.s
	if a.fold {
		s, want = strings.ToLower(s), strings.ToLower(want)
	}
	if a.suffix {
		return strings.HasSuffix(s, want)
	}
	return strings.HasPrefix(s, want)
}

type equalFold struct{ s string }

func (e equalFold) match(v any, present bool) bool {
	s, ok := v.(string)
	return present && ok && strings.EqualFold(s, e.s)
}

type exists struct{ want bool }

func (e exists) match(_ any, present bool) bool { return present == e.want }

// anythingBut matches a present value the inner condition does not.
type anythingBut struct{ not condition }

func (a anythingBut) match(v any, present bool) bool {
	if !present {
		return false
	}
	// A string condition never matches a number, and the reverse, so a
	// value of the other type is "anything but" it, as in EventBridge.
	return !a.not.match(v, present)
}

type bound struct {
	op string
	v  float64
}

type numeric []bound

func (n numeric) match(v any, present bool) bool {
	f, ok := number(v)
	if !present || !ok || math.IsNaN(f) {
		return false
	}
	for _, b := range n {
		var ok bool
		switch b.op {
		case "=":
			ok = f == b.v
		case "<":
			ok = f < b.v
		case "<=":
			ok = f <= b.v
		case ">":
			ok = f > b.v
		case ">=":
			ok = f >= b.v
		}
		if !ok {
			return false
		}
	}
	return true
}

// wildcard matches a string with * standing for any run of characters;
// \* is a literal asterisk. It reads the pattern by character, not byte:
// the upload rule's raw prefix may be non-ASCII ("été/").
type wildcard struct{ re *regexp.Regexp }

func compileWildcard(w string) wildcard {
	var b strings.Builder
	b.WriteString("^")
	chars := []rune(w)
	for i := 0; i < len(chars); i++ {
		switch {
		case chars[i] == '\\' && i+1 < len(chars):
			i++
			b.WriteString(regexp.QuoteMeta(string(chars[i])))
		case chars[i] == '*':
			b.WriteString("(?s:.*)")
		default:
			b.WriteString(regexp.QuoteMeta(string(chars[i])))
		}
	}
	b.WriteString("$")
	return wildcard{re: regexp.MustCompile(b.String())}
}

func (w wildcard) match(v any, present bool) bool {
	s, ok := v.(string)
	return present && ok && w.re.MatchString(s)
}
