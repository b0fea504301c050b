package geoapi

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
)

// decodeAny decodes JSON keeping numbers as json.Number.
func decodeAny(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// lookup follows a dotted path such as "data.summary.total_available" or
// "items.0.x" (a numeric segment indexes an array).
func lookup(v any, path string) (any, bool) {
	if path == "" {
		return nil, false
	}
	for _, seg := range strings.Split(path, ".") {
		switch node := v.(type) {
		case map[string]any:
			next, ok := node[seg]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(node) {
				return nil, false
			}
			v = node[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// toNumber accepts a JSON number or a numeric string; NaN and infinities
// are refused.
func toNumber(v any) (float64, bool) {
	var f float64
	var err error
	switch n := v.(type) {
	case json.Number:
		f, err = n.Float64()
	case float64:
		f = n
	case string:
		f, err = strconv.ParseFloat(strings.TrimSpace(n), 64)
	default:
		return 0, false
	}
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// maxKeysListed bounds the key list put into a LayoutError.
const maxKeysListed = 60

// keysSeen lists an object's keys as dotted paths, down to depth levels,
// sorted, for error messages that help a user configure a path.
func keysSeen(v any, depth int) []string {
	var keys []string
	var walk func(node any, prefix string, level int)
	walk = func(node any, prefix string, level int) {
		obj, ok := node.(map[string]any)
		if !ok || level > depth {
			return
		}
		for k, child := range obj {
			path := k
			if prefix != "" {
				path = prefix + "." + k
			}
			keys = append(keys, oneLine(path, 100))
			walk(child, path, level+1)
		}
	}
	walk(v, "", 1)
	sort.Strings(keys)
	if len(keys) > maxKeysListed {
		keys = append(keys[:maxKeysListed], "...")
	}
	return keys
}
