package settings

import (
	"fmt"
	"strings"

	"github.com/geolocate-aws/geolocate/pkg/shared/didyoumean"
)

// cdkContextKeys are the CDK's own context keys without a ":" or a
// leading "@": the notices acknowledged (cdk acknowledge) and the CLI's
// telemetry choice, which the CLI writes into cdk.json.
var cdkContextKeys = map[string]bool{"acknowledged-issue-numbers": true, "cli-telemetry": true}

// IsCDKContextKey reports a key the CDK itself puts in the context: feature
// flags (@aws-cdk/...), its own settings (aws:cdk:...) and the lookups it
// caches in cdk.context.json (availability-zones:account=...:region=...),
// all of which hold a ":" or start with "@".
func IsCDKContextKey(key string) bool {
	return strings.HasPrefix(key, "@") || strings.Contains(key, ":") || cdkContextKeys[key]
}

// Unknown refuses each of keys (a context's keys) that no setting declares
// and the CDK does not own, naming the closest setting when one is near: a
// misspelled -c alarmEmial=... would otherwise be ignored without a word.
func Unknown(keys []string) []error {
	var errs []error
	for _, key := range keys {
		if _, ok := ByKey(key); ok || IsCDKContextKey(key) {
			continue
		}
		if near := closestKey(key); near != "" {
			errs = append(errs, fmt.Errorf("unknown setting %s; did you mean %s?", key, near))
		} else {
			errs = append(errs, fmt.Errorf("unknown setting %s; the settings are listed in docs/configuration.md", key))
		}
	}
	return errs
}

// closestKey is the setting's key nearest to key, if key looks like a typo
// of it (didyoumean.Closest).
func closestKey(key string) string {
	keys := make([]string, len(table))
	for i, s := range table {
		keys[i] = s.Key
	}
	return didyoumean.Closest(key, keys)
}
