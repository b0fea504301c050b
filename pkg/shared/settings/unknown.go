package settings

import (
	"fmt"
	"strings"
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

// closestKey is the setting's key nearest to key by edit distance (case
// ignored, a swap of two letters counting as one edit), if it is within a
// third of key's length: a typo, not a different word.
func closestKey(key string) string {
	best, bestDist := "", len(key)/3+1
	for _, s := range table {
		if d := editDistance(strings.ToLower(key), strings.ToLower(s.Key)); d < bestDist {
			best, bestDist = s.Key, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of adjacent bytes.
func editDistance(a, b string) int {
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
