package pipes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Substitution is how a string value is put inside a quoted placeholder.
// AWS documents both readings: a rule's input transformer "doesn't escape
// values extracted by Input Path", while Pipes only says it "replaces input
// transformers at runtime to ensure a valid JSON output". The rig plays
// either, so a template is tested under both.
type Substitution int

const (
	// Escaped writes the value JSON-escaped (Pipes' likely behaviour).
	Escaped Substitution = iota
	// Verbatim writes the value's text as is (rules' documented behaviour):
	// a `"` or `\` in it breaks the JSON, and an absent value, whose
	// rendering AWS leaves open ("that variable isn't created"), is an
	// error rather than a guess.
	Verbatim
)

// Template is a parsed Pipes input template: text with <$.json.path> and
// <aws.pipes.*> placeholders.
//
// What AWS documents, and what this renderer does: a placeholder inside a
// JSON string ("<$.a>") is replaced by the value's text, escaped for the
// string; one outside quotes (<$.a>) by the value as JSON (a string quoted,
// an object or array as is). What AWS does not document is a path the event
// lacks: EventBridge's input transformer leaves such a variable out ("it
// isn't created and won't appear in the output") and LocalStack's Pipes
// emulation renders it empty, so inside quotes it renders as the empty
// string here, while outside quotes it is an error: the output would not be
// JSON, and a template relying on it is refused locally before AWS sends
// its events to the dead-letter queue.
type Template struct {
	text  string
	parts []part
	// json says the template is a JSON document (it starts with { or [),
	// whose output must be valid JSON.
	json bool
}

type part struct {
	literal string
	// A placeholder: a JSON path or a reserved variable.
	path     []step
	variable string
	quoted   bool
	raw      string // the placeholder as written, for errors
}

// step is one object key or one array index of a path.
type step struct {
	key   string
	index int
	isIdx bool
}

// ParseTemplate parses an input template.
func ParseTemplate(text string) (*Template, error) {
	t := &Template{text: text}
	trimmed := strings.TrimSpace(text)
	t.json = strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[")
	var lit strings.Builder
	inString := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if t.json && c == '\\' && inString && i+1 < len(text) {
			lit.WriteByte(c)
			lit.WriteByte(text[i+1])
			i++
			continue
		}
		if t.json && c == '"' {
			inString = !inString
		}
		if c == '<' && (strings.HasPrefix(text[i+1:], "$") || strings.HasPrefix(text[i+1:], "aws.")) {
			end := strings.IndexByte(text[i:], '>')
			if end < 0 {
				return nil, fmt.Errorf("input template: placeholder at %d is not closed", i)
			}
			raw := text[i+1 : i+end]
			p := part{raw: raw, quoted: inString || !t.json}
			if strings.HasPrefix(raw, "$") {
				path, err := parsePath(raw)
				if err != nil {
					return nil, fmt.Errorf("input template: <%s>: %w", raw, err)
				}
				p.path = path
			} else {
				p.variable = raw
			}
			if lit.Len() > 0 {
				t.parts = append(t.parts, part{literal: lit.String()})
				lit.Reset()
			}
			t.parts = append(t.parts, p)
			i += end
			continue
		}
		lit.WriteByte(c)
	}
	if lit.Len() > 0 {
		t.parts = append(t.parts, part{literal: lit.String()})
	}
	return t, nil
}

// parsePath reads $, $.a.b, $.a[0].b (dot notation and indices; wildcards
// and filters are not supported).
func parsePath(p string) ([]step, error) {
	if p == "$" {
		return nil, nil
	}
	if !strings.HasPrefix(p, "$.") && !strings.HasPrefix(p, "$[") {
		return nil, errors.New("a JSON path starts with $. or $[")
	}
	var steps []step
	rest := p[1:]
	for rest != "" {
		switch rest[0] {
		case '.':
			rest = rest[1:]
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			key := rest[:end]
			if key == "" || strings.Contains(key, "*") {
				return nil, fmt.Errorf("key %q is not supported", key)
			}
			if n, err := strconv.Atoi(key); err == nil && n >= 0 {
				steps = append(steps, step{key: key, index: n, isIdx: true})
			} else {
				steps = append(steps, step{key: key})
			}
			rest = rest[end:]
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, errors.New("[ without ]")
			}
			n, err := strconv.Atoi(rest[1:end])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("index %q is not supported", rest[1:end])
			}
			steps = append(steps, step{index: n, isIdx: true, key: rest[1:end]})
			rest = rest[end+1:]
		default:
			return nil, fmt.Errorf("unexpected %q", rest[0])
		}
	}
	return steps, nil
}

// Lookup returns the value at a JSON path of event (decoded by
// encoding/json), and whether it exists.
func Lookup(event any, path string) (any, bool, error) {
	steps, err := parsePath(path)
	if err != nil {
		return nil, false, err
	}
	v, ok := lookup(event, steps)
	return v, ok, nil
}

func lookup(v any, steps []step) (any, bool) {
	for _, s := range steps {
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[s.key]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			if !s.isIdx || s.index >= len(c) {
				return nil, false
			}
			v = c[s.index]
		default:
			return nil, false
		}
	}
	return v, true
}

// Render fills the template from event with Escaped substitution; vars
// holds the reserved variables (aws.pipes.pipe-name, ...). The output of a
// JSON template is checked to be valid JSON.
func (t *Template) Render(event any, vars map[string]string) ([]byte, error) {
	return t.RenderAs(event, vars, Escaped)
}

// RenderAs is Render with the given substitution of quoted strings.
func (t *Template) RenderAs(event any, vars map[string]string, mode Substitution) ([]byte, error) {
	var out bytes.Buffer
	for _, p := range t.parts {
		if p.path == nil && p.variable == "" && p.raw == "" {
			out.WriteString(p.literal)
			continue
		}
		var v any
		var ok bool
		if p.variable != "" {
			var s string
			s, ok = vars[p.variable]
			v = s
			if p.variable == "aws.pipes.event" || p.variable == "aws.pipes.event.json" {
				v, ok = event, true
			}
		} else {
			v, ok = lookup(event, p.path)
		}
		if err := writeValue(&out, v, ok, p, t.json, mode); err != nil {
			return nil, err
		}
	}
	if t.json && !json.Valid(out.Bytes()) {
		return nil, fmt.Errorf("input template: the output is not valid JSON: %s", out.String())
	}
	return out.Bytes(), nil
}

func writeValue(out *bytes.Buffer, v any, ok bool, p part, jsonTemplate bool, mode Substitution) error {
	if !ok {
		if p.quoted && mode == Escaped {
			return nil // absent: the empty string
		}
		if p.quoted {
			return fmt.Errorf("input template: <%s> is not in the event, and AWS does not say what a quoted placeholder then becomes", p.raw)
		}
		return fmt.Errorf("input template: <%s> is not in the event and stands outside quotes, so the output would not be JSON", p.raw)
	}
	s, isString := v.(string)
	if !p.quoted || !isString {
		raw, err := marshal(v)
		if err != nil {
			return fmt.Errorf("input template: <%s>: %w", p.raw, err)
		}
		if !p.quoted {
			out.Write(raw)
			return nil
		}
		s = string(raw)
	}
	if !jsonTemplate || mode == Verbatim {
		out.WriteString(s)
		return nil
	}
	quoted, err := marshal(s)
	if err != nil {
		return fmt.Errorf("input template: <%s>: %w", p.raw, err)
	}
	out.Write(quoted[1 : len(quoted)-1])
	return nil
}

// marshal is json.Marshal without HTML escaping, as AWS writes JSON.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
