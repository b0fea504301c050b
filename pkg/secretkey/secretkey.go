// Package secretkey supplies the service's API key: from AWS Secrets
// Manager, cached and rotation-aware, or a static value for local runs.
//
// Keys are secret: no error or log of this package ever contains one.
package secretkey

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Provider hands out the current API key.
type Provider interface {
	// Key returns the key, from a cache where there is one.
	Key(ctx context.Context) (string, error)
	// Refresh re-reads the key bypassing any cache, e.g. after the service
	// answered 401 because the key was regenerated.
	Refresh(ctx context.Context) (string, error)
}

// KeyPrefix starts every key of the service.
const KeyPrefix = "geo_"

var (
	// ErrEmptySecret means the secret (or its key field) is empty.
	ErrEmptySecret = errors.New("secret holds no API key")
	// ErrKeyFormat means the secret holds something that is not a key.
	ErrKeyFormat = errors.New("secret does not hold a " + KeyPrefix + " API key")
)

// jsonKeyFields are the fields a JSON secret may keep the key in, in order
// of preference.
var jsonKeyFields = []string{"api_key", "key", "apiKey", "GEO_API_KEY"}

// Parse extracts and validates the key from a secret value: the bare key,
// a JSON string, or a JSON object with the key in one of the fields
// api_key, key, apiKey or GEO_API_KEY. Errors never contain the value.
func Parse(secret string) (string, error) {
	s := strings.TrimSpace(secret)
	switch {
	case strings.HasPrefix(s, "{"):
		var fields map[string]any
		if json.Unmarshal([]byte(s), &fields) != nil {
			return "", fmt.Errorf("%w: secret looks like JSON but does not parse", ErrKeyFormat)
		}
		found := false
		for _, name := range jsonKeyFields {
			v, ok := fields[name]
			if !ok {
				continue
			}
			str, isString := v.(string)
			if !isString {
				return "", fmt.Errorf("%w: JSON field %s is not a string", ErrKeyFormat, name)
			}
			found = true
			if s = strings.TrimSpace(str); s != "" {
				break
			}
		}
		if !found {
			return "", fmt.Errorf("%w: JSON secret has none of the fields %s", ErrKeyFormat, strings.Join(jsonKeyFields, ", "))
		}
	case strings.HasPrefix(s, `"`):
		var str string
		if json.Unmarshal([]byte(s), &str) != nil {
			return "", fmt.Errorf("%w: secret looks like a JSON string but does not parse", ErrKeyFormat)
		}
		s = strings.TrimSpace(str)
	}
	if s == "" {
		return "", ErrEmptySecret
	}
	if !strings.HasPrefix(s, KeyPrefix) || len(s) == len(KeyPrefix) {
		return "", ErrKeyFormat
	}
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return "", fmt.Errorf("%w: key contains whitespace or control characters", ErrKeyFormat)
	}
	return s, nil
}

// Static returns a Provider of a fixed key (GEO_API_KEY for local runs, and
// tests). The key is validated on use; Refresh returns the same key.
func Static(key string) Provider { return staticProvider{key: key} }

type staticProvider struct{ key string }

func (p staticProvider) Key(context.Context) (string, error) {
	key, err := Parse(p.key)
	if err != nil {
		return "", fmt.Errorf("static API key: %w", err)
	}
	return key, nil
}

func (p staticProvider) Refresh(ctx context.Context) (string, error) { return p.Key(ctx) }
